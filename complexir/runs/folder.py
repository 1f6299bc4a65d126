"""Rankings as files: the runs folder ``complexir run --save-runs`` writes and ``--runs``/``complexir fuse`` read.

A runs folder holds one system's rankings, one TREC run file per task, subset and split::

    RUNS/
      runs.json                           {"format": "complexir-runs/1", "system": ..., "revision": ..., "depth": ...,
                                           "tasks": {"<Task>": {"data": <DataProvenance.as_dict()> | null}}}
      <Task>/<hf_subset>/<split>.trec     qid Q0 docid rank score tag

``runs.json`` is optional when reading: a hand-made folder of TREC files in that layout is a runs folder too (its
revision is then a digest of its files).

:class:`FixedRunsSearch` serves a runs folder to ``mteb.evaluate`` as a search model, so a fixed ranking is scored
through exactly the path a model takes (the task's MaxP, binary qrels, nuggets, zero-score queries, per-query
files); :class:`RecordingSearch` wraps a model's search and writes what it returns. Neither knows any task: a task
tells a :class:`ExpectsTaskIds` model which query and document ids a run may name (:meth:`expect_ids`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import quote, unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from complexir.layout.atomic import remove_tree, write_file
from complexir.layout.errors import LeftoverError
from complexir.runs.trec_io import RunColumns, TrecFormatError, as_numpy, read_run_columns

logger = logging.getLogger(__name__)

FORMAT = "complexir-runs/1"
MANIFEST = "runs.json"
SUFFIX = ".trec"

Results = dict[str, dict[str, float]]


class RunsError(ValueError):
    """A runs folder or run file that cannot be scored; the message names the file (and line)."""


# ------------------------------------------------------------------------------------------------ one run file
def read_run_file(path: str | os.PathLike[str]) -> Results:
    """``qid -> docid -> score`` of a TREC run file (``qid Q0 docid rank score tag``; rank and tag are ignored, as
    trec_eval ignores them). A wrong field count or a NaN/inf score is a ``TrecFormatError`` naming ``path:line``
    (:mod:`complexir.runs.trec_io` parses the columns); so is a (qid, docid) listed twice, which a ranking cannot
    hold."""
    columns = read_run_columns(path)
    run: Results = {}
    # the topics as plain strings first: a dictionary column's to_pylist costs twenty times a string column's
    topics, docs = columns.topic.cast(pa.string()).to_pylist(), columns.doc.to_pylist()
    scores = columns.score.tolist()
    # a run lists each query's documents together: one dict update per stretch of lines of one query, not a
    # Python step per line (a query's stretches that recur later are merged the same way)
    starts = _topic_starts(columns)
    for start, stop in zip(starts, [*starts[1:], len(topics)], strict=True):
        ranked = run.setdefault(topics[start], {})
        before = len(ranked)
        ranked.update(zip(docs[start:stop], scores[start:stop], strict=True))
        if len(ranked) != before + stop - start:
            doc = _first_repeat(topics[:stop], docs[:stop], topics[start])
            raise TrecFormatError(path, line_of(path, topics[start], doc, occurrence=2),
                                  f"query {topics[start]!r}, document {doc!r} is listed twice")
    return run


def _topic_starts(columns: RunColumns) -> list[int]:
    """The rows where the topic differs from the row before (row 0 included): where each query's lines start."""
    if len(columns.score) == 0:
        return []
    ids = as_numpy(pc.dictionary_encode(columns.topic.cast(pa.string())).combine_chunks().indices)
    return [0, *(np.flatnonzero(ids[1:] != ids[:-1]) + 1).tolist()]


def _first_repeat(topics: list[str], docs: list[str], topic: str) -> str:
    """The first document of ``topic`` that the file lists a second time."""
    seen: set[str] = set()
    for t, doc in zip(topics, docs, strict=True):
        if t == topic:
            if doc in seen:
                return doc
            seen.add(doc)
    raise AssertionError(f"no repeat of {topic!r}")  # only called after one was counted


