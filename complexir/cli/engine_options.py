"""``complexir run``'s search engine and embedding store options, and the model they make for ``mteb.evaluate``.

Engines: ``local`` (default) is the streaming exact search in this process; ``ray`` spreads its corpus batches
over Ray actors; ``mteb`` is MTEB's own in-memory search. All three encode through the content-addressed
embedding store: ``--cache DIR`` keeps it for later runs (and must be a folder every Ray worker can reach);
without it the run uses a temporary store, so a text shared by tasks is still encoded once per run.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

ENGINES = ("local", "ray", "mteb")


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="embedding store: vectors keyed by model, revision, max length, prompt and text, shared "
                             "by every task and run (default: a temporary store for this run)")
    parser.add_argument("--engine", choices=ENGINES, default="local",
                        help="local: streaming exact search in this process (default); ray: the same on Ray actors; "
                             "mteb: MTEB's own in-memory search")
    parser.add_argument("--address", default=None,
                        help="--engine ray: the Ray cluster to join (default: start a local Ray)")
    parser.add_argument("--workers", type=int, default=None,
                        help="--engine ray: encoder actors (default: one per GPU, else 2 CPU workers)")
    parser.add_argument("--gpus-per-worker", type=float, default=0.0,
                        help="--engine ray: GPUs per actor (default: 1 where the cluster has GPUs, else 0)")
    parser.add_argument("--batch-docs", type=int, default=None,
                        help="--engine local/ray: documents per corpus batch (shard) (default: 8192)")


@dataclass
class SearchSetup:
    """What ``complexir run`` hands to ``mteb.evaluate`` and what it reports afterwards."""

    model: Any  # the model for mteb.evaluate
    stored: Any  # the StoredEncoder (its counts)
    search: Any | None = None  # the StreamingSearch, for engines local and ray
    engine: Any | None = None
    _temporary: Path | None = field(default=None, repr=False)

    @property
    def streams_corpus(self) -> bool:
        """Whether tasks should hand the model their corpus shards instead of loading the corpus: the streaming
        search reads them batch by batch. Not with ``--engine mteb`` (MTEB's search wants the loaded corpus) nor
        ``--long-docs chunk`` (its wrapper cuts the documents of the loaded corpus into windows, in this process)."""
        return self.search is not None

    def store_summary(self) -> str:
        return self.stored.counts.summary()

    def close(self) -> None:
        if self.engine is not None and hasattr(self.engine, "shutdown"):
            self.engine.shutdown()
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)


def build_search(args: argparse.Namespace, encoder: Any, *, long_docs: bool) -> SearchSetup:
    """The model to evaluate: ``encoder`` over the embedding store, searched by the chosen engine.

    With ``long_docs`` the long-document wrapper does its own streaming search, so only ``mteb``/``local``
    apply (both mean: that wrapper in this process).
    """
    from complexir.embedding_store import EmbeddingStore
    from complexir.stored_encoder import StoredEncoder

    if args.engine == "ray" and args.address and not args.cache:
        raise ValueError("--engine ray --address needs --cache DIR on a file system every worker reaches")
    temporary = None
    if args.cache:
        root = Path(args.cache).expanduser()
    else:
        temporary = root = Path(tempfile.mkdtemp(prefix="complexir-store-"))
    logger.info("embedding store: %s", root)
    stored = StoredEncoder(encoder, EmbeddingStore(root))
    if long_docs or args.engine == "mteb":
        if long_docs and args.engine == "ray":
            raise ValueError("--long-docs chunk runs in this process; it cannot be combined with --engine ray")
        return SearchSetup(model=stored, stored=stored, _temporary=temporary)

    from complexir.streaming_search import DEFAULT_BATCH_DOCS, LocalEngine, StreamingSearch

    engine: Any
    if args.engine == "ray":
        from complexir.ray_engine import RayEngine, StoredModelSpec

        spec = StoredModelSpec(store=str(root), model=args.model, max_seq_length=args.max_seq_length,
                               model_name=args.model_name, backend=args.backend)
        engine = RayEngine(spec, address=args.address, workers=args.workers, gpus_per_worker=args.gpus_per_worker)
    else:
        engine = LocalEngine()
    search = StreamingSearch(stored, engine=engine, batch_docs=args.batch_docs or DEFAULT_BATCH_DOCS)
    return SearchSetup(model=search, stored=stored, search=search, engine=engine, _temporary=temporary)
