"""What a system is, decided in one place, and the mteb search model built for it.

A *system* is whatever produces a ranking for ``mteb.evaluate``:

- ``dense``: an embedding model (``EncoderProtocol``): encoded through the embedding store and searched by an engine
  (``local``, ``ray``, ``mteb``), optionally in the long-document mode;
- ``searcher``: anything mteb resolves to a search model without ``encode`` (``mteb/baseline-bm25s``): it indexes
  each corpus itself, in this process;
- ``cross-encoder``: a model that scores (query, document) pairs, run through mteb's ``CrossEncoderWrapper``: it
  reranks a ``*Rerank`` task's candidates, never anything else on its own;
- ``two-stage``: a cross-encoder reranking the top ``rerank_depth`` of a first stage (a dense model, a searcher or
  fixed runs), as mteb's two-stage protocol does (``prediction_folder``, then ``convert_to_reranking(top_k=K)``);
- ``runs``: fixed rankings read from a runs folder (``complexir.runs.folder``).

The kind of a model is read from its own configuration (mteb's registry entry, else its config files, decided
the way mteb's own loader decides: :func:`complexir.mteb.internals.model_type_from_configs`), never by trying to
load or encode it: a cross-encoder is never turned into a bi-encoder.
"""

from __future__ import annotations

import importlib
import logging
import shutil
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from complexir.systems.options import Engine, SearchOptions

if TYPE_CHECKING:
    from mteb.models import CrossEncoderProtocol, EncoderProtocol, SearchProtocol

    from complexir.runs.folder import FixedRunsSearch
    from complexir.systems.models import EncodeCounter
    from complexir.systems.stored_encoder import StoredEncoder
    from complexir.systems.streaming_search import StreamingSearch

logger = logging.getLogger(__name__)


class SystemKind(StrEnum):
    """The kinds of system, the one place they are spelled (a ``StrEnum``: each is its own string, as written in
    results and messages)."""

    DENSE = "dense"
    SEARCHER = "searcher"
    CROSS_ENCODER = "cross-encoder"
    RUNS = "runs"
    TWO_STAGE = "two-stage"


DENSE, SEARCHER, CROSS_ENCODER, RUNS, TWO_STAGE = (SystemKind.DENSE, SystemKind.SEARCHER, SystemKind.CROSS_ENCODER,
                                                   SystemKind.RUNS, SystemKind.TWO_STAGE)
KINDS = tuple(SystemKind)
NOUNS = {DENSE: "dense encoder", SEARCHER: "searcher", CROSS_ENCODER: "cross-encoder", RUNS: "fixed runs from",
         TWO_STAGE: "two-stage system"}
DEFAULT_RERANK_DEPTH = 100
PROMPT_TYPES = ("query", "document")
#: what ``mteb.evaluate`` is handed: a search model, an encoder (MTEB's own search wraps it) or a cross-encoder
MtebModel: TypeAlias = "SearchProtocol | EncoderProtocol | CrossEncoderProtocol"
#: what a searcher of mteb's needs, by mteb extras group: the Python modules, and the complexir extra that has them
SEARCHER_EXTRAS = {"bm25s": (("bm25s", "Stemmer"), "pip install 'complexir[bm25]'")}


class SystemRefused(ValueError):
    """A system that cannot run as asked (wrong combination of options, a missing extra): one line saying why."""


@dataclass(frozen=True)
class System:
    """One system, as ``complexir run`` was asked for it."""

    kind: SystemKind
    model: str | None = None  # --model (None: the packaged all-MiniLM-L6-v2)
    runs: str | None = None  # a runs folder (kind runs)
    first_stage: System | None = None  # kind two-stage: what the cross-encoder reranks
    rerank_depth: int = DEFAULT_RERANK_DEPTH
    trust_remote_code: bool = False
    prompts: tuple[tuple[str, str], ...] = ()  # (prompt type, text), for a dense model
    reason: str = ""  # how the kind was decided

    @property
    def name(self) -> str:
        from complexir.systems.models import DEFAULT_MODEL

        if self.kind == RUNS:
            assert self.runs is not None  # describe_system makes every runs system with its folder
            return self.runs
        return self.model or DEFAULT_MODEL

    @property
    def dense(self) -> System | None:
        """The dense encoder of this system (itself, or a two-stage's first stage), or None."""
        if self.kind == DENSE:
            return self
        if self.kind == TWO_STAGE and self.first_stage is not None and self.first_stage.kind == DENSE:
            return self.first_stage
        return None

    def describe(self) -> str:
        if self.kind == TWO_STAGE:
            assert self.first_stage is not None
            return (f"two-stage: cross-encoder {self.name} reranking the top {self.rerank_depth} of "
                    f"{self.first_stage.describe()}")
        what = NOUNS[self.kind]
        extra = " (trusting its code)" if self.trust_remote_code and self.kind in (DENSE, CROSS_ENCODER) else ""
        return f"{what} {self.name}{extra}"