def check_run_file(path: str | os.PathLike[str]) -> None:
    """What :func:`read_run_file` would refuse (a malformed line, a NaN/inf score, a (qid, docid) listed twice),
    checked on the columns alone, without building the run: a folder's runs are all checked before any is scored,
    then each read once when its task asks for it."""
    columns = read_run_columns(path)
    pairs = pc.binary_join_element_wise(columns.topic.cast(pa.string()), columns.doc, "\n")
    if pc.count_distinct(pairs).as_py() != len(columns.score):
        read_run_file(path)  # finds the repeat and names its line


def line_of(path: str | os.PathLike[str], qid: str, doc: str | None = None, occurrence: int = 1) -> int | None:
    """The line number of the ``occurrence``-th line of ``path`` for query ``qid`` (and document ``doc``): where an
    error found after parsing points. Read again only then, so the fast reader stays fast."""
    seen = 0
    with open(path, encoding="utf-8-sig", newline="") as f:
        for number, line in enumerate(f, 1):
            fields = [p for p in line.replace("\t", " ").strip(" \r\n").split(" ") if p]  # as trec_io splits
            if fields and fields[0] == qid and (doc is None or (len(fields) > 2 and fields[2] == doc)):
                seen += 1
                if seen == occurrence:
                    return number
    return None


def ranked(results: Mapping[str, float], depth: int | None = None) -> list[tuple[str, float]]:
    """One query's documents best first, ties by document id descending (trec_eval's order, and MTEB's search's),
    the first ``depth`` of them (all when None)."""
    order = sorted(results.items(), key=lambda item: (item[1], item[0]), reverse=True)
    return order if depth is None else order[:depth]


def encode_id(item: str) -> str:
    """An id as a TREC run can hold it: one without white space as it is; one with white space (film titles,
    Wikipedia titles) with each white-space character and each ``%`` percent-encoded (``Alien: Covenant`` ->
    ``Alien:%20Covenant``), which :func:`decode_id` undoes."""
    if not any(c.isspace() for c in item):
        return item
    return "".join(quote(c, safe="") if c.isspace() or c == "%" else c for c in item)


def decode_id(item: str, known: Mapping[str, Any] | set[str] | frozenset[str]) -> str | None:
    """The id of ``known`` that a run's ``item`` names: itself, else its percent-decoding (:func:`encode_id`);
    None when neither is known."""
    if item in known:
        return item
    if "%" in item:
        decoded = unquote(item)
        if decoded in known:
            return decoded
    return None


def write_run_file(path: str | os.PathLike[str], results: Mapping[str, Mapping[str, float]], tag: str,
                   depth: int | None = None) -> Path:
    """Write ``results`` as a TREC run, queries in id order, each query's top ``depth`` documents best first (ties
    by id descending), scores as ``repr`` (which reads back to the same float), ids with white space
    percent-encoded (:func:`encode_id`). Written beside and renamed into place, so a reader never sees half a file.
    An empty id or a score that is not finite cannot be written and is refused naming the query and document."""
    path = Path(path)
    tag = "_".join(str(tag).split()) or "run"
    lines = []
    for qid in sorted(results):
        for rank, (doc, score) in enumerate(ranked(results[qid], depth), 1):
            if not math.isfinite(score):
                raise RunsError(f"{path}: query {qid!r}, document {doc!r}: score {score!r} is not finite")
            if not qid or not doc:
                raise RunsError(f"{path}: query {qid!r}, document {doc!r}: a TREC run cannot hold an empty id")
            lines.append(f"{encode_id(qid)} Q0 {encode_id(doc)} {rank} {float(score)!r} {tag}\n")
    write_file(path, "".join(lines))
    return path


