"""The streaming search's batches spread over Ray actors: one encoder per actor (one per GPU where there are GPUs).

The driver reads the corpus batch by batch (``CorpusSource``), hands each batch ("shard") to an idle actor, and
merges the per-query candidates the actors send back into the exact top-k (``streaming_search.TopK``), so the
ranking is the same as the in-process engine's. At most two shards per actor are in flight, so the driver's
memory is bounded by a few batches whatever the corpus. Actors encode through the shared embedding store: a
shard an actor finished is never encoded again, even when it is retried or another run asks for it. A shard
whose actor dies is re-run by Ray on the restarted actor, and a shard that raises is retried on another actor, up
to ``max_retries`` times each.

Ray is an optional dependency (``pip install 'complexir[ray]'``); with no ``address`` a local Ray is started.
"""

from __future__ import annotations

import logging
import os
import resource
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from complexir.systems.streaming_search import BatchContext, CorpusSource, ShardProgress, TopK, score_batch

if TYPE_CHECKING:
    from mteb.models import EncoderProtocol

    from complexir.systems.options import Backend

logger = logging.getLogger(__name__)

MAX_IN_FLIGHT_PER_WORKER = 2


@dataclass(frozen=True)
class StoredModelSpec:
    """A picklable recipe for the encoder each actor builds: a model (as ``complexir run`` loads it) over the
    embedding store at ``store``. ``trust_remote_code`` travels with it: a worker refuses a model that ships its own
    code unless the driver was given the opt-in; ``prompts`` are (prompt type, text) pairs."""

    store: str
    model: str | None = None
    max_seq_length: int | None = None
    model_name: str | None = None
    backend: Backend = "torch"
    trust_remote_code: bool = False
    prompts: tuple[tuple[str, str], ...] = ()

    def build(self) -> EncoderProtocol:
        from complexir.systems.embedding_store import EmbeddingStore
        from complexir.systems.models import load_model
        from complexir.systems.stored_encoder import StoredEncoder

        base = load_model(self.model, max_seq_length=self.max_seq_length, model_name=self.model_name,
                          backend=self.backend, trust_remote_code=self.trust_remote_code,
                          prompts=dict(self.prompts) or None)
        return StoredEncoder(base, EmbeddingStore(self.store))


class EncoderActor:
    """Holds one encoder; scores the shards it is given."""

    def __init__(self, spec: Any):
        self.encoder = spec.build()

    def score(self, table: Any, ctx: BatchContext) -> tuple[Any, Any]:
        from complexir.systems.stored_encoder import StoreCounts

        counts = getattr(self.encoder, "counts", None)
        if counts is not None:
            self.encoder.counts = StoreCounts()  # this shard's counts only, sent back with its candidates
        candidates = score_batch(self.encoder, table, ctx)
        return candidates, getattr(self.encoder, "counts", None)

    def peak_rss_bytes(self) -> tuple[int, int]:
        """(pid, peak resident set size in bytes) of this actor's process."""
        return os.getpid(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class RayEngine:
    """Streaming search engine on Ray actors. ``spec.build()`` runs in each actor to make its encoder."""

    name = "ray"

    def __init__(self, spec: Any, *, address: str | None = None, workers: int | None = None,
                 gpus_per_worker: float = 0.0, max_retries: int = 3, object_store_bytes: int = 256 * 1024 ** 2):
        self.spec = spec
        self.address = address
        self.workers = workers
        self.gpus_per_worker = gpus_per_worker
        self.max_retries = max_retries
        self.object_store_bytes = object_store_bytes
        self.actors: list[Any] = []
        self.retried_shards = 0

    def _start(self) -> None:
        import ray

        if self.actors:
            return
        if not ray.is_initialized():
            if self.address:
                ray.init(address=self.address, log_to_driver=False)
            else:  # a local Ray for this run: no dashboard, a small object store (shards are small)
                cpus = max(self.workers or 2, 1)
                ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                         object_store_memory=self.object_store_bytes,
                         runtime_env={"env_vars": {"TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}})
        gpus = int(ray.cluster_resources().get("GPU", 0))
        gpus_per_worker = self.gpus_per_worker or (1.0 if gpus else 0.0)
        workers = self.workers or (int(gpus // gpus_per_worker) if gpus_per_worker else 2)
        if workers < 1:
            raise ValueError(f"no Ray worker fits: {gpus} GPU(s) in the cluster, {gpus_per_worker} per worker")
        # A dead actor is restarted and its in-flight shards re-run by Ray itself (max_task_retries); an error
        # raised by a shard is retried by `search` on another actor.
        remote = ray.remote(EncoderActor).options(num_cpus=1, num_gpus=gpus_per_worker, max_restarts=self.max_retries,
                                                  max_task_retries=self.max_retries)
        self.actors = [remote.remote(self.spec) for _ in range(workers)]
        logger.info("Ray engine: %d worker(s), %s GPU(s) each", workers, gpus_per_worker)

    def search(self, encoder: EncoderProtocol, source: CorpusSource, ctx: BatchContext, *, batch_docs: int,
               progress: bool = True) -> TopK:
        import ray
        from ray.exceptions import RayError

        self._start()
        merged = TopK(len(ctx.query_embeddings), ctx.top_k)
        ctx_ref = ray.put(ctx)
        shards = -(-source.num_rows // batch_docs)
        bar = ShardProgress(shards, source.num_rows, f"{ctx.task_metadata.name} (ray, {len(self.actors)} workers)",
                            progress)
        pending: dict[Any, tuple[Any, int, int]] = {}  # ref → (shard table, actor index, attempts)
        idle = list(range(len(self.actors))) * MAX_IN_FLIGHT_PER_WORKER

        def submit(table: Any, attempts: int, avoid: int | None = None) -> None:
            actor = idle.pop(next((i for i, a in enumerate(idle) if a != avoid), 0))
            pending[self.actors[actor].score.remote(table, ctx_ref)] = (table, actor, attempts)

        def collect_one() -> None:
            done, _ = ray.wait(list(pending), num_returns=1)
            ref = done[0]
            table, actor, attempts = pending.pop(ref)
            idle.append(actor)
            try:
                candidates, counts = ray.get(ref)
            except RayError as err:
                if attempts >= self.max_retries:
                    raise RuntimeError(f"shard of {table.num_rows} documents starting at id "
                                       f"{table.column('id')[0]} failed {attempts + 1} times") from err
                logger.warning("Ray worker failed on a shard (%s); retrying it", type(err).__name__)
                self.retried_shards += 1
                submit(table, attempts + 1, avoid=actor)
                return
            merged.add(candidates)
            if counts is not None and hasattr(encoder, "counts"):
                encoder.counts.absorb(counts)  # the run's totals include what the workers encoded and served
            bar.advance(table.num_rows)

        try:
            for table in source.batches(batch_docs):
                while not idle:
                    collect_one()
                submit(table, 0)
            while pending:
                collect_one()
        finally:
            bar.close()
        return merged

    def worker_peak_rss(self) -> list[tuple[int, int]]:
        """(pid, peak RSS bytes) of every worker process."""
        import ray

        return ray.get([a.peak_rss_bytes.remote() for a in self.actors])

    def shutdown(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if not self.address and ray.is_initialized():
            ray.shutdown()