# -- deciding the kind -----------------------------------------------------------------------------------------
def describe_system(model: str | None = None, *, runs: str | None = None, first_stage: str | None = None,
                    rerank_depth: int = DEFAULT_RERANK_DEPTH, trust_remote_code: bool = False,
                    prompts: dict[str, str] | None = None) -> System:
    """The system ``--model``, ``--runs`` and ``--first-stage`` name (nothing is loaded; a Hub model that would
    have to be downloaded while the Hub cannot be reached is refused here, before anything else is read)."""
    system = _decide_system(model, runs=runs, first_stage=first_stage, rerank_depth=rerank_depth,
                            trust_remote_code=trust_remote_code, prompts=prompts)
    for option, part in (("--model", system), ("--first-stage", system.first_stage)):
        name = part.model if part is not None and part.kind in (DENSE, CROSS_ENCODER) else None
        if name and name != "default" and not Path(name).expanduser().is_dir():
            from complexir.systems.models import DEFAULT_MODEL, check_hub_model_reachable

            if name != DEFAULT_MODEL:  # the packaged copy needs no Hub
                check_hub_model_reachable(name, option)
    return system


def _decide_system(model: str | None, *, runs: str | None, first_stage: str | None, rerank_depth: int,
                   trust_remote_code: bool, prompts: dict[str, str] | None) -> System:
    prompts = dict(prompts or {})
    unknown = sorted(set(prompts) - set(PROMPT_TYPES))
    if unknown:
        raise SystemRefused(f"--prompt {unknown[0]}=...: the prompt types are {', '.join(PROMPT_TYPES)}")
    if runs is not None:
        if model is not None or first_stage is not None:
            raise SystemRefused("--runs scores fixed rankings as they are: it takes neither --model nor --first-stage")
        return System(RUNS, runs=runs, reason="--runs")
    kind, reason = model_kind(model)
    if prompts and kind != DENSE:
        raise SystemRefused(f"--prompt applies to a dense encoder; {model} is a {NOUNS[kind]}")
    if first_stage is None:
        return System(kind, model=model, trust_remote_code=trust_remote_code, prompts=tuple(sorted(prompts.items())),
                      reason=reason)
    if kind != CROSS_ENCODER:
        raise SystemRefused(f"--first-stage gives a cross-encoder its candidates; {model or 'the default model'} is "
                            f"a {NOUNS[kind]} ({reason})")
    if rerank_depth < 1:
        raise SystemRefused(f"--rerank-depth {rerank_depth}: expected at least 1")
    if is_runs_path(first_stage):
        first = System(RUNS, runs=first_stage, reason="--first-stage: a runs folder")
    else:
        first_kind, first_reason = model_kind(first_stage, "--first-stage")
        if first_kind not in (DENSE, SEARCHER):
            raise SystemRefused(f"--first-stage {first_stage} is a {NOUNS[first_kind]} ({first_reason}); a first stage "
                                "retrieves from the corpus: a dense encoder, a searcher or a runs folder")
        first = System(first_kind, model=first_stage, trust_remote_code=trust_remote_code, reason=first_reason)
    return System(TWO_STAGE, model=model, first_stage=first, rerank_depth=rerank_depth,
                  trust_remote_code=trust_remote_code, reason=reason)


def is_runs_path(path: str) -> bool:
    """A runs folder (``runs.json``, or TREC files under task folders) or one TREC run file, not a model."""
    p = Path(path).expanduser()
    if p.is_file():
        return True
    if not p.is_dir():
        return False
    if (p / "runs.json").is_file():
        return True
    return not (p / "config.json").is_file() and any(p.glob("*/*/*.trec"))


