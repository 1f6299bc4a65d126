"""Every use of mteb's private parts, in one place, checked against the mteb range it was written for.

mteb has no plugin API for its task and benchmark registries, no public helper that turns texts into the
dataloaders its encoders take, no public function that scores a run as its retrieval tasks do, and no public
serialiser for model-card results. complexir needs each of these; everything else goes through mteb's public
API (``AbsTaskRetrieval.evaluate``, ``task_specific_scores``, ``RetrievalDatasetLoader.load``, search
wrappers). Widening the supported mteb range means checking this module, and only this module: a test fails
if any other module of the package touches an mteb name that starts with ``_``.

Each function checks what it reaches for (it exists, with the expected kind) and raises
:class:`MtebInternalsError` naming the mteb attribute and the installed version when it does not. This module
imports nothing but the standard library at import time (the mteb hook imports it at interpreter start-up).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

#: mteb versions this module (and the hook that uses it) was checked against; pyproject pins the same range.
TESTED_MTEB_RANGE = ">=2.26,<2.27"


class MtebInternalsError(RuntimeError):
    """An mteb internal complexir relies on is missing or has changed."""


def mteb_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mteb")
    except PackageNotFoundError:
        return "unknown"


def in_tested_range(installed: str) -> bool:
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return Version(installed) in SpecifierSet(TESTED_MTEB_RANGE)
    except InvalidVersion:
        return False


def required(module: Any, name: str, kind: Any) -> Any:
    """``module.name``, checked to exist with the expected type (mteb's internals are not an API).

    ``kind`` is what :func:`isinstance` takes: a class, a tuple of them, or an ABC such as
    ``collections.abc.Callable`` (which type checkers type as a special form, not as a class; hence ``Any``).
    """
    owner = getattr(module, "__name__", None) or type(module).__name__
    if not hasattr(module, name):
        raise MtebInternalsError(
            f"{owner}.{name} does not exist in mteb {mteb_version()} "
            f"(complexir is tested with mteb{TESTED_MTEB_RANGE})"
        )
    value = getattr(module, name)
    if not isinstance(value, kind):
        raise MtebInternalsError(
            f"{owner}.{name} is a {type(value).__name__}, expected {kind} "
            f"(mteb {mteb_version()}; tested with mteb{TESTED_MTEB_RANGE})"
        )
    return value


# -- the task registry (mteb.get_tasks builds it once, at import) ---------------------------------------------
def task_registry() -> tuple[Any, tuple, dict, dict]:
    """``mteb.get_tasks`` (its private names are set, hence ``Any``) and its ``TASK_LIST``, ``_TASKS_REGISTRY``
    (name → class) and ``_SIMILAR_TASKS``."""
    get_tasks = importlib.import_module("mteb.get_tasks")
    return (get_tasks, required(get_tasks, "TASK_LIST", tuple), required(get_tasks, "_TASKS_REGISTRY", dict),
            required(get_tasks, "_SIMILAR_TASKS", dict))


# -- the benchmark registry (an lru_cache over mteb.benchmarks.benchmarks' namespace) -------------------------
BENCHMARK_CACHES = ("_build_registry", "_build_aliases_registry")


def check_benchmark_caches() -> None:
    """The cached scans of ``mteb.benchmarks.get_benchmark`` exist and can be cleared."""
    get_benchmark = importlib.import_module("mteb.benchmarks.get_benchmark")
    for cache_name in BENCHMARK_CACHES:
        cached = required(get_benchmark, cache_name, Callable)
        if not hasattr(cached, "cache_clear"):
            raise MtebInternalsError(f"mteb.benchmarks.get_benchmark.{cache_name} is no longer an lru_cache")


def clear_benchmark_caches(get_benchmark: ModuleType) -> None:
    """Drop mteb's cached benchmark scan so the next lookup sees benchmarks added since."""
    for cache_name in BENCHMARK_CACHES:
        getattr(get_benchmark, cache_name).cache_clear()


# -- encoding -------------------------------------------------------------------------------------
def create_dataloader(dataset: Any, **kwargs: Any) -> Any:
    """mteb's own dataloader for ``dataset`` (what its encoders' ``encode`` takes), as its tasks build it."""
    module = importlib.import_module("mteb._create_dataloaders")
    return required(module, "create_dataloader", Callable)(dataset, **kwargs)


# -- descriptive statistics ------------------------------------------------------------------------------------
class StatisticsParts(NamedTuple):
    """The pieces of mteb's ``AbsTaskRetrieval`` descriptive statistics, for a caller that streams the corpus
    (mteb's own method holds every corpus id and text in lists)."""

    corpus_text: Callable[[dict[str, Any]], str]  # a corpus row as the model reads it (title and text joined)
    query_texts: Callable[[Any], list[str]]  # a queries ``Dataset`` as the model reads it (with instructions)
    text_statistics: Callable[[list[str]], Any]  # mteb's ``TextStatistics`` of a list of texts
    relevant_docs_statistics: Callable[..., Any]  # (qrels, query ids, corpus ids: only their difference is used)
    top_ranked_statistics: Callable[[Any, int], Any]  # (top ranked lists, number of queries)


def statistics_parts() -> StatisticsParts:
    creating = importlib.import_module("mteb._create_dataloaders")
    calculation = importlib.import_module("mteb.abstasks._statistics_calculation")
    from mteb.types import PromptType

    to_dict = required(creating, "_corpus_to_dict", Callable)
    retrieval_texts = required(creating, "_retrieval_texts", Callable)
    return StatisticsParts(
        corpus_text=lambda row: to_dict(row)["text"],
        query_texts=lambda queries: retrieval_texts(queries, PromptType.query),
        text_statistics=required(calculation, "calculate_text_statistics", Callable),
        relevant_docs_statistics=required(calculation, "calculate_relevant_docs_statistics", Callable),
        top_ranked_statistics=required(calculation, "calculate_top_ranked_statistics", Callable))


# -- model-card results ---------------------------------------------------------------------------------------
def hf_task_type(metadata: Any) -> str:
    """The Hub task type mteb files a task's results under in a model card (e.g. ``text-retrieval``)."""
    return required(metadata, "_hf_task_type", Callable)()[0]


def hf_benchmark_result(result: Any, user: str | None) -> Any:
    """A ``TaskResult`` as mteb 2 uploads it to ``.eval_results/`` (an object with ``to_yaml()``)."""
    return required(result, "_to_hf_benchmark_result", Callable)(user)


def hf_eval_meta() -> type:
    """mteb's ``HFEvalMeta``: the pydantic model of a Hub Benchmark's ``eval.yaml`` (``model_validate`` checks one)."""
    module = importlib.import_module("mteb._hf_integration.eval_model")
    return required(module, "HFEvalMeta", type)


def hf_eval_results() -> Any:
    """mteb's ``HFEvalResults``: the pydantic model of one ``.eval_results/*.yaml`` file (a list of entries)."""
    module = importlib.import_module("mteb._hf_integration.eval_result_model")
    return required(module, "HFEvalResults", type)


def card_dataset_loader(hf_repo: str, revision: str | None, split: str = "test",
                        config: str | None = None, corpus: Any = None) -> Any:
    """MTEB's ``RetrievalDatasetLoader`` reading the configs and splits from the benchmark's card (see
    ``_card_loader_class``); the class is made on first use, so importing this module imports no mteb.

    ``corpus``: what to hand MTEB as the corpus instead of loading the corpus config (the streaming engines pass
    the config's parquet shards, ``streaming_search.ParquetSource``); queries, qrels and the rest load as usual."""
    return _card_loader_class()(hf_repo, revision, split=split, config=config, corpus=corpus)


@functools.cache
def _card_loader_class() -> type:
    """MTEB's ``RetrievalDatasetLoader`` with the configs and their splits read from the benchmark's card.

    Here because it overrides MTEB's private ``_get_split``. MTEB asks ``datasets.get_dataset_config_names`` /
    ``get_dataset_split_names``; offline, for a Hub repo in the cache, the first answers ``["default"]``, so the
    ``-top_ranked`` config (and with it every Rerank task) goes missing. The card is cached with the data and
    names every config and split. (``__init__`` sets what MTEB 2.26's sets, without its Hub query.) It also
    overrides the private ``_load_corpus`` to hand MTEB a corpus given in advance (the streaming engines' shards).
    """
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader

    from complexir.layout import reader

    class CardDatasetLoader(RetrievalDatasetLoader):
        def __init__(self, hf_repo: str, revision: str | None, split: str = "test",
                     config: str | None = None, corpus: Any = None) -> None:
            # mteb declares a str; None (a local folder, or the Hub's head) is what datasets' loaders take
            self.revision = revision  # type: ignore[assignment]
            self.hf_repo = hf_repo
            self.trust_remote_code = False
            self.split = split
            self.config = config if config != "default" else None
            self.dataset_configs = reader.config_names(hf_repo, revision)
            self.corpus = corpus

        def _load_corpus(self, num_proc: int | None) -> Any:
            return super()._load_corpus(num_proc) if self.corpus is None else self.corpus

        def _get_split(self, config: str) -> str:
            splits = reader.config_splits(self.hf_repo, config, self.revision)
            if self.split in splits:
                return self.split
            if len(splits) == 1:
                return splits[0]
            raise ValueError(f"{self.hf_repo}: split {self.split!r} not in config {config!r} (splits {splits})")

    return CardDatasetLoader


# -- what kind of model a folder or Hub repo holds ------------------------------------------------------------
def model_type_from_configs(name: str, config_sentence_transformers: dict | None, sentence_bert_config: dict | None,
                            modules: Any, config: dict | None) -> str:
    """The model type mteb gives a model it loads from its config files (``cross-encoder``, ``dense``, ``sparse``,
    ``late-interaction``): mteb's own ``ModelMeta._resolve_loader``, so complexir never disagrees with how mteb
    would load the same folder (sentence-transformers' ``model_type``, then ``modules.json``, then the
    ``architectures`` of ``config.json``)."""
    from mteb.models.model_meta import ModelMeta

    resolve = required(ModelMeta, "_resolve_loader", Callable)
    return str(resolve(name, config_sentence_transformers, sentence_bert_config, modules, config)[1])
