"""``complexir run``'s search engine and embedding store options (``complexir.systems.kinds`` builds the model
they make).

Engines: ``local`` (default) is the streaming exact search in this process; ``ray`` spreads its corpus batches
over Ray actors; ``mteb`` is MTEB's own in-memory search. A searcher or a cross-encoder runs in this process
(``local`` and ``mteb`` alike; ``ray`` refuses them, ``complexir.systems.kinds``). Dense encoders encode through the
content-addressed embedding store: ``--cache DIR`` keeps it for later runs (and must be a folder every Ray worker
can reach); without it the run uses a temporary store, so a text shared by tasks is still encoded once per run.
"""

from __future__ import annotations

import argparse

from complexir.systems.options import ENGINES


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