def model_kind(name_or_path: str | None, option: str = "--model") -> tuple[SystemKind, str]:
    """(kind, how it was decided) of a model name or folder, from its configuration alone (nothing is loaded or run,
    so a model that ships code is classified before --trust-remote-code is asked for)."""
    from complexir.systems.models import DEFAULT_MODEL, check_hub_model_reachable, read_model_configs
    from complexir.upstream.release import local_folder

    if name_or_path in (None, "", "default", DEFAULT_MODEL):
        return DENSE, "the packaged all-MiniLM-L6-v2"
    assert name_or_path is not None
    folder = local_folder(name_or_path, option)  # a path that is not a folder fails here
    if folder is None:
        registered = registry_kind(name_or_path)
        if registered is not None:
            return registered
    configs = read_model_configs(str(folder or name_or_path))
    if not any(configs.values()):
        if folder is None:  # the repo may well exist: with the Hub unreachable, say so rather than blame the repo
            check_hub_model_reachable(name_or_path, option)
        where = f"folder {folder}" if folder is not None else "Hub repo (nor in the Hugging Face cache)"
        raise SystemRefused(f"{option} {name_or_path}: no model configuration found in that {where} "
                            "(config.json, modules.json, config_sentence_transformers.json)")
    from complexir.mteb.internals import model_type_from_configs

    model_type = model_type_from_configs(name_or_path, configs["config_sentence_transformers.json"],
                                         configs["sentence_bert_config.json"], configs["modules.json"],
                                         configs["config.json"])
    source = "its config files, as mteb's loader reads them"
    if model_type == "cross-encoder":
        return CROSS_ENCODER, source
    if model_type == "dense":
        return DENSE, source
    raise SystemRefused(f"{option} {name_or_path}: a {model_type} model ({source}); complexir runs dense encoders, "
                        "searchers and cross-encoders")


def registry_kind(name: str) -> tuple[SystemKind, str] | None:
    """The kind of a model in mteb's registry (None when mteb does not know it): a cross-encoder by its
    ``model_type``, a searcher when its loader makes a search model without ``encode``."""
    import warnings

    import mteb

    try:
        with warnings.catch_warnings():  # a renamed model (bm25s → mteb/baseline-bm25s) warns: fine here
            warnings.simplefilter("ignore", DeprecationWarning)
            meta = mteb.get_model_meta(name)
    except KeyError:
        return None
    if meta.is_cross_encoder:
        return CROSS_ENCODER, f"mteb's registry: model_type {meta.model_type}"
    made = _loader_product(meta.loader)
    if made is not None and hasattr(made, "search") and not hasattr(made, "encode"):
        return SEARCHER, f"mteb's registry: its loader makes a {made.__name__}, a search model without encode"
    if "dense" not in meta.model_type:  # sparse and multi-vector encoders: the store and engines hold dense vectors
        raise SystemRefused(f"--model {name}: a {'/'.join(meta.model_type)} model (mteb's registry); complexir runs "
                            "dense encoders, searchers and cross-encoders")
    return DENSE, f"mteb's registry: model_type {meta.model_type}"


def _loader_product(loader: Any) -> type | None:
    """The class a registry loader makes: the loader itself, or the class its return annotation names."""
    if isinstance(loader, type):
        return loader
    annotation = getattr(loader, "__annotations__", {}).get("return")
    if isinstance(annotation, type):
        return annotation
    if isinstance(annotation, str):
        import mteb.models

        module = importlib.import_module(loader.__module__)
        found = getattr(module, annotation, None) or getattr(mteb.models, annotation, None)
        return found if isinstance(found, type) else None
    return None


def check_tasks(system: System, tasks: list[Any]) -> None:
    """A cross-encoder alone reranks candidates: a retrieval task needs a first stage (one line, before loading)."""
    if system.kind != CROSS_ENCODER:
        return
    retrieval = [t.metadata.name for t in tasks if t.metadata.type != "Reranking"]
    if retrieval:
        shown = ", ".join(retrieval[:3]) + (f" and {len(retrieval) - 3} more" if len(retrieval) > 3 else "")
        raise SystemRefused(f"{system.name} is a cross-encoder: it reranks candidates, so the retrieval task(s) "
                            f"{shown} need --first-stage MODEL_OR_RUNS (or run only *Rerank tasks)")


