"""MTEB tasks for IRSC (Lin et al. 2024): one task per query type, one MTEB subset per language setting.

``IRSCQuery``, ``IRSCTitle``, ``IRSCPart``, ``IRSCKeyword`` and ``IRSCSummary`` each have the subsets ``en``,
``zh``, ``en-zh`` (English query, Chinese content) and ``zh-en``, read from the layout subsets
``<task>-<setting>`` of the ``irsc`` benchmark folder, so MTEB's per-subset scores are IRSC's per task, per
setting numbers. Main score: recall@10 (IRSC's r@10); MTEB also reports ``map_at_10`` (trec_eval's
``map_cut_10``, normalised by the number of relevant documents: IRSC's m@10) and ``ndcg_at_10``.

A data dir may hold only some settings (a demo, a partial release): the tasks then run the settings present.
"""

from __future__ import annotations

from typing import ClassVar

import mteb

from complexir.registry.benchmarks import IRSC, SubsetSpec

from .layout_task import LayoutRetrievalTask, define_task, spec_metadata

SPEC = IRSC
SETTINGS = tuple(setting.name for setting in SPEC.settings)
EVAL_LANGS: dict[str, list[str]] = {setting.name: list(setting.languages) for setting in SPEC.settings}


class IRSCTask(LayoutRetrievalTask):
    """One IRSC query type; its MTEB subsets are the four language settings."""

    benchmark_dir: ClassVar[str] = SPEC.folder
    irsc_task: ClassVar[str]
    allow_missing_subsets: ClassVar[bool] = True  # run the settings a data dir holds


def _make(subset: SubsetSpec) -> type[IRSCTask]:
    metadata = spec_metadata(
        SPEC, name=SPEC.task_name(subset),
        description=(
            f"IRSC {subset.name} task: {subset.description}; exactly one relevant content per query. Subsets: "
            "English (en), Chinese (zh) and cross-lingual (en-zh: English query, Chinese content; zh-en). Main "
            "score recall@10; MAP@10 and nDCG@10 as in the paper."
        ),
        main_score="recall_at_10", eval_langs=EVAL_LANGS,
        date=subset.dates,  # paper release; the sources are older
        domains=list(subset.domains), task_subtypes=list(subset.task_subtypes),
        license="not specified",  # mixed upstream licences (the card says "other"), see the dataset card
    )
    return define_task(IRSCTask, metadata, f"IRSC {subset.name} task: {subset.description}, in four language settings.",
                       irsc_task=subset.name,
                       layout_subsets={setting: f"{subset.name}-{setting}" for setting in SETTINGS})


TASKS: list[type[IRSCTask]] = [_make(subset) for subset in SPEC.subsets]
globals().update({cls.__name__: cls for cls in TASKS})

BENCHMARK = mteb.Benchmark(
    name=SPEC.name,
    tasks=[cls() for cls in TASKS],
    description=(
        "IRSC: semantic comprehension in retrieval. Five query types (question, title, fragment, keywords, "
        "summary) × four language settings (en, zh, en-zh, zh-en); one relevant content per query. Read the "
        "scores per task and per subset (language setting), recall@10 first, then MAP@10 and nDCG@10."
    ),
    reference=SPEC.reference,
    benchmark_hf_repo=SPEC.hub_id,  # the repo its tasks read: its eval.yaml makes it the Hub Benchmark
    citation=SPEC.citation,
)

__all__ = ["BENCHMARK", "EVAL_LANGS", "SETTINGS", "TASKS", "IRSCTask", *(cls.__name__ for cls in TASKS)]
