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
from mteb.abstasks.task_metadata import TaskMetadata

from complexir.benchmarks import IRSC_CITATION as CITATION
from complexir.benchmarks import IRSC_REFERENCE as REFERENCE

from .layout_task import LayoutRetrievalTask

SETTINGS = ("en", "zh", "en-zh", "zh-en")
EVAL_LANGS: dict[str, list[str]] = {
    "en": ["eng-Latn"],
    "zh": ["cmn-Hans"],
    "en-zh": ["eng-Latn", "cmn-Hans"],
    "zh-en": ["cmn-Hans", "eng-Latn"],
}
HUB_REPO = "complexir/irsc"  # where `complexir push` publishes the built folder
HUB_REVISION = "main"


# task -> (class name suffix, what the query is, what the content is, MTEB domains)
_TASKS = {
    "query": ("Query", "a question", "the passage that answers it", ["Web", "Encyclopaedic", "Written"]),
    "title": ("Title", "a title", "the article it heads", ["News", "Academic", "Written"]),
    "part": ("Part", "a fragment cut from a paragraph", "the whole paragraph", ["Web", "Encyclopaedic", "Written"]),
    "keyword": ("Keyword", "a few keywords", "the text they were drawn from", ["Academic", "Medical", "Written"]),
    "summary": ("Summary", "a summary", "the document it summarises", ["News", "Written"]),
}


class IRSCTask(LayoutRetrievalTask):
    """One IRSC query type; its MTEB subsets are the four language settings."""

    benchmark_dir: ClassVar[str] = "irsc"
    irsc_task: ClassVar[str]
    allow_missing_subsets: ClassVar[bool] = True  # run the settings a data dir holds


def _metadata(task: str) -> TaskMetadata:
    suffix, query, content, domains = _TASKS[task]
    return TaskMetadata(
        name=f"IRSC{suffix}",
        description=(
            f"IRSC {task} task: the query is {query}, the relevant content {content}; exactly one relevant "
            "content per query. Subsets: English (en), Chinese (zh) and cross-lingual (en-zh: English query, "
            "Chinese content; zh-en). Main score recall@10; MAP@10 and nDCG@10 as in the paper."
        ),
        reference=REFERENCE,
        dataset={"path": HUB_REPO, "revision": HUB_REVISION},
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=EVAL_LANGS,
        main_score="recall_at_10",
        date=("2024-01-01", "2024-09-24"),  # paper release; the sources are older
        domains=domains,
        task_subtypes=["Question answering"] if task == "query" else [],
        license="not specified",  # mixed upstream licences, see the dataset card
        annotations_creators="derived",
        dialect=[],
        sample_creation="found",
        bibtex_citation=CITATION,
    )


def _make(task: str) -> type[IRSCTask]:
    suffix = _TASKS[task][0]
    attrs = {
        "__doc__": f"IRSC {task} task: {_TASKS[task][1]} → {_TASKS[task][2]}, in four language settings.",
        "__module__": __name__,
        "metadata": _metadata(task),
        "irsc_task": task,
        "layout_subsets": {setting: f"{task}-{setting}" for setting in SETTINGS},
    }
    return type(f"IRSC{suffix}", (IRSCTask,), attrs)


IRSCQuery = _make("query")
IRSCTitle = _make("title")
IRSCPart = _make("part")
IRSCKeyword = _make("keyword")
IRSCSummary = _make("summary")

TASKS: list[type[IRSCTask]] = [IRSCQuery, IRSCTitle, IRSCPart, IRSCKeyword, IRSCSummary]

BENCHMARK = mteb.Benchmark(
    name="IRSC",
    tasks=[cls() for cls in TASKS],
    description=(
        "IRSC: semantic comprehension in retrieval. Five query types (question, title, fragment, keywords, "
        "summary) × four language settings (en, zh, en-zh, zh-en); one relevant content per query. Read the "
        "scores per task and per subset (language setting), recall@10 first, then MAP@10 and nDCG@10."
    ),
    reference=REFERENCE,
    citation=CITATION,
)
