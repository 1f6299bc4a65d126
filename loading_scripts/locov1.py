"""LoCoV1 (Saad-Falcon et al. 2024): long-document retrieval, 12 tasks, from its two Hub datasets.

The release is two Hub dataset repos, ``hazyresearch/LoCoV1-Documents`` and ``hazyresearch/LoCoV1-Queries``,
each holding ``documents/<task>_test.jsonl``. The tasks are neither configs nor splits: every row carries a
``dataset`` column naming its task, and each task becomes one subset here (named after that value).

``--source`` is either

* a pair of Hub ids, ``DOCUMENTS_REPO,QUERIES_REPO`` (the default), fetched with
  ``huggingface_hub.snapshot_download(repo_type="dataset")``: with ``--subset``, only those tasks' files
  (``documents/<task>_test.jsonl``, the release's naming), else all of ``documents/``; or
* a local folder holding both repos side by side, exactly as they are on the Hub::

      SRC/LoCoV1-Documents/documents/<task>_test.jsonl    rows {pid, passage, dataset}
      SRC/LoCoV1-Queries/documents/<task>_test.jsonl      rows {qid, query, answer_pids, dataset}

Build rules (each counted in the card's build notes):

* relevance is binary: every id in ``answer_pids`` is a qrel of score 1 (a repeated id is judged once);
* a document whose ``passage`` is null (a quirk of the qasper tasks) is dropped together with the query of
  the same index (``<task>_Passage_<i>`` ↔ ``<task>_Query_<i>``), as the official evaluation does;
  any other qrel pointing at a dropped document, or at an id no document has, is kept: as in trec_eval, it is a
  relevant document no model retrieves (it stays in recall's denominator and the ideal DCG);
* a query left without a positive qrel is dropped by the writer (counted per split).

Documents are streamed file → parquet (one batch in memory at a time); only ids, and one task's queries, are
held in memory.
"""

from __future__ import annotations

import argparse
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from complexir.layout.card import CardInfo
from complexir.layout.errors import LayoutError, UpstreamFormatError
from complexir.layout.schema import check_name
from complexir.layout.writer import BenchmarkWriter
from complexir.registry.benchmarks import LOCOV1
from complexir.upstream import iter_jsonl, string_field
from complexir.upstream.options import BuildOptions, add_build_arguments
from complexir.upstream.release import content_digest, folder_files, local_folder, resolve_release

logger = logging.getLogger(__name__)

SPEC = LOCOV1
DOCUMENTS_REPO, QUERIES_REPO = SPEC.upstream
DEFAULT_SOURCE = f"{DOCUMENTS_REPO},{QUERIES_REPO}"
SPLIT = "test"

# The 12 tasks in the paper's order; subsets are written in this order, any other `dataset` value after them.
TASKS = SPEC.subset_names()

_PASSAGE_INDEX = re.compile(r"_Passage_(\d+)$")
_QUERY_INDEX = re.compile(r"_Query_(\d+)$")


@dataclass
class Release:
    """The two repos of one LoCoV1 release on disk, and where they came from."""

    documents: Path  # the LoCoV1-Documents repo folder
    queries: Path  # the LoCoV1-Queries repo folder
    source: str
    revision: str
    #: the task files fetched from the Hub when only some were asked for (a snapshot folder may hold others,
    #: from earlier downloads, which this build then does not read); None: every file there is the release's
    fetched: tuple[str, ...] | None = None


@dataclass
class _TaskDocs:
    """What the document pass of one task leaves behind for its query pass."""

    ids: set[str] = field(default_factory=set)
    dropped_ids: set[str] = field(default_factory=set)
    dropped_indices: set[int] = field(default_factory=set)


