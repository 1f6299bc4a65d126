"""IRSC (Lin et al. 2024): query–content pair files → 20 subsets ``<task>-<setting>`` in the standard layout.

IRSC measures semantic comprehension: five query types (``query``: question → passage, ``title``: title →
article, ``part``: a fragment → its paragraph, ``keyword``: keywords → text, ``summary``: summary → document)
in four language settings (``en``, ``zh``, ``en-zh``: English query, Chinese content, ``zh-en``). Each pair
has exactly one relevant content; the corpus of a subset is the set of its distinct contents.

Input: a folder (or a Hub dataset repo) of pair files, ``*.jsonl`` / ``*.csv`` / ``*.tsv``, read in sorted
path order. Columns (names configurable): ``query``, ``content``, ``query_language``, ``content_language``,
``task``. Where a file lacks a task or language column, the value comes from ``--task`` /
``--query-language`` / ``--content-language``, else from the file's path: its folder names and its name
split on ``_`` and ``.`` (e.g. ``keyword/en-zh.jsonl``, ``irsc_title_zh.tsv``) must hold exactly one task
name and at most one setting (``en``, ``zh``, ``en-zh``, ``zh-en``). A column present in the file always wins.

Rules (stated in the card too):
- contents are compared after stripping surrounding whitespace; identical contents of a subset are one
  document, id ``d-`` + the first 16 hex digits of SHA-256 of the content, so ids are stable across
  rebuilds and the same everywhere the content appears;
- a query is one pair: id ``q-`` + 16 hex digits of SHA-256 over (task, setting, query, content). The same
  query text paired with two different contents is therefore two queries, each with its one positive
  (IRSC's "one relevant content per query"), and the card counts it; an exact repeat of a pair is kept once
  and counted;
- a pair with an empty side, an unknown task or an unknown language is an ``UpstreamFormatError`` naming
  the file and line.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, overload

from complexir.layout.card import CardInfo
from complexir.layout.errors import UpstreamFormatError
from complexir.layout.writer import BenchmarkWriter
from complexir.registry.benchmarks import IRSC
from complexir.upstream import iter_jsonl
from complexir.upstream.options import BuildOptions, add_build_arguments
from complexir.upstream.release import resolve_release

logger = logging.getLogger(__name__)

SPEC = IRSC
TASKS = SPEC.subset_names()
SETTINGS = tuple(s.name for s in SPEC.settings)  # query language - content language; one language: both
SPLIT = "test"
SUFFIXES = {".jsonl": "jsonl", ".csv": "csv", ".tsv": "tsv"}

# Accepted spellings, compared lower-cased with "_" read as "-". Traditional Chinese (zh-tw, zh-hant) is
# deliberately absent: IRSC's Chinese is Simplified (cmn-Hans) and a silent merge would mislabel it.
LANGUAGE_ALIASES: dict[str, str] = {
    **dict.fromkeys(("en", "eng", "english", "en-us", "en-gb", "eng-latn"), "en"),
    **dict.fromkeys(("zh", "zho", "chi", "cmn", "chinese", "zh-cn", "zh-hans", "cmn-hans", "中文"), "zh"),
}
TASK_ALIASES: dict[str, str] = {
    **dict.fromkeys(("query", "question"), "query"),
    "title": "title",
    **dict.fromkeys(("part", "fragment"), "part"),
    **dict.fromkeys(("keyword", "keywords"), "keyword"),
    "summary": "summary",
}



@dataclass(frozen=True)
class Columns:
    """Upstream column names, and fixed values for files that lack a task or language column."""

    query: str = "query"
    content: str = "content"
    query_language: str = "query_language"
    content_language: str = "content_language"
    task: str = "task"
    fixed_task: str | None = None
    fixed_query_language: str | None = None
    fixed_content_language: str | None = None


@dataclass(frozen=True)
class Pair:
    task: str
    setting: str
    query: str
    content: str
    file: str  # path relative to the source folder
    line: int


def subset_name(task: str, setting: str) -> str:
    return f"{task}-{setting}"


def setting_of(query_language: str, content_language: str) -> str:
    return query_language if query_language == content_language else f"{query_language}-{content_language}"


def doc_id(content: str) -> str:
    return "d-" + hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


def query_id(task: str, setting: str, query: str, content: str) -> str:
    key = f"{task}\x1f{setting}\x1f{query}\x1f{content}"  # unit separator: no text contains it
    return "q-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def normalise_language(value: str) -> str | None:
    return LANGUAGE_ALIASES.get(value.strip().lower().replace("_", "-"))


def normalise_task(value: str) -> str | None:
    return TASK_ALIASES.get(value.strip().lower())


# -- reading the pair files ---------------------------------------------------------------------------
def _records(path: Path, kind: str) -> Iterator[tuple[int, dict[str, object]]]:
    """(line number, record) for each record of one file; the line is where the record starts."""
    if kind == "jsonl":
        yield from iter_jsonl(path)
        return
    # CSV follows RFC 4180 (quoted fields may span lines); TSV is the plain tab-separated convention, no
    # quoting, so a stray '"' inside a text stays text.
    # The csv module refuses fields over 131,072 characters by default; a whole document is longer than that.
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    with path.open(encoding="utf-8-sig", newline="") as handle:
        # strict: an unclosed quote is an error, not a field that swallows every following line
        reader = (csv.reader(handle, strict=True) if kind == "csv"
                  else csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
        start = 1
        try:
            try:
                header = next(reader)
            except StopIteration:
                return
            header = [h.strip() for h in header]
            start = reader.line_num + 1
            for fields in reader:
                if fields and any(f.strip() for f in fields):
                    if len(fields) != len(header):
                        raise UpstreamFormatError(
                            path, start, f"{len(fields)} fields where the header has {len(header)} ({header})")
                    yield start, dict(zip(header, fields, strict=True))
                start = reader.line_num + 1
        except csv.Error as error:  # e.g. a NUL byte, or an unclosed quote at the end of the file
            raise UpstreamFormatError(path, start, f"not valid {kind.upper()}: {error}") from None


def _from_path(relative: Path) -> tuple[str | None, str | None]:
    """(task, setting) named by a file's path, e.g. ``keyword/en-zh.jsonl`` or ``irsc_title_zh.tsv``."""
    tokens = [t.lower() for part in relative.with_suffix("").parts for t in re.split(r"[_.\s]+", part) if t]
    tasks = {TASK_ALIASES[t] for t in tokens if t in TASK_ALIASES}
    settings = {t for t in tokens if t in SETTINGS}
    return (tasks.pop() if len(tasks) == 1 else None), (settings.pop() if len(settings) == 1 else None)


