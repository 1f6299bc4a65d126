"""CRUMB (Killingback & Zamani 2025): the jfkback/crumb release → the standard layout.

    complexir build crumb --out DIR [--source jfkback/crumb | FOLDER] [--revision REV] [--subset TASK ...]

The release keeps its judgments inside the query rows (``passage_qrels``, ``passage_binary_qrels``,
``full_document_qrels``: lists of ``{id, label}`` with float, sometimes fractional labels), has a passage
corpus for all eight tasks and a full-document corpus for five, and one instruction per task. We write:

- subset ``<task>`` for every task: the passage corpus (with ``parent-id``) and the passage qrels (for the three
  MaxP tasks, a split whose ``passage_qrels`` hold no positive is not written, as their judgments may be at
  document level only: the subset can be corpus-only, and the MaxP task scores on ``<task>_full`` anyway);
- subset ``<task>_full`` for the five full-document tasks: full documents and full-document qrels
  (the three MaxP tasks read these qrels to score their collapsed passage runs);
- for ``paper_retrieval``, the binary qrels as the extra splits ``test_binary`` / ``validation_binary`` of the
  ``paper_retrieval`` queries and qrels configs (the official code computes recall, precision and RR on them).

Labels are cast with ``int()`` as the official ``crumb_eval`` does (0.5 → 0). The official evaluation averages
over every query with at least one judgment, so a query judged only 0 (after the cast) scores 0 there; the
layout drops such queries (they cannot be retrieved for) and its card records their ids, as for every benchmark,
so the MTEB tasks report the official mean exactly.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from complexir.layout.card import CardInfo
from complexir.layout.errors import UpstreamFormatError
from complexir.layout.writer import BenchmarkWriter
from complexir.registry.benchmarks import CRUMB
from complexir.upstream import iter_jsonl, string_field
from complexir.upstream.options import BuildOptions, add_build_arguments
from complexir.upstream.release import resolve_release

logger = logging.getLogger(__name__)

SPEC = CRUMB
HUB_ID = SPEC.upstream[0]

#: task name (the release's split name) → its folder in the release
TASK_FOLDERS: dict[str, str] = {s.name: s.upstream_name or s.name for s in SPEC.subsets}
TASKS = SPEC.subset_names()
#: tasks with a distinct full-document corpus (the other three hold the same content in both corpora)
FULL_DOC_TASKS = SPEC.subset_names(full_document=True)
#: tasks whose passage setting is officially scored with MaxP against the full-document qrels
MAXP_TASKS = SPEC.subset_names(maxp=True)
#: tasks whose recall/precision/RR use ``passage_binary_qrels`` in the official code
BINARY_TASKS = SPEC.subset_names(binary_qrels=True)
#: our split → the release's folder for it
SPLIT_FOLDERS = {"test": "eval", "validation": "val"}
BINARY_SUFFIX = "_binary"
FULL_SUFFIX = "_full"




def files_needed(task: str) -> list[str]:
    """The release files one task needs, relative to the release root."""
    folder = TASK_FOLDERS[task]
    files = [f"{folder}/{sub}/query_labels.jsonl" for sub in SPLIT_FOLDERS.values()]
    files.append(f"{folder}/passage_corpus.jsonl")
    if task in FULL_DOC_TASKS:
        files.append(f"{folder}/full_document_corpus.jsonl")
    return files


def _metadata(obj: dict[str, Any], path: Path, lineno: int) -> str | None:
    """The release's ``metadata`` is a JSON string; a dict (as a JSON reader may give) is re-serialised."""
    value = obj.get("metadata")
    if value is None:
        return "{}"  # never null in the layout: MTEB's collate function rejects None values
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    raise UpstreamFormatError(path, lineno, f"field 'metadata': expected a JSON string, got {type(value).__name__}")


@dataclass
class PassageIds:
    """Passages whose id is not ``<parent_id>:<chunk index>`` (UPSTREAM.md's form). MaxP collapses by the
    ``parent-id`` column, so such ids change nothing there, but they are counted: a reader splitting ids
    at the last ``:`` would collapse them differently."""

    checked: int = 0
    mismatches: int = 0
    examples: list[str] = field(default_factory=list)