# -- locating the release -------------------------------------------------------------------------------
def resolve_source(
    source: str,
    *,
    revision: str | None = None,
    documents_revision: str | None = None,
    queries_revision: str | None = None,
    cache_dir: str | None = None,
    tasks: list[str] | None = None,
) -> Release:
    """The release: a local folder holding ``LoCoV1-Documents/`` and ``LoCoV1-Queries/``, or two Hub ids.

    ``revision`` applies to both Hub repos; ``documents_revision`` / ``queries_revision`` override it per repo.
    From the Hub, ``tasks`` limits the download to those tasks' files (a 54 MB task need not fetch 382 MB).
    """
    if "," not in str(source) and local_folder(source) is not None:  # a mistyped local path is named as such
        local = resolve_release(source).root
        docs, queries = local / "LoCoV1-Documents", local / "LoCoV1-Queries"
        for folder in (docs, queries):
            if not (folder / "documents").is_dir():
                raise UpstreamFormatError(
                    folder / "documents", None,
                    "missing: a local LoCoV1 source holds both Hub repos side by side, "
                    "<src>/LoCoV1-Documents/documents/<task>_test.jsonl and "
                    "<src>/LoCoV1-Queries/documents/<task>_test.jsonl",
                )
        # The card names the upstream repos, not this machine's path, so a build is the same wherever it runs.
        files = [f for folder in (docs, queries) for f in folder_files(folder / "documents")]
        return Release(docs, queries, f"local copy of {DOCUMENTS_REPO} and {QUERIES_REPO} ({local.name}/)",
                       content_digest(local, files))
    parts = [p.strip() for p in source.split(",")]
    if len(parts) != 2 or not all(parts):
        raise ValueError(
            f"--source {source!r}: expected a local folder or two Hub dataset ids 'DOCUMENTS_REPO,QUERIES_REPO' "
            f"(default {DEFAULT_SOURCE!r})"
        )
    fetched = tuple(dict.fromkeys(tasks)) if tasks else None
    patterns = [f"documents/{task}_{SPLIT}.jsonl" for task in fetched] if fetched else ["documents/*"]
    repos = [resolve_release(repo, repo_revision or revision, cache_dir=cache_dir,
                             allow_patterns=[*patterns, "README.md"])
             for repo, repo_revision in zip(parts, (documents_revision, queries_revision), strict=True)]
    for repo in repos:
        missing = [t for t in fetched or () if not (repo.root / "documents" / f"{t}_{SPLIT}.jsonl").is_file()]
        if missing:
            absent = ", ".join(f"documents/{t}_{SPLIT}.jsonl" for t in missing)
            raise FileNotFoundError(f"{repo.source}@{repo.hub_revision} has no {absent} (the release names each "
                                    f"task's file after it): check --subset {' '.join(missing)}")
    described = ", ".join(f"{repo.source}@{repo.hub_revision}" for repo in repos)
    return Release(repos[0].root, repos[1].root, source, described, fetched)


def _local_source(source: str) -> list[Path]:
    return [] if "," in str(source) else [Path(source).expanduser()]


def _task_files(repo: Path, only: tuple[str, ...] | None = None) -> dict[str, Path]:
    """``<task>`` → ``documents/<task>_test.jsonl`` of one repo (of the tasks ``only`` names, when given)."""
    files = {p.name[: -len(f"_{SPLIT}.jsonl")]: p for p in sorted((repo / "documents").glob(f"*_{SPLIT}.jsonl"))}
    if only is not None:
        files = {stem: path for stem, path in files.items() if stem in only}
    if not files:
        raise UpstreamFormatError(repo / "documents", None, f"no <task>_{SPLIT}.jsonl files")
    return files


# -- reading ----------------------------------------------------------------------------------------------
def _check_dataset(row: dict[str, Any], path: Path, line: int, task: str | None) -> str:
    """Each file holds one task: its rows must all carry the same ``dataset`` value."""
    value = string_field(row, "dataset", path, line)
    if task is None:  # the value names the subset, a folder of the build: a name, never a path
        try:
            check_name(value, "subset")
        except LayoutError as error:
            raise UpstreamFormatError(path, line, f"column 'dataset': {error}") from None
    elif value != task:
        raise UpstreamFormatError(path, line, f"column 'dataset' is {value!r}, earlier rows of this file say {task!r}")
    return value


def _first_dataset(path: Path) -> str:
    for line, row in iter_jsonl(path):
        return _check_dataset(row, path, line, None)
    raise UpstreamFormatError(path, None, "no rows")