@overload
def _field(path: Path, number: int, record: dict[str, object], name: str, what: str, fixed: str | None,
           *, required: Literal[True]) -> str: ...
@overload
def _field(path: Path, number: int, record: dict[str, object], name: str, what: str, fixed: str | None,
           *, required: bool) -> str | None: ...
def _field(path: Path, number: int, record: dict[str, object], name: str, what: str, fixed: str | None,
           *, required: bool) -> str | None:
    """One value of a record, stripped: the column if the file has it, else the fixed value, else None."""
    if name in record:
        value = record[name]
        if not isinstance(value, str):
            raise UpstreamFormatError(path, number, f"{what} (column {name!r}) must be a string, "
                                                    f"got {type(value).__name__} {value!r:.40}")
        if not value.strip():
            raise UpstreamFormatError(path, number, f"empty {what} (column {name!r})")
        return value.strip()
    if fixed is not None:
        return fixed
    if required:
        raise UpstreamFormatError(path, number, f"no column {name!r} for the {what}")
    return None


def read_pairs(path: Path, relative: Path, columns: Columns) -> Iterator[Pair]:
    """The pairs of one file, validated; errors name the file and line."""
    kind = SUFFIXES[path.suffix.lower()]
    path_task, path_setting = _from_path(relative)
    for number, record in _records(path, kind):
        query = _field(path, number, record, columns.query, "query", None, required=True)
        content = _field(path, number, record, columns.content, "content", None, required=True)
        raw_task = _field(path, number, record, columns.task, "task", columns.fixed_task,
                          required=False) or path_task
        if raw_task is None:
            raise UpstreamFormatError(path, number, f"no task: no column {columns.task!r}, no --task, and the "
                                                    f"file path names none of {TASKS}")
        task = normalise_task(raw_task)
        if task is None:
            raise UpstreamFormatError(path, number, f"unknown task {raw_task!r}; expected one of {TASKS}")

        langs = []
        for name, fixed, what, index in ((columns.query_language, columns.fixed_query_language, "query language", 0),
                                         (columns.content_language, columns.fixed_content_language,
                                          "content language", -1)):
            raw = _field(path, number, record, name, what, fixed, required=False)
            if raw is None and path_setting is not None:
                raw = path_setting.split("-")[index]
            if raw is None:
                raise UpstreamFormatError(path, number, f"no {what}: no column {name!r}, no fixed value, and the "
                                                        f"file path names no setting of {SETTINGS}")
            lang = normalise_language(raw)
            if lang is None:
                raise UpstreamFormatError(path, number, f"unknown {what} {raw!r}; accepted: "
                                                        f"{sorted(LANGUAGE_ALIASES)}")
            langs.append(lang)
        yield Pair(task, setting_of(*langs), query, content, relative.as_posix(), number)


