"""mteb's descriptive statistics of a task, with the corpus streamed: the same numbers in bounded memory.

``AbsTask.calculate_descriptive_statistics`` holds every corpus id and text of a split in Python lists (1.6 KB a
document: about 1.9 GB at a million documents). Here the corpus is read batch by batch, from the layout's parquet
shards when the task hands them over (``LayoutRetrievalTask.corpus_from_shards``) or from a loaded ``Dataset``:
lengths are summed, distinct texts counted by ``complexir.layout.distinct.DistinctKeys`` (in memory, then on disk)
and the
judged documents the corpus holds noted, all in one pass; mteb's own functions compute the rest (query texts,
relevant documents, top-ranked lists) from what is small: queries and judgments. The structure and every value
equal mteb's (tests compare them on every task).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.types.statistics import RetrievalDescriptiveStatistics, TextStatistics

from complexir.layout.distinct import DistinctKeys, text_keys
from complexir.mteb.internals import statistics_parts

BATCH_DOCS = 16_384
SUBSET_STATISTICS = "hf_subset_descriptive_stats"  # mteb's key: per-subset statistics of a multilingual task


def task_statistics(task: Any, *, scratch_parent: str | Path | None = None) -> dict[str, Any]:
    """What ``task.calculate_descriptive_statistics()`` computes, split by split (for a multilingual task: over all
    subsets, with each subset's under ``hf_subset_descriptive_stats``), for a retrieval ``task`` whose data is
    loaded (or loads). ``scratch_parent``: where distinct-text counts of a large corpus spill (system temp by
    default)."""
    if not task.data_loaded:
        task.load_data()
    out: dict[str, Any] = {}
    for split in task.metadata.eval_splits:
        if task.metadata.is_multilingual:
            subsets = list(task.metadata.eval_langs)
            # mteb declares the per-subset key on its multilingual statistics type, not on this one
            overall: dict[str, Any] = dict(split_statistics([(f"{split}_{s}_", task.dataset[s][split])
                                                             for s in subsets], scratch_parent=scratch_parent))
            overall[SUBSET_STATISTICS] = {s: split_statistics([("", task.dataset[s][split])],
                                                              scratch_parent=scratch_parent)
                                          for s in task.metadata.hf_subsets}
            out[split] = overall
        else:
            out[split] = split_statistics([("", task.dataset["default"][split])], scratch_parent=scratch_parent)
    return out


def write_task_statistics(task: Any, path: Path, *, scratch_parent: str | Path | None = None) -> dict[str, Any]:
    """:func:`task_statistics`, written to ``path`` as mteb writes them (JSON, indent 4)."""
    stats = task_statistics(task, scratch_parent=scratch_parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        json.dump(stats, f, indent=4)
    return stats


def split_statistics(parts: Sequence[tuple[str, RetrievalSplitData]], *,
                     scratch_parent: str | Path | None = None) -> RetrievalDescriptiveStatistics:
    """mteb's ``RetrievalDescriptiveStatistics`` of one split of one subset (``parts`` = [("", data)]) or, as mteb
    computes a multilingual task's overall figures, of several subsets taken together, their query and document ids
    prefixed (``<split>_<subset>_``) so that equal ids of different subsets stay apart."""
    from datasets import concatenate_datasets

    mteb = statistics_parts()
    queries = concatenate_datasets([data["queries"] for _, data in parts]) if len(parts) > 1 else parts[0][1]["queries"]
    query_ids = {prefix + qid for prefix, data in parts for qid in data["queries"]["id"]}
    relevant_docs = {prefix + qid: {prefix + doc: score for doc, score in docs.items()}
                     for prefix, data in parts for qid, docs in data["relevant_docs"].items()}
    top_ranked = {prefix + qid: docs for prefix, data in parts for qid, docs in (data.get("top_ranked") or {}).items()}
    judged_docs = {doc for docs in relevant_docs.values() for doc in docs}
    corpora = [(prefix, data["corpus"]) for prefix, data in parts]

    corpus_stats, judged_present = _read_corpora(corpora, mteb.corpus_text, judged_docs, scratch_parent)
    queries_stats = mteb.text_statistics(mteb.query_texts(queries))
    num_queries = len(queries)
    num_documents = sum(len(c) for _, c in corpora)
    return RetrievalDescriptiveStatistics(
        num_samples=num_documents + num_queries,
        num_queries=num_queries,
        num_documents=num_documents,
        number_of_characters=corpus_stats["total_text_length"] + queries_stats["total_text_length"],
        documents_text_statistics=corpus_stats,
        documents_image_statistics=None,
        documents_audio_statistics=None,
        documents_video_statistics=None,
        queries_text_statistics=queries_stats,
        queries_image_statistics=None,
        queries_audio_statistics=None,
        queries_video_statistics=None,
        # mteb's function takes only the difference of the judged documents with the corpus ids: the judged ones the
        # corpus holds give the same difference as all of them
        relevant_docs_statistics=mteb.relevant_docs_statistics(relevant_docs, query_ids, judged_present, None),
        top_ranked_statistics=(mteb.top_ranked_statistics(top_ranked, num_queries)
                               if num_queries and top_ranked else None),
    )


def _read_corpora(corpora: Sequence[tuple[str, Any]], corpus_text: Any, judged_docs: set[str],
                  scratch_parent: str | Path | None) -> tuple[TextStatistics, set[str]]:
    """One pass over the corpora, a batch at a time: mteb's ``TextStatistics`` of their texts (as the model reads
    them), and which of ``judged_docs`` (prefixed ids) they hold."""
    total, count, shortest, longest = 0, 0, None, None
    present: set[str] = set()
    with DistinctKeys(scratch_parent=scratch_parent) as distinct:
        for prefix, corpus in corpora:
            for batch in _batches(corpus, ("id", "title", "text")):
                rows = batch.to_pylist()
                present.update(doc for doc in (prefix + row["id"] for row in rows) if doc in judged_docs)
                texts = [corpus_text(row) for row in rows]
                lengths = [len(t) for t in texts]
                total += sum(lengths)
                count += len(lengths)
                shortest = min(lengths) if shortest is None else min(shortest, *lengths)
                longest = max(lengths) if longest is None else max(longest, *lengths)
                distinct.add(text_keys(texts))
        if not count:
            raise ValueError("descriptive statistics of an empty corpus")  # mteb's min() of no lengths fails too
        assert shortest is not None and longest is not None  # set with the first of count's lengths
        return TextStatistics(total_text_length=total, min_text_length=shortest, average_text_length=total / count,
                              max_text_length=longest, unique_texts=distinct.count()), present


def _batches(corpus: Any, columns: Sequence[str]) -> Iterator[pa.Table]:
    """The corpus's ``columns`` (those it has) a batch at a time: parquet shards (``ParquetSource``) or a
    ``datasets.Dataset``."""
    present = [c for c in columns if c in corpus.column_names]
    if hasattr(corpus, "batches"):
        yield from corpus.select_columns(present).batches(BATCH_DOCS)
    else:
        yield from corpus.select_columns(present).with_format("arrow").iter(batch_size=BATCH_DOCS)