def _iter_documents(path: Path, task: str, seen: _TaskDocs) -> Iterator[dict[str, str]]:
    """Corpus rows of one task; null passages are recorded in ``seen`` and skipped."""
    for line, row in iter_jsonl(path):
        _check_dataset(row, path, line, task)
        pid = string_field(row, "pid", path, line)
        if not pid:
            raise UpstreamFormatError(path, line, "column 'pid' is empty")
        if pid in seen.ids or pid in seen.dropped_ids:
            raise UpstreamFormatError(path, line, f"duplicate pid {pid!r}")
        passage = string_field(row, "passage", path, line, nullable=True)
        if passage is None:
            match = _PASSAGE_INDEX.search(pid)
            if match is None:
                raise UpstreamFormatError(
                    path, line, f"pid {pid!r} has a null passage but no '_Passage_<i>' index to pair its query with"
                )
            seen.dropped_ids.add(pid)
            seen.dropped_indices.add(int(match.group(1)))
            continue
        seen.ids.add(pid)
        yield {"id": pid, "title": "", "text": passage}


def _read_queries(path: Path, task: str, docs: _TaskDocs) -> tuple[list[dict], list[dict], dict[str, int]]:
    """(queries, qrels, counts of what was dropped) of one task."""
    queries: list[dict[str, str]] = []
    qrels: list[dict[str, Any]] = []
    counts = {"queries_paired_with_null_document": 0, "qrels_to_dropped_documents": 0,
              "qrels_to_unknown_documents": 0, "repeated_answer_pids": 0}
    seen_qids: set[str] = set()
    for line, row in iter_jsonl(path):
        _check_dataset(row, path, line, task)
        qid = string_field(row, "qid", path, line)
        text = string_field(row, "query", path, line)
        if not qid:
            raise UpstreamFormatError(path, line, "column 'qid' is empty")
        if qid in seen_qids:
            raise UpstreamFormatError(path, line, f"duplicate qid {qid!r}")
        seen_qids.add(qid)
        answers = row.get("answer_pids", ...)
        if answers is ... or not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise UpstreamFormatError(path, line, "column 'answer_pids': expected a list of strings")
        match = _QUERY_INDEX.search(qid)
        if match is not None and int(match.group(1)) in docs.dropped_indices:
            counts["queries_paired_with_null_document"] += 1
            continue
        if not text.strip():
            raise UpstreamFormatError(path, line, f"query {qid!r} has an empty 'query'")
        judged: set[str] = set()
        for pid in answers:
            if pid in judged:
                counts["repeated_answer_pids"] += 1
                continue
            judged.add(pid)
            if pid in docs.dropped_ids:
                counts["qrels_to_dropped_documents"] += 1
            elif pid not in docs.ids:
                counts["qrels_to_unknown_documents"] += 1
            qrels.append({"query-id": qid, "corpus-id": pid, "score": 1})
        queries.append({"id": qid, "text": text})
    return queries, qrels, counts


# -- building ---------------------------------------------------------------------------------------------
def _task_order(names: list[str]) -> list[str]:
    known = [t for t in TASKS if t in names]
    return known + sorted(set(names) - set(known))


def card_info(release: Release) -> CardInfo:
    return CardInfo(
        benchmark=SPEC.folder,
        pretty_name=SPEC.pretty_name,
        license=SPEC.license,
        citation=SPEC.citation,
        source=release.source,
        revision=release.revision,
        languages=["en"],
        task_categories=["text-retrieval"],
        task_ids=["document-retrieval"],
    )