def pair_files(folder: Path) -> list[Path]:
    """The pair files under ``folder``, in sorted relative-path order (hidden folders skipped)."""
    files = sorted(
        p for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    if not files:
        raise UpstreamFormatError(folder, None, f"no pair files ({', '.join('*' + s for s in SUFFIXES)})")
    return files


# -- building -----------------------------------------------------------------------------------------
@dataclass
class _Subset:
    docs: dict[str, str] = field(default_factory=dict)  # doc id -> content, first-seen order
    queries: dict[str, Pair] = field(default_factory=dict)  # query id -> its pair
    repeated_pairs: int = 0
    merged_contents: int = 0
    texts: dict[str, int] = field(default_factory=dict)  # query text -> how many contents it is paired with


def collect(folder: Path, columns: Columns) -> dict[str, _Subset]:
    """Every pair of every file, grouped by subset in TASKS × SETTINGS order."""
    subsets: dict[str, _Subset] = {}
    for path in pair_files(folder):
        relative = path.relative_to(folder)
        for pair in read_pairs(path, relative, columns):
            sub = subsets.setdefault(subset_name(pair.task, pair.setting), _Subset())
            qid = query_id(pair.task, pair.setting, pair.query, pair.content)
            if qid in sub.queries:
                sub.repeated_pairs += 1
                continue
            did = doc_id(pair.content)
            if did in sub.docs:
                if sub.docs[did] != pair.content:  # 64-bit collision: never silently merge two texts
                    raise UpstreamFormatError(path, pair.line, f"content hash {did} collides with another content")
                sub.merged_contents += 1
            else:
                sub.docs[did] = pair.content
            sub.queries[qid] = pair
            sub.texts[pair.query] = sub.texts.get(pair.query, 0) + 1
    order = [subset_name(t, s) for t in TASKS for s in SETTINGS]
    return {name: subsets[name] for name in order if name in subsets}


def _languages(setting: str) -> tuple[str, str]:
    parts = setting.split("-")
    return parts[0], parts[-1]


def _task_table(subsets: dict[str, _Subset]) -> str:
    head = "| task | " + " | ".join(f"{s} queries / contents" for s in SETTINGS) + " |"
    rows = [head, "|---|" + "---:|" * len(SETTINGS)]
    for task in TASKS:
        cells = []
        for setting in SETTINGS:
            sub = subsets.get(subset_name(task, setting))
            cells.append(f"{len(sub.queries):,} / {len(sub.docs):,}" if sub else "—")
        rows.append(f"| {task} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def build_irsc(
    source: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    columns: Columns = Columns(),
    revision: str | None = None,
    overwrite: bool = False,
    progress: bool = True,
    subsets: list[str] | None = None,
    before_swap: Callable[[Path], object] | None = None,
) -> Path:
    """Build the IRSC benchmark folder from pair files; returns ``out_dir``. ``subsets`` (tasks: ``query``,
    ``title``, ...) limits the build to those tasks, in all their settings."""
    unknown = sorted(set(subsets or ()) - set(TASKS))
    if unknown:
        raise ValueError(f"--subset {unknown}: unknown IRSC task(s); expected some of {list(TASKS)}")
    for option, value, normalise in (("--task", columns.fixed_task, normalise_task),
                                     ("--query-language", columns.fixed_query_language, normalise_language),
                                     ("--content-language", columns.fixed_content_language, normalise_language)):
        if value is not None and normalise(value) is None:
            raise ValueError(f"{option} {value!r}: unknown; accepted: "
                             f"{sorted(TASK_ALIASES if option == '--task' else LANGUAGE_ALIASES)}")
    # from the Hub: only the pair files
    release = resolve_release(source, revision, expected="IRSC pair files",
                              allow_patterns=[f"{glob}*{suffix}" for suffix in SUFFIXES for glob in ("", "**/")])
    folder = release.root
    # a local folder has no commit: its revision is a digest of the pair files it holds
    resolved_revision = release.card_revision(pair_files(folder))
    tasks = [t for t in TASKS if not subsets or t in subsets]
    found = collect(folder, columns)
    written = {name: sub for name, sub in found.items() if name.split("-", 1)[0] in tasks}
    if not written:
        raise UpstreamFormatError(folder, None, f"no pairs in any file (for the tasks {tasks})")
    missing = [subset_name(t, s) for t in tasks for s in SETTINGS if subset_name(t, s) not in written]
    if missing:
        logger.warning("IRSC source %s has no pairs for %d of %d subsets: %s", source, len(missing),
                       len(tasks) * len(SETTINGS), missing)
    info = CardInfo(
        benchmark=SPEC.folder,
        pretty_name=SPEC.pretty_name,
        license=SPEC.license,
        citation=SPEC.citation,
        source=f"local folder {folder.name!r} of pair files" if release.local else release.source,
        revision=resolved_revision,
        languages=["en", "zh"],
        task_ids=["document-retrieval"],
        extra={"task_table": _task_table(written),
               "missing_subsets": ", ".join(missing) if missing else "none"},
    )
    with BenchmarkWriter(out_dir, info, overwrite=overwrite, progress=progress, inputs=[folder],
                         before_swap=before_swap) as writer:
        for name, sub in written.items():
            query_lang, content_lang = _languages(name.split("-", 1)[1])
            writer.write_corpus(
                name,
                ({"id": did, "title": "", "text": text, "language": content_lang} for did, text in sub.docs.items()),
                total=len(sub.docs),
            )
            queries = [
                {"id": qid, "text": p.query, "language": query_lang,
                 "metadata": json.dumps({"file": p.file, "line": p.line}, ensure_ascii=False)}
                for qid, p in sub.queries.items()
            ]
            qrels = [{"query-id": qid, "corpus-id": doc_id(p.content), "score": 1} for qid, p in sub.queries.items()]
            writer.write_split(name, SPLIT, queries=queries, qrels=qrels)
            if sub.merged_contents:
                writer.note(name, "pairs whose content repeats an earlier pair's (one document)", sub.merged_contents)
            if sub.repeated_pairs:
                writer.note(name, "exact repeats of a pair (kept once)", sub.repeated_pairs)
            shared = sum(n for n in sub.texts.values() if n > 1)
            if shared:
                writer.note(name, "queries whose text is paired with another content too (kept as separate "
                                  "queries, one positive each)", shared)
    return Path(out_dir)


# -- CLI ----------------------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_build_arguments(parser, default_source=None, subsets=TASKS,
                        subset_help="build only these tasks, in every language setting",
                        source_help="folder of IRSC pair files (*.jsonl, *.csv, *.tsv) or a Hub dataset repo id "
                                    "holding them; no default: the paper's repository "
                                    "(github.com/Jasaxion/IRSC_Benchmark) could not be checked, so its format is "
                                    "not known to complexir")
    parser.add_argument("--query-column", default="query")
    parser.add_argument("--content-column", default="content")
    parser.add_argument("--query-language-column", default="query_language")
    parser.add_argument("--content-language-column", default="content_language")
    parser.add_argument("--task-column", default="task")
    parser.add_argument("--task", default=None, help=f"task of files without a task column: one of {TASKS}")
    parser.add_argument("--query-language", default=None,
                        help="query language of files without that column (en, eng, english, zh, zh-cn, chinese…)")
    parser.add_argument("--content-language", default=None,
                        help="content language of files without that column")
    parser.add_argument("--quiet", dest="no_progress", action="store_true", help="the older spelling of --no-progress")


@dataclass(frozen=True)
class IRSCOptions(BuildOptions):
    """An IRSC build: the pair files' column names, and the fixed values of files without a column."""

    query_column: str = "query"
    content_column: str = "content"
    query_language_column: str = "query_language"
    content_language_column: str = "content_language"
    task_column: str = "task"
    task: str | None = None  # task of files without a task column
    query_language: str | None = None
    content_language: str | None = None


OPTIONS = IRSCOptions


def build(options: IRSCOptions) -> int:
    if options.source is None:  # no default release: see add_arguments
        raise ValueError("IRSC has no default release: give the folder or Hub repo of its pair files as source")
    columns = Columns(
        query=options.query_column, content=options.content_column, query_language=options.query_language_column,
        content_language=options.content_language_column, task=options.task_column, fixed_task=options.task,
        fixed_query_language=options.query_language, fixed_content_language=options.content_language,
    )
    out = build_irsc(options.source, options.out, columns=columns, revision=options.revision,
                     overwrite=options.overwrite, progress=options.progress, subsets=options.subset_list(),
                     before_swap=options.before_swap)
    logger.info("IRSC written to %s", out)
    return 0
