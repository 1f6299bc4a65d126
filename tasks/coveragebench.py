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
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import mteb
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData

from complexir.layout.card import SUPPORT_THRESHOLD_KEY
from complexir.layout.reader import load, nugget_judgments
from complexir.metrics import adhoc_per_query, coverage_per_query, max_depth, mean_scores, parse_measure, rank_run
from complexir.registry.benchmarks import COVERAGEBENCH, RERANK_VARIANT, SubsetSpec

from .layout_task import LayoutRetrievalTask, define_task, spec_metadata

logger = logging.getLogger(__name__)

SPEC = COVERAGEBENCH
COVERAGE_MEASURES = ("alpha_nDCG@20", "StRecall@20")
SCORE_NAMES = {name: parse_measure(name).mteb_key for name in (*COVERAGE_MEASURES, "nDCG@20")}


class CoverageBenchTask(LayoutRetrievalTask):
    """A CoverageBench subset: MTEB retrieval plus coverage measures from the subset's nuggets."""

    benchmark_dir: ClassVar[str] = SPEC.folder
    k_values = (1, 3, 5, 10, 20)  # MTEB needs 1 (its "accuracy"); the coverage measures stop at 20
    rerank: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # (hf_subset, split) → topic → nugget → document → grade, read with the split
        self._coverage_judgments: dict[tuple[str, str], dict[str, dict[str, dict[str, int]]]] = {}
        # hf_subset → the lowest grade that supports a nugget (the card's; CRUX's graded labels support from 3)
        self._support_threshold: dict[str, int] = {}

    def load_split(self, path: str, revision: str | None, hf_subset: str, split: str) -> RetrievalSplitData:
        data = super().load_split(path, revision, hf_subset, split)
        if not self.rerank:
            data["top_ranked"] = None  # full-corpus retrieval: the baseline candidates are for the Rerank task
        elif not data.get("top_ranked"):
            raise FileNotFoundError(f"{self.metadata.name}: {path} has no "
                                    f"{self.layout_subsets[hf_subset]}-top_ranked config to rerank")
        nuggets = load(path, self.layout_subsets[hf_subset], "nuggets", split, revision=revision)
        self._coverage_judgments[(hf_subset, split)] = nugget_judgments(nuggets)
        self._support_threshold[hf_subset] = support_threshold(self.card(path, revision).metadata,
                                                               self.layout_subsets[hf_subset])
        return data

    def support_threshold(self, hf_subset: str) -> int:
        """The grade from which a judged document supports a nugget in this subset (1 unless the card says)."""
        return self._support_threshold.get(hf_subset, 1)

    def available_in(self, data_dir: str | os.PathLike) -> bool:
        if not super().available_in(data_dir):
            return False
        if not self.rerank:
            return True
        from complexir.layout.card import read_front_matter

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
        per_query = coverage_per_query(judgments, rankings, COVERAGE_MEASURES,
                                       rel_level=self.support_threshold(hf_subset))
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


def support_threshold(card_metadata: Mapping[str, Any], layout_subset: str) -> int:
    """The card's ``complexir: {support_threshold: {subset: grade}}`` for ``layout_subset`` (default 1)."""
    block = (card_metadata.get("complexir") or {}).get(SUPPORT_THRESHOLD_KEY) or {}
    value = block.get(layout_subset, 1) if isinstance(block, dict) else 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"the card's complexir.{SUPPORT_THRESHOLD_KEY}.{layout_subset} must be an integer >= 1, "
                         f"got {value!r}")
    return value


def _make(subset: SubsetSpec, rerank: bool) -> type[CoverageBenchTask]:
    name = SPEC.task_name(subset, RERANK_VARIANT if rerank else "")
    how = "Rerank the top 50 documents of a baseline run" if rerank else "Retrieve from the corpus"
    metadata = spec_metadata(
        SPEC, name=name,
        description=(f"CoverageBench {subset.name}: {subset.description}. {how} so that the top 20 cover every "
                     "nugget of the information need; scored by alpha-nDCG@20 (main), StRecall@20 and nDCG@20."),
        main_score="alpha_ndcg_at_20", type="Reranking" if rerank else "Retrieval",
        eval_langs=list(subset.languages), date=subset.dates, domains=list(subset.domains),
        annotations_creators="expert-annotated",
    )
    return define_task(
        CoverageBenchTask, metadata,
        f"CoverageBench {subset.name} ({'reranking baseline candidates' if rerank else 'full retrieval'}).",
        layout_subsets={"default": subset.name}, rerank=rerank,
    )


RETRIEVAL_TASKS = [_make(subset, rerank=False) for subset in SPEC.subsets]
RERANK_TASKS = [_make(subset, rerank=True) for subset in SPEC.subsets]
TASKS: list[type[CoverageBenchTask]] = RETRIEVAL_TASKS + RERANK_TASKS
globals().update({cls.__name__: cls for cls in TASKS})

BENCHMARK = mteb.Benchmark(
    name=SPEC.name,
    tasks=[cls() for cls in TASKS],
    description=("Information coverage across seven collections (334 topics with nuggets): does the top 20 "
                 "cover every aspect of the need? alpha-nDCG@20 (main), StRecall@20 and nDCG@20, for full "
                 "retrieval and for reranking the baselines' top 50."),
    reference=SPEC.reference,
    benchmark_hf_repo=SPEC.hub_id,  # the repo its tasks read: its eval.yaml makes it the Hub Benchmark
    citation=SPEC.citation,
)


__all__ = ["BENCHMARK", "RERANK_TASKS", "RETRIEVAL_TASKS", "TASKS", "CoverageBenchTask",
           *(cls.__name__ for cls in TASKS)]