# -- the search model for mteb.evaluate ------------------------------------------------------------------------
@dataclass
class SearchSetup:
    """What ``complexir run`` hands to ``mteb.evaluate`` and what it reports afterwards."""

    model: MtebModel  # the model for mteb.evaluate
    stored: StoredEncoder | None = None  # its counts, where the system encodes through the embedding store
    search: StreamingSearch | None = None  # for engines local and ray
    engine: Any | None = None  # the LocalEngine or RayEngine under ``search``
    system: System | None = None
    timed: TimedSearch | TimedCrossEncoder | None = None  # the model whose rate the table shows
    counter: EncodeCounter | None = None  # under the store: what a dense model really encoded
    engine_name: Engine = "local"
    _temporary: Path | None = field(default=None, repr=False)

    @property
    def streams_corpus(self) -> bool:
        """Whether tasks should hand the model their corpus shards instead of loading the corpus: the streaming
        search reads them batch by batch. Not with ``--engine mteb`` (MTEB's search wants the loaded corpus),
        ``--long-docs chunk`` (its wrapper cuts the documents of the loaded corpus into windows, in this process),
        nor a searcher (it indexes the loaded corpus itself) or a cross-encoder alone (mteb's wrapper reads the
        candidates from the loaded corpus). A two-stage system reads its candidates' rows from the shards."""
        return self.search is not None

    def store_summary(self) -> str:
        """What the embedding store did (``complexir run`` asks only a setup that has one)."""
        assert self.stored is not None
        return self.stored.counts.summary()

    def docs_per_second(self, task: str) -> float | None:
        """The rate the run table shows: documents a searcher indexed, pairs a cross-encoder scored, documents
        a dense model encoded (None: nothing was encoded, every vector came from the store)."""
        if self.timed is not None:
            return self.timed.docs_per_second(task)
        if self.engine_name == "ray" and self.search is not None:  # encoded in the workers: the search's own rate
            return self.search.docs_per_second.get(task)
        return self.counter.docs_per_second(task) if self.counter is not None else None

    def close(self) -> None:
        if self.engine is not None and hasattr(self.engine, "shutdown"):
            self.engine.shutdown()
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)


def build_search_model(system: System, options: SearchOptions | None = None) -> SearchSetup:
    """The model ``mteb.evaluate`` gets for ``system``, run as ``options`` say (engine, store, long-document mode,
    backend, model name). Fixed runs are set up by ``complexir.api.fixed_runs.fixed_runs_setup``, with their own
    checks."""
    options = options or SearchOptions()
    engine, long_docs, model_name = options.engine, options.long_docs, options.model_name
    dense = system.dense
    if dense is None:
        for option, value, default in (("--backend", options.backend, "torch"),
                                       ("--max-seq-length", options.max_seq_length, None),
                                       ("--long-docs", long_docs, "none")):
            if value != default:
                raise SystemRefused(f"{option} applies to a dense encoder; this run's system: {system.describe()}")
    if system.kind == DENSE:
        return _dense_setup(system, options, model_name=model_name)
    if system.kind == SEARCHER:
        _refuse_ray(engine, system)
        timed = TimedSearch(load_searcher(system.name))
        _rename(timed, model_name)
        return SearchSetup(model=timed, system=system, timed=timed)
    if system.kind == CROSS_ENCODER:
        _refuse_ray(engine, system)
        timed_pairs = TimedCrossEncoder(load_cross_encoder(system.name, trust_remote_code=system.trust_remote_code))
        _rename(timed_pairs, model_name)
        return SearchSetup(model=timed_pairs, system=system, timed=timed_pairs)
    if system.kind == RUNS:  # scored as they are, with their own checks
        raise ValueError("fixed runs are set up by complexir.api.fixed_runs.fixed_runs_setup, not as a model")
    # two-stage: the first stage as it would run alone, then the cross-encoder over its top rerank_depth
    first = system.first_stage
    assert first is not None
    if first.kind == DENSE:
        setup = _dense_setup(first, options, model_name=None)
    elif first.kind == SEARCHER:
        _refuse_ray(engine, first)
        setup = SearchSetup(model=TimedSearch(load_searcher(first.name)), system=first)
    else:
        setup = SearchSetup(model=runs_search(first.name, Path(first.name).name), system=first)
    reranker = TimedCrossEncoder(load_cross_encoder(system.name, trust_remote_code=system.trust_remote_code))
    _rename(reranker, model_name)
    # the first stage retrieves (describe_system refuses a cross-encoder there)
    two_stage = TwoStageSearch(cast("SearchProtocol | EncoderProtocol", setup.model), reranker, system.rerank_depth)
    return SearchSetup(model=two_stage, stored=setup.stored, search=setup.search, engine=setup.engine, system=system,
                       timed=reranker, engine_name=setup.engine_name, _temporary=setup._temporary)