def _is_chunk_of(passage_id: str, parent: str) -> bool:
    index = passage_id[len(parent) + 1:] if passage_id.startswith(parent + ":") else ""
    return index.isascii() and index.isdigit()


def corpus_rows(path: Path, *, with_parent: bool, ids: PassageIds | None = None) -> Iterator[dict[str, Any]]:
    """Standard corpus rows from a release corpus file, streamed; ``ids`` counts passage ids that do not
    follow ``<parent_id>:<chunk index>`` (rows with a null ``parent_id`` are whole documents: not checked)."""
    for lineno, obj in iter_jsonl(path):
        row: dict[str, Any] = {
            "id": string_field(obj, "document_id", path, lineno, empty_ok=False),
            "title": "",
            "text": string_field(obj, "document_content", path, lineno),
        }
        parent = string_field(obj, "parent_id", path, lineno, nullable=True)
        if with_parent:
            # null upstream: the passage is a whole document, so it is its own parent. Nulls would also break
            # MTEB's collate function, which rejects None in any column of a batch.
            row["parent-id"] = parent if parent is not None else row["id"]
            if ids is not None and parent is not None:
                ids.checked += 1
                if not _is_chunk_of(row["id"], parent):
                    ids.mismatches += 1
                    if len(ids.examples) < 3:
                        ids.examples.append(f"{row['id']!r} (parent {parent!r}, line {lineno})")
        elif parent is not None:
            raise UpstreamFormatError(path, lineno, f"a full document has parent_id {parent!r}; expected null")
        row["metadata"] = _metadata(obj, path, lineno)
        yield row