def file_digest(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ------------------------------------------------------------------------------------------------ a runs folder
Entry = tuple[str, str, str]  # (task, hf_subset, split)
#: ``runs.json`` holds ``"complete": false`` while a command is writing the folder: one that stopped half-way
#: (Ctrl-C, a full disk, a crash) never looks like a finished runs folder, with its manifest or as a hand-made one
COMPLETE = "complete"


def read_manifest(file: Path, *, unfinished_ok: bool = False) -> dict[str, Any]:
    """``runs.json``, its fields checked: RunsError naming the file for anything but the format of the module
    docstring, and (unless ``unfinished_ok``) for the manifest of a folder whose writing did not finish."""
    def refuse(problem: str) -> RunsError:
        return RunsError(f"{file}: {problem}; runs.json is written by complexir run --save-runs and complexir fuse: "
                         "write the folder again, or delete runs.json to read its TREC files as a hand-made folder")

    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RunsError(f"{file}:{error.lineno}: not valid JSON ({error.msg}); write the folder again, or delete "
                        "runs.json to read its TREC files as a hand-made folder") from None
    except UnicodeDecodeError:
        raise refuse("not UTF-8 text") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise refuse(f"not a runs manifest (expected \"format\": \"{FORMAT}\")")
    for key in ("system", "revision"):
        if not isinstance(manifest.get(key), (str, type(None))):
            raise refuse(f'"{key}" must be a string, got {type(manifest[key]).__name__} {manifest[key]!r:.60}')
    depth = manifest.get("depth")
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 1):
        raise refuse(f'"depth" must be a whole number >= 1 or null, got {depth!r:.60}')
    tasks = manifest.get("tasks", {})
    if not isinstance(tasks, dict):
        raise refuse('"tasks" must be an object (task name -> {"data": ...})')
    for task, entry in tasks.items():
        data = entry.get("data") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(data, (dict, type(None))) or (
                data is not None and not isinstance(data.get("revision"), (str, type(None)))):
            raise refuse(f'task {task!r:.60}: expected {{"data": {{"revision": "...", ...}} or null}}')
    if manifest.get(COMPLETE, True) is not True and not unfinished_ok:
        raise RunsError(f"{file}: the command writing this runs folder did not finish (interrupted, or it failed), so "
                        "its run files may be partial; write it again")
    return manifest


