"""MTEB tasks for CoverageBench: one retrieval task and one reranking task per subset, plus the benchmark.

Main score: α-nDCG@20 (``alpha_ndcg_at_20``, α = 0.5); also StRecall@20 (``strecall_at_20``) and nDCG@20
(``ndcg_at_20``). All three come from ``complexir.metrics`` (ndeval / trec_eval semantics) through
``task_specific_scores``: the nugget judgments are read from the ``<subset>-nuggets`` config when the
split is loaded and kept per (MTEB subset, split). Rankings are formed with ``rank_run`` (score desc,
ties doc id desc), so every tool sees the same order.

``CoverageBench<Subset>`` retrieves from the whole corpus (its ``top_ranked`` config is ignored);
``CoverageBench<Subset>Rerank`` reranks the baseline candidates in ``<subset>-top_ranked`` (the paper
reranks the top 50 of a baseline). MTEB's default cutoffs (1 … 1000) are cut to 1 … 20: the coverage
measures need the top 20 only, and MTEB retrieves ``max(k_values)`` documents per query.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, ClassVar

import mteb
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata

from complexir.benchmarks import COVERAGEBENCH_CITATION as CITATION
from complexir.benchmarks import COVERAGEBENCH_REFERENCE as REFERENCE
from complexir.metrics import adhoc_per_query, coverage_per_query, max_depth, mean_scores, rank_run
from complexir.reader import load, nugget_judgments

from .layout_task import LayoutRetrievalTask

logger = logging.getLogger(__name__)

HUB_REPO = "complexir/coveragebench"  # the standard-layout build; `complexir build coveragebench` makes it
COVERAGE_MEASURES = ("alpha_nDCG@20", "StRecall@20")
SCORE_NAMES = {"alpha_nDCG@20": "alpha_ndcg_at_20", "StRecall@20": "strecall_at_20", "nDCG@20": "ndcg_at_20"}


# class-name suffix -> (layout subset, what the collection is, domains, task date range)
SUBSETS: dict[str, tuple[str, str, list[str], tuple[str, str]]] = {
    "CAsT2020": ("cast2020", "TREC CAsT 2020 conversational topics over MS MARCO and Wikipedia passages",
                 ["Web", "Encyclopaedic"], ("2020-01-01", "2020-12-31")),
    "FairRanking2022": ("fair_ranking_2022", "TREC Fair Ranking 2022 topics over English Wikipedia articles",
                        ["Encyclopaedic"], ("2022-01-01", "2022-12-31")),
    "NeuCLIR2024": ("neuclir_2024", "TREC NeuCLIR 2024 report requests over Chinese, Persian and Russian news",
                    ["News"], ("2024-01-01", "2024-12-31")),
    "RAG2024": ("rag_2024", "TREC RAG 2024 questions over MS MARCO v2.1 segments", ["Web"],
                ("2024-01-01", "2024-12-31")),
    "RAGTIME2025": ("ragtime_2025", "TREC RAGTIME 2025 report requests over multilingual news", ["News"],
                    ("2025-01-01", "2025-12-31")),
    "CRUXMultiNews": ("crux_multinews", "CRUX multi-document summarisation topics from Multi-News", ["News"],
                      ("2019-01-01", "2025-12-31")),
    "CRUXDUC04": ("crux_duc04", "CRUX multi-document summarisation topics from DUC 2004", ["News"],
                  ("2004-01-01", "2025-12-31")),
}


# languages of a subset's queries and documents where they are not English only: NeuCLIR's English report
# requests over Chinese, Persian and Russian news (the default corpus, ir_datasets neuclir/1/multi)
EVAL_LANGS: dict[str, list[str]] = {"neuclir_2024": ["eng-Latn", "zho-Hans", "fas-Arab", "rus-Cyrl"]}


class CoverageBenchTask(LayoutRetrievalTask):
    """A CoverageBench subset: MTEB retrieval plus coverage measures from the subset's nuggets."""

    benchmark_dir: ClassVar[str] = "coveragebench"
    k_values = (1, 3, 5, 10, 20)  # MTEB needs 1 (its "accuracy"); the coverage measures stop at 20
    rerank: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # (hf_subset, split) → topic → nugget → document → grade, read with the split
        self._coverage_judgments: dict[tuple[str, str], dict[str, dict[str, dict[str, int]]]] = {}

    def load_split(self, path: str, revision: str | None, hf_subset: str, split: str) -> RetrievalSplitData:
        data = super().load_split(path, revision, hf_subset, split)
        if not self.rerank:
            data["top_ranked"] = None  # full-corpus retrieval: the baseline candidates are for the Rerank task
        elif not data.get("top_ranked"):
            raise FileNotFoundError(f"{self.metadata.name}: {path} has no "
                                    f"{self.layout_subsets[hf_subset]}-top_ranked config to rerank")
        nuggets = load(path, self.layout_subsets[hf_subset], "nuggets", split, revision=revision)
        self._coverage_judgments[(hf_subset, split)] = nugget_judgments(nuggets)
        return data

    def available_in(self, data_dir: str | os.PathLike) -> bool:
        if not super().available_in(data_dir):
            return False
        if not self.rerank:
            return True
        from complexir.card import read_front_matter

        names = {c["config_name"] for c in read_front_matter(Path(data_dir) / self.benchmark_dir / "README.md")
                 .get("configs", [])}
        return all(f"{s}-top_ranked" in names for s in self.layout_subsets.values())

    def coverage_per_query(self, qrels: dict[str, dict[str, int]], results: dict[str, dict[str, float]],
                           hf_split: str, hf_subset: str) -> dict[str, dict[str, float]]:
        """Per topic: α-nDCG@20, StRecall@20 (ndeval) and nDCG@20 (trec_eval), MTEB-style keys.

        Every evaluated topic counts (MTEB evaluates the queries with a positive qrel); a topic the
        model returned nothing for scores 0.
        """
        all_judgments = self._coverage_judgments.get((hf_subset, hf_split))
        if all_judgments is None:
            raise RuntimeError(f"{self.metadata.name}: no nuggets loaded for {hf_subset}/{hf_split}")
        judgments = {q: all_judgments.get(q, {}) for q in qrels}
        rankings = rank_run(results, depth=max_depth([*COVERAGE_MEASURES, "nDCG@20"]))
        per_query = coverage_per_query(judgments, rankings, COVERAGE_MEASURES)
        per_query.update(adhoc_per_query(qrels, rankings, ("nDCG@20",)))
        return {SCORE_NAMES[name]: values for name, values in per_query.items()}

    def task_specific_scores(self, scores: dict[str, dict[str, float]], qrels: Any,
                             results: dict[str, dict[str, float]], hf_split: str, hf_subset: str) -> dict[str, float]:
        """The means of :meth:`coverage_per_query`; the per-topic values join ``per_query_scores``.

        ``ndcg_at_20`` replaces MTEB's own: the same trec_eval value, with the tie rule stated once.
        """
        super().task_specific_scores(scores, qrels, results, hf_split, hf_subset)
        per_query = self.coverage_per_query(qrels, results, hf_split, hf_subset)
        self.per_query_scores.setdefault(hf_subset, {}).setdefault(hf_split, {}).update(per_query)
        return mean_scores(per_query)