@dataclass
class QrelsList:
    """One judgment list of one split after the int cast, with the facts the card reports."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    judged_queries: list[str] = field(default_factory=list)  # queries with >= 1 judgment: the official mean's set
    labels: int = 0
    changed_by_cast: int = 0  # fractional labels: int() truncated them
    positives_lost: int = 0  # 0 < label < 1: relevant upstream, 0 after the cast
    duplicates: int = 0  # the same id twice in one list: the later label wins, as in the official dict


@dataclass
class SplitData:
    queries: list[dict[str, Any]]
    lists: dict[str, QrelsList]  # qrels key ("passage_qrels", ...) → judgments
    instructions: Counter


def _cast_label(value: Any, path: Path, lineno: int, key: str, doc: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UpstreamFormatError(path, lineno, f"{key}: label of {doc!r} must be a finite number, got {value!r}")
    if value < 0:
        raise UpstreamFormatError(path, lineno, f"{key}: label of {doc!r} is negative ({value})")
    if value >= 2**31:  # the layout's score column is int32
        raise UpstreamFormatError(path, lineno, f"{key}: label of {doc!r} is too large ({value})")
    return int(value)  # the official crumb_eval casts with int(): 0.5 -> 0, 1.5 -> 1


def read_queries(path: Path, keys: tuple[str, ...]) -> SplitData:
    """Queries and the requested judgment lists of one ``query_labels.jsonl`` (small: read whole)."""
    queries: list[dict[str, Any]] = []
    lists = {key: QrelsList() for key in keys}
    instructions: Counter = Counter()
    seen: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        qid = string_field(obj, "query_id", path, lineno, empty_ok=False)
        if qid in seen:
            raise UpstreamFormatError(path, lineno, f"duplicate query_id {qid!r} (first at line {seen[qid]})")
        seen[qid] = lineno
        instruction = string_field(obj, "instruction", path, lineno, nullable=True) or ""
        instructions[instruction] += 1
        queries.append({
            "id": qid,
            "text": string_field(obj, "query_content", path, lineno, empty_ok=False),
            "instruction": instruction,
            "metadata": _metadata(obj, path, lineno),
        })
        for key in keys:
            if key not in obj:  # UPSTREAM.md: every query row has all three lists (possibly empty)
                raise UpstreamFormatError(path, lineno, f"query {qid!r} has no {key!r} field")
            entries = obj[key]
            if entries is None:  # an explicit null: no judgments in this list
                entries = []
            if not isinstance(entries, list):
                raise UpstreamFormatError(path, lineno,
                                          f"{key}: expected a list of {{id, label}}, got {type(entries).__name__}")
            target = lists[key]
            labels: dict[str, int] = {}
            for entry in entries:
                if not isinstance(entry, dict):
                    raise UpstreamFormatError(path, lineno, f"{key}: expected {{id, label}} objects, got {entry!r:.60}")
                doc = entry.get("id")
                if not isinstance(doc, str) or not doc:
                    raise UpstreamFormatError(path, lineno, f"{key}: 'id' must be a non-empty string, got {doc!r:.60}")
                raw: Any = entry.get("label")  # a JSON value: _cast_label checks it
                label = _cast_label(raw, path, lineno, key, doc)
                target.labels += 1
                if label != raw:
                    target.changed_by_cast += 1
                if label == 0 and raw > 0:
                    target.positives_lost += 1
                if doc in labels:
                    target.duplicates += 1
                    del labels[doc]  # keep the later label, at the later position
                labels[doc] = label
            if labels:
                target.judged_queries.append(qid)
            target.rows.extend({"query-id": qid, "corpus-id": doc, "score": label} for doc, label in labels.items())
    return SplitData(queries=queries, lists=lists, instructions=instructions)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def build_crumb(source: str | os.PathLike = HUB_ID, out_dir: str | os.PathLike = "crumb", *,
                subsets: list[str] | None = None, revision: str | None = None, overwrite: bool = False,
                progress: bool = True, before_swap: Callable[[Path], object] | None = None) -> Path:
    """Build the CRUMB benchmark folder at ``out_dir`` from the release at ``source``; return the folder."""
    tasks = list(subsets or TASKS)
    unknown = [t for t in tasks if t not in TASK_FOLDERS]
    if unknown:
        raise ValueError(f"unknown CRUMB task(s) {unknown}; expected some of {list(TASKS)}")
    tasks = [t for t in TASKS if t in tasks]  # release order, deduplicated: deterministic builds
    release = resolve_release(source, revision, allow_patterns=[f for task in tasks for f in files_needed(task)],
                              expected="the CRUMB release")  # from the Hub: only the files these tasks need
    root = release.root
    rev = release.card_revision([root / f for task in tasks for f in files_needed(task) if (root / f).is_file()])
    missing = [f for task in tasks for f in files_needed(task) if not (root / f).is_file()]
    if missing:  # fail before writing anything, naming every missing file
        raise UpstreamFormatError(root, None, f"missing release files {missing}; build fewer tasks with --subset")
    logger.info("building CRUMB (%s) from %s at %s", ", ".join(tasks), source, rev)

    # label-cast facts and instructions, filled while building, rendered in the card
    cast_rows: list[list[Any]] = []
    instruction_rows: list[list[Any]] = []
    card = CardInfo(benchmark="crumb", pretty_name="CRUMB: Complex Retrieval Unified Multi-task Benchmark",
                    license=SPEC.license, citation=SPEC.citation, source=release.card_source(HUB_ID), revision=rev)

    with BenchmarkWriter(out_dir, card, overwrite=overwrite, progress=progress, inputs=[root],
                         before_swap=before_swap) as writer:
        for task in tasks:
            folder = root / TASK_FOLDERS[task]
            full = task in FULL_DOC_TASKS
            keys = ("passage_qrels", *(("passage_binary_qrels",) if task in BINARY_TASKS else ()),
                    *(("full_document_qrels",) if full else ()))
            splits = {split: read_queries(folder / sub / "query_labels.jsonl", keys)
                      for split, sub in SPLIT_FOLDERS.items()}

            plan: list[tuple[str, str, str]] = [(task, "passage_qrels", "")]  # (subset, qrels key, split suffix)
            if task in BINARY_TASKS:
                plan.append((task, "passage_binary_qrels", BINARY_SUFFIX))

            ids = PassageIds()
            writer.write_corpus(task, corpus_rows(folder / "passage_corpus.jsonl", with_parent=True, ids=ids))
            if ids.mismatches:
                logger.warning("%s: %d of %d passage ids are not <parent_id>:<chunk index>, e.g. %s", task,
                               ids.mismatches, ids.checked, ", ".join(ids.examples))
                writer.note(task, "passage ids not of the form <parent_id>:<chunk index> (MaxP uses parent-id)",
                            f"{ids.mismatches} of {ids.checked}")
            _write_splits(writer, task, splits, plan, cast_rows, maxp=task in MAXP_TASKS)
            if full:
                subset = task + FULL_SUFFIX
                writer.write_corpus(subset, corpus_rows(folder / "full_document_corpus.jsonl", with_parent=False))
                _write_splits(writer, task, splits, [(subset, "full_document_qrels", "")], cast_rows)

            for split, data in splits.items():
                distinct = sorted(data.instructions)
                if len(distinct) > 1:
                    logger.warning("%s/%s: %d different instructions", task, split, len(distinct))
                    writer.note(task, f"{split}: distinct instructions", len(distinct))
                for text in distinct:
                    shown = text.replace("|", "\\|").replace("\n", " ") if text else "*(empty: the query alone)*"
                    instruction_rows.append([task, split, data.instructions[text], shown])

        card.extra.update({
            "cast_table": _table(["subset", "split", "judgment list", "labels", "changed by int()",
                                  "positives lost (0 < label < 1)", "duplicate ids", "queries judged",
                                  "queries kept (≥ 1 positive)"], cast_rows),
            "instruction_table": _table(["task", "split", "queries", "instruction"], instruction_rows),
        })
    return Path(out_dir)


def _write_splits(writer: BenchmarkWriter, task: str, splits: dict[str, SplitData],
                  plan: list[tuple[str, str, str]], cast_rows: list[list[Any]], *, maxp: bool = False) -> None:
    """Write each (subset, judgment list, suffix) of ``plan`` for both splits.

    ``maxp``: the passage judgments of a MaxP task are not what scores it (``<task>_full``'s are), and the
    release may judge only documents there; a split without a passage positive is then not written (the
    subset may be left with its corpus alone) rather than failing the build.
    """
    for subset, key, suffix in plan:
        for split, data in splits.items():
            judged = data.lists[key]
            out_split = split + suffix
            if maxp and key == "passage_qrels" and not any(r["score"] > 0 for r in judged.rows):
                logger.warning("%s/%s: no passage-level positive in %s; split not written (the MaxP task scores "
                               "on %s%s)", subset, out_split, key, task, FULL_SUFFIX)
                writer.note(subset, f"{out_split}: not written",
                            f"no passage-level positive in {key} (judgments are at document level; the MaxP "
                            f"task reads queries and qrels from {task}{FULL_SUFFIX})")
                cast_rows.append([subset, out_split, key, judged.labels, judged.changed_by_cast,
                                  judged.positives_lost, judged.duplicates, len(judged.judged_queries),
                                  "– (not written)"])
                continue
            counts = writer.write_split(subset, out_split, queries=data.queries, qrels=judged.rows)
            cast_rows.append([subset, out_split, key, judged.labels, judged.changed_by_cast, judged.positives_lost,
                              judged.duplicates, len(judged.judged_queries), counts["queries"]])
            if judged.changed_by_cast:
                writer.note(subset, f"{out_split}: {key} labels changed by the int cast", judged.changed_by_cast)
            zero = len(judged.judged_queries) - counts["queries"]
            if zero:
                writer.note(subset, f"{out_split}: judged queries with no positive after the cast "
                                    "(dropped here, scored 0 in the official mean)", zero)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_build_arguments(parser, default_source=HUB_ID, subsets=TASKS,
                        source_help="Hub dataset id or a local folder with the release files")


def build(options: BuildOptions) -> int:
    out = build_crumb(options.source_or(HUB_ID), options.out, subsets=options.subset_list(),
                      revision=options.revision, overwrite=options.overwrite, progress=options.progress,
                      before_swap=options.before_swap)
    logger.info("CRUMB written to %s", out)
    return 0