class RunsFolder:
    """A runs folder (see the module docstring), or one TREC file standing for one task, subset and split
    (:meth:`of_file`). A run is read when asked for; the last one read is kept (a task may search twice), so a
    folder of many large runs is never held whole."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path).expanduser()
        if not self.path.is_dir():
            raise RunsError(f"{self.path}: not a runs folder (<Task>/<subset>/<split>{SUFFIX} files, optionally "
                            f"{MANIFEST})")
        self.manifest = self._read_manifest()
        self._files: dict[Entry, Path] = {}
        for file in sorted(self.path.glob(f"*/*/*{SUFFIX}")):
            rel = file.relative_to(self.path)
            self._files[(rel.parts[0], rel.parts[1], file.name[: -len(SUFFIX)])] = file
        if not self._files:
            raise RunsError(f"{self.path}: no run file in the runs layout (<Task>/<subset>/<split>{SUFFIX})")
        for task in self.manifest.get("tasks", {}):
            if not any(entry[0] == task for entry in self._files):
                raise RunsError(f"{self.path / MANIFEST}: task {task!r} is listed but has no run file")
        self._runs: dict[Entry, Results] = {}
        self._file_digests: dict[Entry, str] | None = None

    @classmethod
    def of_file(cls, path: str | os.PathLike[str], task: str, hf_subset: str, split: str) -> RunsFolder:
        """One TREC file as the run of ``task`` (``hf_subset``, ``split``)."""
        file = Path(path).expanduser()
        if not file.is_file():
            raise RunsError(f"{file}: no such run file")
        folder = object.__new__(cls)
        folder.path = file
        folder.manifest = {}
        folder._files = {(task, hf_subset, split): file}
        folder._runs = {}
        folder._file_digests = None
        return folder

    def _read_manifest(self) -> dict[str, Any]:
        file = self.path / MANIFEST
        return read_manifest(file) if file.is_file() else {}

    # -- what it holds ------------------------------------------------------------------------------------------
    @property
    def system(self) -> str | None:
        """The system that made the runs (``runs.json``), None for a hand-made folder."""
        return self.manifest.get("system")

    @property
    def file_digests(self) -> dict[Entry, str]:
        """Each run file's sha256, in entry order (each file hashed once)."""
        if self._file_digests is None:
            self._file_digests = {entry: file_digest(file) for entry, file in sorted(self._files.items())}
        return self._file_digests

    @property
    def digest(self) -> str:
        """sha256 over every run file (its path in the folder and its bytes): what names a hand-made folder."""
        digest = hashlib.sha256()
        for entry, file_sha in self.file_digests.items():
            digest.update("/".join(entry).encode() + b"\0" + file_sha.encode() + b"\n")
        return digest.hexdigest()

    @property
    def revision(self) -> str:
        """``runs.json``'s revision, else ``runs-<digest of the run files>``."""
        return self.manifest.get("revision") or f"runs-{self.digest[:16]}"

    def tasks(self) -> list[str]:
        return sorted({task for task, _, _ in self._files})

    def entries(self) -> list[Entry]:
        return sorted(self._files)

    def data(self, task: str) -> dict[str, Any] | None:
        """The provenance of the data ``task``'s runs were made on, as ``runs.json`` records it."""
        return (self.manifest.get("tasks", {}).get(task) or {}).get("data")

    def path_of(self, task: str, hf_subset: str, split: str) -> Path:
        """Where the run of (task, subset, split) is, or would be."""
        return self._files.get((task, hf_subset, split), self.path / task / hf_subset / f"{split}{SUFFIX}")

    def has(self, task: str, hf_subset: str, split: str) -> bool:
        return (task, hf_subset, split) in self._files

    def check(self, task: str, hf_subset: str, split: str) -> None:
        """The run of (task, subset, split) checked as :func:`read_run_file` would (refused naming file and line),
        without being built or kept."""
        if (task, hf_subset, split) in self._files:
            check_run_file(self._files[(task, hf_subset, split)])

    def run(self, task: str, hf_subset: str, split: str) -> Results | None:
        """The run of (task, subset, split), None when the folder has none."""
        key = (task, hf_subset, split)
        if key not in self._files:
            return None
        if key not in self._runs:
            self._runs = {key: read_run_file(self._files[key])}
        return self._runs[key]

    def provenance(self) -> dict[str, Any]:
        """What names these runs wherever a score made from them is filed: the folder, its digest and every file's."""
        return {"runs": str(self.path.resolve()), "system": self.system, "revision": self.revision,
                "sha256": self.digest,
                "files": {"/".join(entry): sha for entry, sha in self.file_digests.items()}}

    def describe(self) -> str:
        made = f"made by {self.system}, " if self.system else ""
        return f"fixed runs {self.path} ({made}{len(self._files)} run file(s), sha256 {self.digest[:16]})"