def _refuse_ray(engine: Engine, system: System) -> None:
    if engine == "ray":
        raise SystemRefused(f"--engine ray spreads an encoder's corpus batches over workers; {system.describe()} "
                            "runs in one process: use --engine local or --engine mteb")


def _rename(model: Any, model_name: str | None) -> None:
    if model_name:
        model.mteb_model_meta = model.mteb_model_meta.model_copy(update={"name": model_name})


def _dense_setup(system: System, options: SearchOptions, *, model_name: str | None) -> SearchSetup:
    from complexir.systems.models import EncodeCounter, load_model

    prompts = dict(system.prompts)
    long_docs = options.long_docs
    base = load_model(system.model, max_seq_length=options.max_seq_length, model_name=model_name,
                      backend=options.backend, trust_remote_code=system.trust_remote_code, prompts=prompts or None)
    counter = EncodeCounter(base)  # under the embedding store: counts only what is really encoded
    setup = build_dense_search(options, counter, long_docs=long_docs != "none", model=system.model,
                               model_name=model_name, trust_remote_code=system.trust_remote_code, prompts=prompts)
    setup.system, setup.counter = system, counter
    if long_docs != "none":  # windows are plain texts, so the store serves them too
        from complexir.systems.long_docs import wrap_long_docs

        setup.model = wrap_long_docs(cast("EncoderProtocol", setup.model), long_docs)  # a dense setup's encoder
    return setup


def build_dense_search(options: SearchOptions, encoder: EncoderProtocol, *, long_docs: bool, model: str | None = None,
                       model_name: str | None = None, trust_remote_code: bool = False,
                       prompts: dict[str, str] | None = None) -> SearchSetup:
    """A dense ``encoder`` over the embedding store, searched by the chosen engine (``options.engine``).

    With ``long_docs`` the long-document wrapper does its own streaming search, so only ``mteb``/``local``
    apply (both mean: that wrapper in this process). ``model`` (filed as ``model_name``), ``trust_remote_code`` and
    ``prompts`` are what each Ray worker loads: the worker refuses a model that ships code unless the opt-in travels
    with it.
    """
    from complexir.systems.embedding_store import EmbeddingStore
    from complexir.systems.stored_encoder import StoredEncoder

    engine_name, cache = options.engine, options.cache
    if engine_name == "ray" and options.address and not cache:
        raise ValueError("--engine ray --address needs --cache DIR on a file system every worker reaches")
    temporary = None
    if cache:
        root = Path(cache).expanduser()
    else:
        temporary = root = Path(tempfile.mkdtemp(prefix="complexir-store-"))
    logger.info("embedding store: %s", root)
    stored = StoredEncoder(encoder, EmbeddingStore(root))
    if long_docs or engine_name == "mteb":
        if long_docs and engine_name == "ray":
            raise ValueError("--long-docs chunk runs in this process; it cannot be combined with --engine ray")
        return SearchSetup(model=stored, stored=stored, _temporary=temporary)

    from complexir.systems.streaming_search import DEFAULT_BATCH_DOCS, LocalEngine, StreamingSearch

    engine: Any
    if engine_name == "ray":
        from complexir.systems.ray_engine import RayEngine, StoredModelSpec

        spec = StoredModelSpec(store=str(root), model=model, max_seq_length=options.max_seq_length,
                               model_name=model_name, backend=options.backend,
                               trust_remote_code=trust_remote_code, prompts=tuple(sorted((prompts or {}).items())))
        engine = RayEngine(spec, address=options.address, workers=options.workers,
                           gpus_per_worker=options.gpus_per_worker)
    else:
        engine = LocalEngine()
    search = StreamingSearch(stored, engine=engine, batch_docs=options.batch_docs or DEFAULT_BATCH_DOCS)
    return SearchSetup(model=search, stored=stored, search=search, engine=engine, engine_name=engine_name,
                       _temporary=temporary)