def build_locov1(
    source: str = DEFAULT_SOURCE,
    out_dir: str | Path = "locov1",
    *,
    overwrite: bool = False,
    tasks: list[str] | None = None,
    revision: str | None = None,
    documents_revision: str | None = None,
    queries_revision: str | None = None,
    cache_dir: str | None = None,
    progress: bool = True,
    before_swap: Callable[[Path], object] | None = None,
) -> Path:
    """Build the LoCoV1 benchmark folder from ``source``; returns the folder. ``tasks`` limits the subsets."""
    release = resolve_source(source, revision=revision, documents_revision=documents_revision,
                             queries_revision=queries_revision, cache_dir=cache_dir, tasks=tasks)
    doc_files = _task_files(release.documents, release.fetched)
    query_files = _task_files(release.queries, release.fetched)
    if set(doc_files) != set(query_files):
        raise UpstreamFormatError(
            release.queries / "documents", None,
            f"the two repos hold different tasks: documents only {sorted(set(doc_files) - set(query_files))}, "
            f"queries only {sorted(set(query_files) - set(doc_files))}",
        )
    # The subset name is the rows' `dataset` value (the file name only locates it); both files must agree.
    by_task: dict[str, tuple[Path, Path]] = {}
    for stem in doc_files:
        task = _first_dataset(doc_files[stem])
        query_task = _first_dataset(query_files[stem])
        if query_task != task:
            raise UpstreamFormatError(query_files[stem], 1, f"'dataset' is {query_task!r}, the documents say {task!r}")
        if task in by_task:
            raise UpstreamFormatError(doc_files[stem], 1, f"task {task!r} also in {by_task[task][0]}")
        by_task[task] = (doc_files[stem], query_files[stem])
    if tasks:
        unknown = sorted(set(tasks) - set(by_task))
        if unknown:
            raise ValueError(f"--subset {unknown} not in the release (it has {_task_order(list(by_task))})")
    selected = [t for t in _task_order(list(by_task)) if not tasks or t in tasks]
    for task in selected:
        if task not in TASKS:
            logger.warning("LoCoV1: task %r is not one of the 12 published tasks; building it anyway", task)

    with BenchmarkWriter(out_dir, card_info(release), overwrite=overwrite, progress=progress,
                         inputs=[*_local_source(source), release.documents, release.queries],
                         before_swap=before_swap) as writer:
        for task in selected:
            doc_path, query_path = by_task[task]
            docs = _TaskDocs()
            writer.write_corpus(task, _iter_documents(doc_path, task, docs))
            queries, qrels, counts = _read_queries(query_path, task, docs)
            writer.write_split(task, SPLIT, queries=queries, qrels=qrels)
            writer.note(task, "documents dropped (null passage)", len(docs.dropped_ids))
            for key, value in counts.items():
                writer.note(task, key.replace("_", " "), value)
            logger.info("LoCoV1 %s: %d documents, %d queries", task, len(docs.ids), len(queries))
    return Path(out_dir)


# -- CLI ----------------------------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_build_arguments(
        parser, default_source=DEFAULT_SOURCE, subsets=TASKS, only_known_subsets=False,  # later tasks are built too
        source_help="'DOCUMENTS_REPO,QUERIES_REPO' Hub dataset ids or a local folder holding "
                    "LoCoV1-Documents/documents/<task>_test.jsonl and LoCoV1-Queries/documents/<task>_test.jsonl",
    )
    parser.add_argument("--tasks", nargs="+", dest="subset", metavar="TASK", help="the older spelling of --subset")
    parser.add_argument("--documents-revision", help="Hub revision of the documents repo (default: --revision)")
    parser.add_argument("--queries-revision", help="Hub revision of the queries repo (default: --revision)")
    parser.add_argument("--cache-dir", help="Hugging Face cache folder for the Hub download")


@dataclass(frozen=True)
class LoCoV1Options(BuildOptions):
    """A LoCoV1 build: the two repos' own revisions, and where the Hub download is cached."""

    documents_revision: str | None = None  # default: revision
    queries_revision: str | None = None  # default: revision
    cache_dir: str | None = None


OPTIONS = LoCoV1Options


def pinned_source(commits: dict[str, str]) -> dict[str, str]:
    """The options naming the two upstream repos at exactly these commits (repo id -> commit): what a build
    from the release into the cache (``complexir.hub.build_cache``) gives."""
    return {"source": f"{DOCUMENTS_REPO},{QUERIES_REPO}", "documents_revision": commits[DOCUMENTS_REPO],
            "queries_revision": commits[QUERIES_REPO]}


def build(options: LoCoV1Options) -> int:
    build_locov1(
        options.source_or(DEFAULT_SOURCE), options.out, overwrite=options.overwrite, tasks=options.subset_list(),
        revision=options.revision, documents_revision=options.documents_revision,
        queries_revision=options.queries_revision, cache_dir=options.cache_dir, progress=options.progress,
        before_swap=options.before_swap,
    )
    return 0
