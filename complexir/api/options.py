"""The options the Python API takes: one frozen dataclass per command, with the command line's defaults.

``complexir run`` parses its flags into :class:`RunOptions`, ``compare`` into :class:`CompareOptions`, ``fuse``
into :class:`FuseOptions`; a notebook builds them directly (or passes their fields as keywords to
``complexir.run`` / ``compare`` / ``fuse``). Sequences are tuples, so an options object is hashable and cannot
change under a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from complexir.runs.fusion import DEFAULT_K, METHODS, FusionMethod
from complexir.systems.options import Backend, Engine, LongDocs, SearchOptions

PathLike = str | Path


def _as_tuples(options: object, names: tuple[str, ...]) -> None:
    """Sequence fields given as one string or a list (as a notebook writes them) kept as tuples: ``tasks="X"`` is
    ``("X",)``, not the letters of X; a mapping (``prompts={"query": ...}``) is its sorted items."""
    for name in names:
        value: Any = getattr(options, name)
        if isinstance(value, str | Path):
            value = (value,)
        elif isinstance(value, Mapping):
            value = tuple(sorted(value.items()))
        elif value is not None and not isinstance(value, tuple):
            value = tuple(value)
        object.__setattr__(options, name, value)  # a frozen dataclass's own __post_init__


@dataclass(frozen=True)
class RunOptions:
    """What ``complexir run`` evaluates, and how (each field is the flag of the same name)."""

    model: str | None = None  # a Hub model name or local folder (None: the packaged all-MiniLM-L6-v2)
    model_name: str | None = None  # file results under this name
    backend: Backend = "torch"
    max_seq_length: int | None = None
    benchmarks: tuple[str, ...] | None = None  # registered benchmarks (None: all)
    tasks: tuple[str, ...] | None = None  # task names (None: every task of the benchmarks)
    data_dir: str | None = None  # a folder of built benchmarks, or "hub" (None: $COMPLEXIR_DATA_DIR, else the demos)
    splits: tuple[str, ...] = ("test",)
    output: PathLike = "results"
    batch_size: int = 32
    long_docs: LongDocs = "none"
    first_stage: str | None = None  # with a cross-encoder model: a dense model, a searcher or a runs folder
    rerank_depth: int | None = None  # with first_stage: the top K reranked (None: DEFAULT_RERANK_DEPTH)
    trust_remote_code: bool = False
    prompts: tuple[tuple[str, str], ...] = ()  # (prompt type, text): ("query", "query: ")
    engine: Engine = "local"
    cache: str | None = None  # the embedding store (None: a temporary one)
    address: str | None = None
    workers: int | None = None
    gpus_per_worker: float = 0.0
    batch_docs: int | None = None
    runs: str | None = None  # score fixed rankings (a runs folder or one TREC file) instead of a model
    save_runs: str | None = None  # write the rankings: a folder, "" for <output>/runs/..., None for not at all
    allow_other_data: bool = False  # score runs (or a first stage of runs) whose runs.json names other data

    def __post_init__(self) -> None:
        _as_tuples(self, ("benchmarks", "tasks", "splits", "prompts"))

    def search_options(self) -> SearchOptions:
        """What ``complexir.systems.kinds.build_search_model`` needs of these options."""
        return SearchOptions(engine=self.engine, cache=self.cache, address=self.address, workers=self.workers,
                             gpus_per_worker=self.gpus_per_worker, batch_docs=self.batch_docs,
                             long_docs=self.long_docs, backend=self.backend, max_seq_length=self.max_seq_length,
                             model_name=self.model_name)


@dataclass(frozen=True)
class CompareOptions:
    """What ``complexir compare`` compares: result folders of ``complexir run`` or ``mteb run``."""

    results: tuple[PathLike, ...]
    out: PathLike
    baseline: str | None = None  # test every system against this one only (None: every pair)
    measures: tuple[str, ...] | None = None  # None: each benchmark's headline and official measures
    allow_demo: bool = False
    progress: bool = True  # a bar on stderr over the tasks compared

    def __post_init__(self) -> None:
        _as_tuples(self, ("results", "measures"))


@dataclass(frozen=True)
class FuseOptions:
    """What ``complexir fuse`` fuses: two or more runs folders, or two or more TREC run files."""

    runs: tuple[PathLike, ...]
    method: FusionMethod
    out: PathLike
    k: int = DEFAULT_K  # RRF's k
    name: str | None = None  # the system name written in the runs (None: fusion/<method>)
    depth: int | None = None  # documents kept per query (None: every one any input ranks)

    def __post_init__(self) -> None:
        _as_tuples(self, ("runs",))
        if self.method not in METHODS:
            raise ValueError(f"unknown fusion method {self.method!r}; choose one of {', '.join(METHODS)}")
        object.__setattr__(self, "method", FusionMethod(self.method))  # "rrf" as given on the command line too