class RunsFolderWriter:
    """Writes a runs folder: :meth:`write` each ranking (a run file, atomically), then :meth:`close` writes
    ``runs.json``. Writing into a folder of another system's runs is refused; one of the same system and revision
    keeps the tasks it already holds."""

    def __init__(self, path: str | os.PathLike[str], system: str, revision: str | None, depth: int | None):
        self.path = Path(path).expanduser()
        self.system, self.revision = system, revision
        # ``depth``: the most documents per query a write keeps unless it says; ``self.depth``: the deepest ranking
        # written (what runs.json records), never more than the rankings held (9 for a 9-document corpus)
        self.cut = depth
        self.depth: int | None = None
        self.tasks: dict[str, dict[str, Any]] = {}
        self._started = False
        self._written: set[str] = set()  # the tasks this writer wrote run files of
        manifest = self.path / MANIFEST
        if self.path.exists() and not self.path.is_dir():
            raise RunsError(f"{self.path}: not a folder")
        if manifest.is_file():
            old = read_manifest(manifest, unfinished_ok=True)  # one being rewritten
            if (old.get("system"), old.get("revision")) != (system, revision):
                raise RunsError(f"{self.path} holds runs of {old.get('system')} (revision {old.get('revision')}), "
                                f"not {system} (revision {revision}); choose another folder")
            self.tasks = dict(old.get("tasks", {}))
            self.depth = old.get("depth")
        elif self.path.is_dir() and any(self.path.iterdir()):
            raise RunsError(f"{self.path} holds files complexir did not write (it has no {MANIFEST}): choose another "
                            "folder (an empty or new one)")

    def path_of(self, task: str, hf_subset: str, split: str) -> Path:
        return self.path / task / hf_subset / f"{split}{SUFFIX}"

    def write(self, task: str, hf_subset: str, split: str, results: Mapping[str, Mapping[str, float]], *,
              data: dict[str, Any] | None = None, depth: int | None = None) -> Path:
        for part in (task, hf_subset, split):
            if not part or "/" in part or part in (".", ".."):
                raise RunsError(f"{self.path}: {part!r} cannot name a folder of a runs folder")
        if not self._started:  # marked unfinished before the first run file changes, until close()
            self._write_manifest(complete=False)
            self._started = True
        self._written.add(task)
        depth = self.cut if depth is None else depth
        path = write_run_file(self.path_of(task, hf_subset, split), results, self.system, depth)
        entry = self.tasks.setdefault(task, {})
        if data is not None or "data" not in entry:
            entry["data"] = data
        # the depth the file holds: the search's top_k (1,000) cut to what the corpus had (9 documents in a demo)
        written = max((len(docs) for docs in results.values()), default=0)
        if depth is not None:
            written = min(written, depth)
        self.depth = max(written, self.depth or 0)
        return path

    def discard(self, task: str) -> None:
        """Drop ``task``'s runs if this writer wrote any (its evaluation failed part-way: they may be partial)."""
        if task in self._written:
            self._written.discard(task)
            self.tasks.pop(task, None)
            problem = remove_tree(self.path / task)
            if problem:
                raise LeftoverError(self.path / task, f"{self.path / task}: a failed task's runs could not be "
                                                      f"deleted ({problem}); delete them by hand")

    def close(self) -> Path:
        """``runs.json``, marking the folder complete: call it only when every run was written."""
        return self._write_manifest(complete=True)

    def _write_manifest(self, complete: bool) -> Path:
        manifest = {"format": FORMAT, "system": self.system, "revision": self.revision, "depth": self.depth,
                    "tasks": dict(sorted(self.tasks.items())), **({} if complete else {COMPLETE: False})}
        return write_file(self.path / MANIFEST, json.dumps(manifest, indent=1) + "\n")


# ------------------------------------------------------------------------------------------------ search models
@runtime_checkable
class ExpectsTaskIds(Protocol):
    """A search model that checks the ids it returns (fixed runs): before a task evaluates a subset and split, it
    says which query ids a run of it may name (its queries, judged ones without a positive included) and which
    document ids besides the corpus's (MaxP's documents, for a run at document level)."""

    def expect_ids(self, task: str, hf_subset: str, split: str, *, queries: Iterable[str],
                   documents: Iterable[str] = ()) -> None: ...

    def run_scores(self, task: str, hf_subset: str, split: str) -> dict[str, float]: ...


def corpus_ids(corpus: Any) -> set[str]:
    """The document ids of a corpus as MTEB hands it to ``index``: a ``datasets.Dataset`` or parquet shards."""
    if hasattr(corpus, "read_columns"):  # complexir.systems.streaming_search.ParquetSource: the id column only
        return set(corpus.read_columns(["id"]).column("id").to_pylist())
    return set(corpus["id"])