def _metadata(suffix: str, layout: str, what: str, domains: list[str], dates: tuple[str, str],
              rerank: bool) -> TaskMetadata:
    name = f"CoverageBench{suffix}" + ("Rerank" if rerank else "")
    how = ("Rerank the top 50 documents of a baseline run" if rerank
           else "Retrieve from the corpus")
    return TaskMetadata(
        name=name,
        description=(f"CoverageBench {layout}: {what}. {how} so that the top 20 cover every nugget of the "
                     "information need; scored by alpha-nDCG@20 (main), StRecall@20 and nDCG@20."),
        reference=REFERENCE,
        dataset={"path": HUB_REPO, "revision": "main"},
        type="Reranking" if rerank else "Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=EVAL_LANGS.get(layout, ["eng-Latn"]),
        main_score="alpha_ndcg_at_20",
        date=dates,
        domains=domains,
        task_subtypes=[],
        license="apache-2.0",
        annotations_creators="expert-annotated",
        dialect=[],
        sample_creation="found",
        bibtex_citation=CITATION,
    )


def _make(suffix: str, rerank: bool) -> type[CoverageBenchTask]:
    layout, what, domains, dates = SUBSETS[suffix]
    name = f"CoverageBench{suffix}" + ("Rerank" if rerank else "")
    return type(name, (CoverageBenchTask,), {
        "__module__": __name__,
        "__doc__": f"CoverageBench {layout} ({'reranking baseline candidates' if rerank else 'full retrieval'}).",
        "metadata": _metadata(suffix, layout, what, domains, dates, rerank),
        "layout_subsets": {"default": layout},
        "rerank": rerank,
    })


RETRIEVAL_TASKS = [_make(suffix, rerank=False) for suffix in SUBSETS]
RERANK_TASKS = [_make(suffix, rerank=True) for suffix in SUBSETS]
TASKS: list[type[CoverageBenchTask]] = RETRIEVAL_TASKS + RERANK_TASKS
globals().update({cls.__name__: cls for cls in TASKS})

BENCHMARK = mteb.Benchmark(
    name="CoverageBench",
    tasks=[cls() for cls in TASKS],
    description=("Information coverage across seven collections (334 topics with nuggets): does the top 20 "
                 "cover every aspect of the need? alpha-nDCG@20 (main), StRecall@20 and nDCG@20, for full "
                 "retrieval and for reranking the baselines' top 50."),
    reference=REFERENCE,
    citation=CITATION,
)


__all__ = ["BENCHMARK", "RERANK_TASKS", "RETRIEVAL_TASKS", "TASKS", "CoverageBenchTask",
           *(cls.__name__ for cls in TASKS)]