# -- loading ---------------------------------------------------------------------------------------------------
def load_searcher(name: str) -> SearchProtocol:
    """mteb's search model for ``name`` (e.g. ``mteb/baseline-bm25s``), its extra checked first (one line)."""
    import warnings

    import mteb

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        meta = mteb.get_model_meta(name)
        for group in meta.extra_requirements_groups or []:
            modules, install = SEARCHER_EXTRAS.get(group, ((), f"pip install 'mteb[{group}]'"))
            missing = [m for m in modules if not _importable(m)]
            if missing:
                raise SystemRefused(f"{name} needs {', '.join(missing)}: {install}")
        return cast("SearchProtocol", mteb.get_model(name))  # a searcher: registry_kind decided it


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def load_cross_encoder(name_or_path: str, *, trust_remote_code: bool = False) -> CrossEncoderProtocol:
    """mteb's ``CrossEncoderWrapper`` for a cross-encoder folder or model name (named and revised as
    ``complexir.systems.models.load_model`` names a local folder); never loaded as a bi-encoder."""
    import mteb

    from complexir.systems.models import check_remote_code, folder_revision, in_mteb_registry, read_model_configs
    from complexir.upstream.release import local_folder

    folder = local_folder(name_or_path, "--model")
    if folder is None:  # mteb's own loader: its registry entry, else the Hub repo's config
        if not in_mteb_registry(name_or_path):  # mteb's own entries load mteb's code, not the repo's
            check_remote_code(name_or_path, read_model_configs(name_or_path), trust_remote_code)
        loaded = mteb.get_model(name_or_path, trust_remote_code=True) if trust_remote_code else mteb.get_model(
            name_or_path)
        return cast("CrossEncoderProtocol", loaded)  # a cross-encoder: model_kind decided it
    from mteb.models import CrossEncoderWrapper
    from sentence_transformers import CrossEncoder

    folder = folder.resolve()
    check_remote_code(str(folder), read_model_configs(str(folder)), trust_remote_code)
    extra = {"trust_remote_code": True} if trust_remote_code else {}
    wrapper = CrossEncoderWrapper(CrossEncoder(str(folder), **extra))
    wrapper.mteb_model_meta = wrapper.mteb_model_meta.model_copy(update={
        "name": f"local/{folder.name}", "revision": folder_revision(folder), "experiment_kwargs": extra or None})
    return wrapper


def runs_search(path: str, name: str) -> FixedRunsSearch:
    """Fixed rankings of a runs folder as an mteb search model (``complexir.runs.folder.FixedRunsSearch``): a two-stage
    system's first stage."""
    if not Path(path).expanduser().is_dir():
        raise SystemRefused(f"{path}: a first stage of fixed runs is a runs folder (<Task>/<subset>/<split>.trec, "
                            "as --save-runs writes it), not a single file")
    from complexir.runs.folder import FixedRunsSearch, RunsFolder

    return FixedRunsSearch(RunsFolder(path), name)


# -- the search models -----------------------------------------------------------------------------------------
class _Rate:
    """Items per second by task, over the calls timed."""

    def __init__(self) -> None:
        self.items: dict[str, int] = defaultdict(int)
        self.seconds: dict[str, float] = defaultdict(float)

    def add(self, task: str, items: int, seconds: float) -> None:
        self.items[task] += items
        self.seconds[task] += seconds

    def docs_per_second(self, task: str) -> float | None:
        seconds = self.seconds.get(task, 0.0)
        return self.items[task] / seconds if seconds > 0 else None


class TimedSearch(_Rate):
    """A searcher (mteb ``SearchProtocol``), timed: documents indexed per second, per task. Only the first index
    of a task's subset and split counts (CRUMB's MaxP indexes the same corpus again before a deeper search)."""

    def __init__(self, model: SearchProtocol):
        super().__init__()
        self.model = model
        self.mteb_model_meta = model.mteb_model_meta
        self._timed: set[tuple[str, str, str]] = set()

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, encode_kwargs: Any,
              num_proc: int | None = None, **kwargs: Any) -> None:
        start = time.perf_counter()
        self.model.index(corpus, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                         encode_kwargs=encode_kwargs, num_proc=num_proc, **kwargs)
        key = (task_metadata.name, hf_subset, hf_split)
        if key not in self._timed:
            self._timed.add(key)
            self.add(task_metadata.name, len(corpus), time.perf_counter() - start)

    def search(self, queries: Any, **kwargs: Any) -> dict[str, dict[str, float]]:
        return self.model.search(queries, **kwargs)