class FixedRunsSearch:
    """An MTEB search model that returns the rankings of a :class:`RunsFolder`, filed under ``name``.

    ``search`` returns each query's top ``top_k`` documents of its run (all of them when it has fewer, so a MaxP
    task collapses exactly what the file holds), ties by id descending. Refused with a line naming the file and
    line: a task, subset or split the folder has no run for, a query the task does not have, a document neither in
    the corpus nor among the ids the task allows (:meth:`expect_ids`). A query of the task that the run does not
    rank is returned empty, so it scores 0 (as ``trec_eval -c``); :meth:`run_scores` says how many.
    """

    def __init__(self, folder: RunsFolder, name: str):
        from mteb.models.model_meta import ModelMeta

        self.folder = folder
        # create_empty's name is a placeholder: ModelMeta insists on "org/name", and --model-name files results
        # under any name, as it does for a model. The run files (and their digests) travel in the meta, which mteb
        # saves beside the results (model_meta.json).
        meta = ModelMeta.create_empty({"name": "complexir/fixed-runs", "revision": folder.revision})
        self._meta = meta.model_copy(update={"name": name, "loader_kwargs": {"fixed_runs": folder.provenance()}})
        self._corpus: set[str] = set()
        self._expected: dict[Entry, tuple[set[str], set[str]]] = {}
        self._checked: dict[Entry, Results] = {}  # each run once checked, its ids as the task names them
        #: (task, subset, split) -> (queries searched, of them not in the run)
        self.missing: dict[Entry, tuple[int, int]] = {}

    @property
    def mteb_model_meta(self) -> Any:
        return self._meta

    def expect_ids(self, task: str, hf_subset: str, split: str, *, queries: Iterable[str],
                   documents: Iterable[str] = ()) -> None:
        self._expected[(task, hf_subset, split)] = (set(queries), set(documents))

    def run_scores(self, task: str, hf_subset: str, split: str) -> dict[str, float]:
        """``queries_not_in_run``: how many of the queries searched the run does not rank (each scored 0)."""
        if (task, hf_subset, split) not in self.missing:
            return {}
        return {"queries_not_in_run": float(self.missing[(task, hf_subset, split)][1])}

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, encode_kwargs: Any = None,
              num_proc: int | None = None, **kwargs: Any) -> None:
        self._corpus = corpus_ids(corpus)

    def run_for(self, task: str, hf_subset: str, split: str) -> Results:
        """The run of (task, subset, split); a missing one is refused naming the file expected."""
        run = self.folder.run(task, hf_subset, split)
        if run is None:
            raise RunsError(f"{self.folder.path_of(task, hf_subset, split)}: no run for task {task} (subset "
                            f"{hf_subset}, split {split}) in {self.folder.path}")
        return run

    def check(self, task: str, hf_subset: str, split: str, searched: Iterable[str]) -> Results:
        """The run, its ids checked against the task's once (the first search of a subset and split)."""
        key = (task, hf_subset, split)
        run = self.run_for(task, hf_subset, split)
        if key in self._checked:
            return self._checked[key]
        path = self.folder.path_of(task, hf_subset, split)
        queries, documents = self._expected.get(key, (set(), set()))
        queries = queries | set(searched)
        known_docs = self._corpus | documents
        if queries.issuperset(run) and known_docs.issuperset(itertools.chain.from_iterable(run.values())):
            self._checked[key] = run  # every id as the task names it: nothing to decode (the usual case)
            return run
        checked: Results = {}
        spelled: dict[tuple[str, str], tuple[str, str]] = {}  # (query, document) -> the (qid, doc) that named it
        for qid, docs in run.items():
            query = decode_id(qid, queries)
            if query is None:
                raise RunsError(f"{path}:{line_of(path, qid)}: query {qid!r} is not a query of {task} ({hf_subset}, "
                                f"{split})")
            ranking = checked.setdefault(query, {})
            for doc, score in docs.items():
                document = decode_id(doc, known_docs)
                if document is None:
                    raise RunsError(f"{path}:{line_of(path, qid, doc)}: document {doc!r} (query {qid!r}) is not in "
                                    f"the corpus of {task} ({hf_subset}, {split})")
                if document in ranking:  # two spellings of one id (percent-encoded and not): a ranking holds it once
                    first = spelled[(query, document)]
                    raise RunsError(f"{path}:{line_of(path, qid, doc)}: query {qid!r}, document {doc!r} is listed "
                                    f"twice: it names {document!r}, as {first[1]!r} (query {first[0]!r}, line "
                                    f"{line_of(path, *first)}) does")
                ranking[document] = score
                spelled[(query, document)] = (qid, doc)
        self._checked[key] = checked
        return checked

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, top_k: int,
               encode_kwargs: Any = None, top_ranked: Any = None, num_proc: int | None = None,
               **kwargs: Any) -> Results:
        task = task_metadata.name
        searched = list(queries["id"])
        run = self.check(task, hf_subset, hf_split, searched)
        out = {qid: dict(ranked(run[qid], top_k)) if len(run[qid]) > top_k else dict(run[qid])
               for qid in searched if qid in run}
        key = (task, hf_subset, hf_split)
        if key not in self.missing:  # the first search asks for every query (MaxP searches some again, deeper)
            absent = sum(1 for qid in searched if qid not in run)
            self.missing[key] = (len(searched), absent)
            if absent:
                logger.warning("%s: %d of %d queries of %s (%s, %s) are not in the run; they score 0",
                               self.folder.path_of(*key), absent, len(searched), task, hf_subset, hf_split)
        return {qid: out.get(qid, {}) for qid in searched}