class TimedCrossEncoder(_Rate):
    """A cross-encoder (mteb ``CrossEncoderProtocol``), timed: (query, document) pairs scored per second."""

    def __init__(self, model: CrossEncoderProtocol):
        super().__init__()
        self.model = model
        self.mteb_model_meta = model.mteb_model_meta

    def predict(self, inputs1: Any, inputs2: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
                **kwargs: Any) -> Any:
        start = time.perf_counter()
        scores = self.model.predict(inputs1, inputs2, task_metadata=task_metadata, hf_split=hf_split,
                                    hf_subset=hf_subset, **kwargs)
        self.add(task_metadata.name, len(scores), time.perf_counter() - start)
        return scores


def rerank_candidates(results: dict[str, dict[str, float]], depth: int) -> dict[str, list[str]]:
    """Each query's top ``depth`` documents of a first-stage run, as mteb's ``convert_to_reranking`` takes them
    (by score, a stable sort over the run's own order)."""
    return {qid: sorted(docs, key=lambda d: docs[d], reverse=True)[:depth] for qid, docs in results.items()}


class TwoStageSearch:
    """mteb search model: ``first`` (any search model) ranks, then ``reranker`` (a cross-encoder) rescores the top
    ``depth`` of each query through mteb's ``SearchCrossEncoderWrapper``: mteb's two-stage protocol in one pass.

    On a ``*Rerank`` task the first stage ranks the task's candidates, and the cross-encoder reranks the top
    ``depth`` of that ranking (what the protocol gives for such a task). Results are filed under the cross-encoder
    with the first stage (name, revision, experiment) and the depth in ``experiment_kwargs``.
    """

    def __init__(self, first: SearchProtocol | EncoderProtocol, reranker: CrossEncoderProtocol | TimedCrossEncoder,
                 depth: int):
        from mteb.models import SearchEncoderWrapper, SearchProtocol

        # an encoder (--engine mteb: the store's encoder) is searched as mteb searches an encoder
        self.first = first if isinstance(first, SearchProtocol) else SearchEncoderWrapper(first)
        self.reranker = reranker
        self.model = reranker  # wrapper chains: the model that reads the documents last
        self.depth = depth
        first_meta = self.first.mteb_model_meta
        experiment = dict(reranker.mteb_model_meta.experiment_kwargs or {})
        experiment.update({"first_stage": first_meta.name, "first_stage_revision": first_meta.revision,
                           "rerank_depth": depth})
        if first_meta.experiment_kwargs:
            experiment["first_stage_experiment"] = dict(first_meta.experiment_kwargs)
        self.mteb_model_meta = reranker.mteb_model_meta.model_copy(update={"experiment_kwargs": experiment})
        self._corpus: Any = None

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, encode_kwargs: Any,
              num_proc: int | None = None, **kwargs: Any) -> None:
        self._corpus = corpus
        self.first.index(corpus, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                         encode_kwargs=encode_kwargs, num_proc=num_proc, **kwargs)

    # A first stage of fixed runs is told which ids its runs may name, and says how many queries they miss
    # (complexir.runs.folder.ExpectsTaskIds): passed through, so the task finds them on the outer model.
    def expect_ids(self, task: str, hf_subset: str, split: str, **ids: Any) -> None:
        if hasattr(self.first, "expect_ids"):
            self.first.expect_ids(task, hf_subset, split, **ids)

    def run_scores(self, task: str, hf_subset: str, split: str) -> dict[str, float]:
        return self.first.run_scores(task, hf_subset, split) if hasattr(self.first, "run_scores") else {}

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, top_k: int,
               encode_kwargs: Any, top_ranked: Any = None, num_proc: int | None = None,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        from mteb.models import SearchCrossEncoderWrapper

        common = {"task_metadata": task_metadata, "hf_split": hf_split, "hf_subset": hf_subset,
                  "encode_kwargs": encode_kwargs, "num_proc": num_proc}
        first = self.first.search(queries, top_k=max(top_k, self.depth), top_ranked=top_ranked, **common, **kwargs)
        candidates = rerank_candidates(first, self.depth)
        corpus = self._corpus
        if hasattr(corpus, "rows_with_ids"):  # the task's parquet shards: read only the candidates' rows
            from datasets import Dataset
            from datasets.table import InMemoryTable

            corpus = Dataset(InMemoryTable(corpus.rows_with_ids({d for ids in candidates.values() for d in ids})))
        wrapper = SearchCrossEncoderWrapper(self.reranker)
        wrapper.index(corpus, **common)
        return wrapper.search(queries, top_k=top_k, top_ranked=candidates, **common)