def as_search_model(model: Any) -> Any:
    """``model`` as MTEB's retrieval would search with it: an encoder in MTEB's ``SearchEncoderWrapper``, a
    cross-encoder in its ``SearchCrossEncoderWrapper``, a search model as it is (CRUMB's MaxP wraps its model
    with this too)."""
    from mteb.models import (
        CrossEncoderProtocol,
        EncoderProtocol,
        SearchCrossEncoderWrapper,
        SearchEncoderWrapper,
        SearchProtocol,
    )

    if isinstance(model, EncoderProtocol) and not isinstance(model, SearchProtocol):
        return SearchEncoderWrapper(model)
    if isinstance(model, CrossEncoderProtocol):
        return SearchCrossEncoderWrapper(model)
    if isinstance(model, SearchProtocol):
        return model
    raise TypeError(f"expected an Encoder, CrossEncoder or Search model, got {type(model)}")


class RecordingSearch:
    """Wraps a model's search and writes every ranking it returns through ``writer`` (``--save-runs``): one run
    file per task, subset and split, at the depth searched. A task that searches some queries again, deeper (CRUMB's
    MaxP), has their later ranking recorded, as the task uses it. ``data``: task name -> the provenance of the data
    searched (recorded in ``runs.json``)."""

    def __init__(self, search_model: Any, writer: RunsFolderWriter,
                 data: Callable[[str], dict[str, Any] | None] | None = None):
        self.model = search_model  # what it wraps, for tools that walk wrapper chains (complexir.systems.models)
        self.search_model = as_search_model(search_model)
        self.writer = writer
        self.data = data
        self._recorded: dict[Entry, tuple[Results, int]] = {}

    @property
    def mteb_model_meta(self) -> Any:
        return self.model.mteb_model_meta

    def index(self, corpus: Any, **kwargs: Any) -> None:
        self.search_model.index(corpus, **kwargs)

    # fixed runs recorded again (--runs with --save-runs) still learn the task's ids; other models ignore them
    def expect_ids(self, task: str, hf_subset: str, split: str, **ids: Any) -> None:
        if isinstance(self.search_model, ExpectsTaskIds):
            self.search_model.expect_ids(task, hf_subset, split, **ids)

    def run_scores(self, task: str, hf_subset: str, split: str) -> dict[str, float]:
        if isinstance(self.search_model, ExpectsTaskIds):
            return self.search_model.run_scores(task, hf_subset, split)
        return {}

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, top_k: int,
               **kwargs: Any) -> Results:
        results = self.search_model.search(queries, task_metadata=task_metadata, hf_split=hf_split,
                                           hf_subset=hf_subset, top_k=top_k, **kwargs)
        key = (task_metadata.name, hf_subset, hf_split)
        previous, depth = self._recorded.get(key, ({}, 0))
        merged = {**previous, **{qid: dict(docs) for qid, docs in results.items()}}
        depth = max(depth, top_k)
        self._recorded[key] = (merged, depth)
        self.writer.write(*key, merged, data=self.data(key[0]) if self.data else None, depth=depth)
        return results

    def close(self) -> Path:
        return self.writer.close()
