"""The integrity rules of the standard layout, each written once, for the writer and the validator alike.

A rule here is about rows taken together: an id appears once, a judgment names a query of its split, a
document is listed once in a nugget's support, a ranked list names documents of the corpus, every query of a
split has a positive judgment, judgments on documents the corpus lacks are counted (and, in a folder, match the
card's count). Whether one value has the right type is the caller's business (the writer checks Python rows,
the validator checks parquet schemas); both then feed rows here, one at a time, with the ``Place`` they came
from, so that a broken rule reads the same whichever side found it::

    <file or table>, row <n>: <what is wrong> (first at <where the other row is>)

The writer's places are the rows handed to it (``subset 'drugs', split 'test', qrels, row 3``, counted from
1 in the order given); the validator's are the rows of a parquet file (``…/qrels-test.parquet, row 3``).
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from complexir.layout.distinct import range_starts
from complexir.layout.errors import LayoutError

K = TypeVar("K", bound=Hashable)

MAX_GRADE = 2**31 - 1  # the layout's score columns are int32


@dataclass(frozen=True, slots=True)
class Place:
    """Where a row is: ``table`` names a file (or the table of a split being written), ``row`` counts from 1.
    ``name`` is the short form used when a message in another table points back here (a file's base name)."""

    table: str
    row: int
    name: str = ""

    def __str__(self) -> str:
        return f"{self.table}, row {self.row}"

    def seen_from(self, other: Place) -> str:
        """This place as a message about ``other`` names it: the row alone within one table."""
        if other.table == self.table:
            return f"row {self.row}"
        return f"{self.name or self.table}, row {self.row}"


class UniqueKeys(Generic[K]):
    """Rule: a key appears once (a query id in its split; a judgment (query, document); a nugget (query,
    nugget id); a query's ranked list). Keeps the first place of each key, in the order keys arrived."""

    def __init__(self, describe: Callable[[K], str]):
        self._describe = describe
        self.first: dict[K, Place] = {}

    def add(self, key: K, place: Place) -> None:
        first = self.first.get(key)
        if first is not None:
            raise LayoutError(f"{place}: duplicate {self._describe(key)} (first at {first.seen_from(place)})")
        self.first[key] = place

    def __contains__(self, key: object) -> bool:
        return key in self.first

    def __len__(self) -> int:
        return len(self.first)


def duplicate_document(doc_id: str, place: Place, first: Place) -> LayoutError:
    """The duplicate-id rule's message for the corpus, whose first places are found only when needed."""
    return LayoutError(f"{place}: duplicate document id {doc_id!r} (first at {first.seen_from(place)})")


def id_hashes(ids: Sequence[str]) -> np.ndarray:
    """64-bit hashes of ``ids`` (pandas' vectorised SipHash, the same in every process). Equal hashes only make
    two ids candidates: ``DocumentIds`` compares the ids themselves before it calls them equal."""
    import pandas as pd  # here, not at the top: 0.2 s that `complexir validate --help` and `build --help` need not pay

    return pd.util.hash_array(np.asarray(ids, dtype=object), categorize=False)


class DocumentIds:
    """Rule: a document id appears once in its subset's corpus; and which ids a corpus lacks, exactly.

    A corpus can hold 100M documents, more than their ids take in memory as Python strings, so the ids stay in
    the parquet files that hold them. Here is kept, on disk under ``scratch``, an 8-byte hash and a row number per
    document, in sorted runs of ``run_rows``; the checks read them back one group of hash ranges at a time (up to
    ``bucket_rows`` entries, or one of the ``RANGES`` ranges if that holds more: 28k entries for 113.5M documents)
    and look the real ids up in the files for any hash seen twice or asked for. Memory is then about 16 bytes
    times those sizes plus one batch of a file (some 50 MB), and 32 KiB per run (3.5 MB for 113.5M documents).

    Rows are added file by file, in order (``add``); ``place`` names a row as the owner counts it: the
    ``Place`` of the ``local``-th row (from 0) of ``path``, the ``number``-th row (from 0) of the corpus.
    """

    RANGES = 4096  # the hash space is cut into this many equal ranges; a bucket is a run of whole ranges

    def __init__(self, scratch: Path, place: Callable[[Path, int, int], Place], *, run_rows: int = 1 << 20,
                 bucket_rows: int = 1 << 20):
        self._scratch = Path(scratch)
        self._place = place
        self._run_rows = run_rows
        self._bucket_rows = bucket_rows
        self._files: list[Path] = []
        self._file_starts: list[int] = []  # corpus row number of each file's first row
        self._rows = 0
        self._pending: list[np.ndarray] = []  # hashes of rows not yet in a run
        self._pending_start = 0  # corpus row number of the first pending row
        self._runs: list[tuple[Path, int, np.ndarray]] = []  # (file stem, first row, start index of each range)

    def __len__(self) -> int:
        return self._rows

    def remove(self) -> None:
        """Delete the scratch files and their folder (the checks cannot run after this). File by file: these are
        the files this object wrote, and nothing else is deleted."""
        for stem, _, _ in self._runs:
            for suffix in (".hash", ".row"):
                Path(f"{stem}{suffix}").unlink(missing_ok=True)
        self._runs.clear()
        self._pending.clear()
        with contextlib.suppress(FileNotFoundError):
            self._scratch.rmdir()

    def add(self, ids: Sequence[str], path: Path) -> None:
        """The next ``len(ids)`` rows of the corpus, which are the next rows of file ``path``."""
        if not len(ids):
            return
        if not self._files or self._files[-1] != path:
            self._files.append(path)
            self._file_starts.append(self._rows)
        self._pending.append(id_hashes(ids))
        self._rows += len(ids)
        if self._rows - self._pending_start >= self._run_rows:
            self._spill()

    def _spill(self) -> None:
        """Write the pending hashes as one run, sorted, with their row numbers relative to the run's first."""
        if not self._pending:
            return
        hashes = np.concatenate(self._pending)
        order = np.argsort(hashes, kind="stable")
        stem = self._scratch / f"run-{len(self._runs):06d}"
        self._scratch.mkdir(parents=True, exist_ok=True)
        sorted_hashes = hashes[order]
        sorted_hashes.tofile(f"{stem}.hash")
        order.astype(np.uint32).tofile(f"{stem}.row")  # a run holds fewer than 2**32 rows
        starts = np.append(np.searchsorted(sorted_hashes, range_starts(self.RANGES), side="left"), len(hashes))
        self._runs.append((stem, self._pending_start, starts))
        self._pending.clear()
        self._pending_start = self._rows

    def _buckets(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(hashes, corpus row numbers) of every row, sorted by hash, one hash range group at a time."""
        self._spill()
        sizes = (np.sum([np.diff(starts) for _, _, starts in self._runs], axis=0) if self._runs
                 else np.zeros(self.RANGES, int))
        first = 0
        while first < self.RANGES:
            last, held = first, 0
            while last < self.RANGES and (last == first or held + sizes[last] <= self._bucket_rows):
                held += int(sizes[last])
                last += 1
            hashes, rows = [], []
            for stem, run_start, starts in self._runs:
                lo, hi = int(starts[first]), int(starts[last])
                if hi > lo:
                    hashes.append(np.fromfile(f"{stem}.hash", dtype=np.uint64, count=hi - lo, offset=lo * 8))
                    rows.append(np.fromfile(f"{stem}.row", dtype=np.uint32, count=hi - lo, offset=lo * 4)
                                .astype(np.int64) + run_start)
            if hashes:
                h, r = np.concatenate(hashes), np.concatenate(rows)
                order = np.lexsort((r, h))
                yield h[order], r[order]
            first = last

    def _read(self, rows: np.ndarray) -> dict[int, str]:
        """The ids of the corpus rows ``rows`` (sorted), read from their files one batch at a time."""
        found: dict[int, str] = {}
        starts = np.asarray(self._file_starts)
        which = np.searchsorted(starts, rows, side="right") - 1
        for k in np.unique(which):
            wanted = rows[which == k] - starts[k]
            offset = 0
            for batch in pq.ParquetFile(self._files[k]).iter_batches(columns=["id"], batch_size=65_536):
                inside = wanted[(wanted >= offset) & (wanted < offset + batch.num_rows)]
                if len(inside):
                    values = batch.column(0).take(pa.array(inside - offset)).to_pylist()
                    found.update(zip((inside + starts[k]).tolist(), values, strict=True))
                offset += batch.num_rows
        return found

    def _place_of(self, row: int) -> Place:
        k = bisect.bisect_right(self._file_starts, row) - 1
        return self._place(self._files[k], row - self._file_starts[k], row)

    def check_unique(self) -> None:
        """Raise for an id found twice, naming both rows; the pair is the first found, in hash order."""
        candidates: list[np.ndarray] = []
        held = 0
        for hashes, rows in self._buckets():
            same = hashes[1:] == hashes[:-1]
            if same.any():
                twice = np.zeros(len(hashes), bool)
                twice[1:] |= same
                twice[:-1] |= same
                candidates.append(rows[twice])
                held += int(twice.sum())
            if held >= self._bucket_rows:
                self._confirm_unique(candidates)
                candidates, held = [], 0
        self._confirm_unique(candidates)

    def _confirm_unique(self, candidates: list[np.ndarray]) -> None:
        # Equal hashes are only candidates: the ids themselves decide (a collision is not a duplicate).
        if not candidates:
            return
        rows = np.sort(np.concatenate(candidates))
        first: dict[str, int] = {}
        for row, doc_id in sorted(self._read(rows).items()):
            if doc_id in first:
                raise duplicate_document(doc_id, self._place_of(row), self._place_of(first[doc_id]))
            first[doc_id] = row

    def missing(self, doc_ids: Iterable[str]) -> set[str]:
        """Those of ``doc_ids`` that are not in the corpus (exact: a hash match is confirmed on the id)."""
        wanted = sorted(set(doc_ids))
        if not wanted:
            return set()
        wanted_hashes = id_hashes(wanted)
        order = np.argsort(wanted_hashes)
        wanted_hashes = wanted_hashes[order]
        candidates = []
        for hashes, rows in self._buckets():
            lo = np.searchsorted(hashes, wanted_hashes, side="left")
            hi = np.searchsorted(hashes, wanted_hashes, side="right")
            for k in np.flatnonzero(hi > lo):
                candidates.append(rows[lo[k]:hi[k]])
        present: set[str] = set()
        if candidates:
            wanted_set = set(wanted)
            present = {doc_id for doc_id in self._read(np.unique(np.concatenate(candidates))).values()
                       if doc_id in wanted_set}
        return set(wanted) - present


def check_grade(value: Any, what: str) -> int:
    """Rule: a relevance grade is an integer from 0 to ``MAX_GRADE`` (the score column's range)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise LayoutError(f"{what}: expected an integer grade, got {type(value).__name__} {value!r:.60}")
    if value < 0:
        raise LayoutError(f"{what}: expected a grade >= 0, got {value}")
    if value > MAX_GRADE:
        raise LayoutError(f"{what}: grade {value} is larger than the layout's int32 score column holds ({MAX_GRADE})")
    return int(value)


@dataclass(frozen=True, slots=True)
class MissingDocument:
    """A judgment (a qrels row or one nugget support entry) on a document the corpus lacks."""

    place: Place
    query_id: str
    doc_id: str


class SplitIntegrity:
    """The rules of one split, fed its rows in order: queries first, then qrels, nuggets and ranked lists.

    ``documents`` answers which ids the corpus lacks; it is asked once, in ``missing_documents``, for every id
    the split names, so that a corpus kept outside memory is read once per split."""

    def __init__(self, subset: str, documents: DocumentIds):
        self.subset = subset
        self.documents = documents
        self.queries: UniqueKeys[str] = UniqueKeys(lambda qid: f"query id {qid!r}")
        self.judgments: UniqueKeys[tuple[str, str]] = UniqueKeys(
            lambda key: f"judgment for query {key[0]!r} and document {key[1]!r}")
        self.nuggets: UniqueKeys[tuple[str, str]] = UniqueKeys(lambda key: f"nugget {key[1]!r} for query {key[0]!r}")
        self.ranked: UniqueKeys[str] = UniqueKeys(lambda qid: f"query-id {qid!r}")
        self.positive: set[str] = set()  # queries with a judgment of grade > 0
        self.judged: set[str] = set()
        self._support: list[tuple[Place, str, str]] = []  # (nugget row, query id, document id)
        self._ranked_docs: list[tuple[Place, Sequence[str]]] = []

    def _check_query(self, qid: str, place: Place) -> None:
        # Rule: qrels, nuggets and ranked lists name a query of their split.
        if qid not in self.queries:
            raise LayoutError(f"{place}: query-id {qid!r} is not a query of this split")

    def query(self, qid: str, place: Place) -> None:
        self.queries.add(qid, place)

    def judgment(self, qid: str, doc_id: str, score: int, place: Place) -> None:
        self._check_query(qid, place)
        self.judgments.add((qid, doc_id), place)
        self.judged.add(qid)
        if score > 0:
            self.positive.add(qid)

    def nugget(self, qid: str, nugget_id: str, support: Sequence[str], place: Place) -> None:
        """``support``: the document ids of the nugget's support, in order."""
        self._check_query(qid, place)
        self.nuggets.add((qid, nugget_id), place)
        # Two grades for one document: a reader keeps one of them silently, so refuse it.
        first: dict[str, int] = {}
        for j, doc_id in enumerate(support, 1):
            if doc_id in first:
                raise LayoutError(f"{place}, support {j}: document {doc_id!r} twice in the support of nugget "
                                  f"{nugget_id!r} (first at support {first[doc_id]})")
            first[doc_id] = j
            self._support.append((place, qid, doc_id))

    def ranked_list(self, qid: str, doc_ids: Sequence[str], place: Place) -> None:
        self._check_query(qid, place)
        self.ranked.add(qid, place)
        self._ranked_docs.append((place, doc_ids))

    def without_positive(self) -> list[str]:
        """Queries with no positive judgment, in query order (the writer drops them, a folder may not hold any)."""
        return [qid for qid in self.queries.first if qid not in self.positive]

    def require_positive(self, place: object) -> None:
        """Rule: every query of a folder's split has a positive judgment (the writer has dropped the others)."""
        missing = self.without_positive()
        if missing:
            raise LayoutError(f"{place}: {len(missing)} queries have no positive qrel, e.g. {sorted(missing)[:3]}")

    def missing_documents(self) -> tuple[list[MissingDocument], list[MissingDocument]]:
        """(qrels rows, nugget support entries) on documents the corpus lacks, in row order; a ranked list naming
        such a document is an error.

        Rule: a judgment on a document the corpus lacks is kept, because trec_eval and ndeval count that document
        as relevant and never retrieved (recall's denominator, the ideal DCG); it is counted, and a folder's card
        must declare how many (``check_declared_missing``). A ranked list is a run's input, so it must be
        retrievable."""
        named = {doc_id for _, doc_id in self.judgments.first}
        named.update(doc_id for _, _, doc_id in self._support)
        for _, doc_ids in self._ranked_docs:
            named.update(doc_ids)
        missing = self.documents.missing(named)
        for place, doc_ids in self._ranked_docs:
            for doc_id in doc_ids:
                if doc_id in missing:
                    raise LayoutError(f"{place}: corpus-id {doc_id!r} is not in the corpus of subset {self.subset!r}")
        qrels = [MissingDocument(place, qid, doc_id) for (qid, doc_id), place in self.judgments.first.items()
                 if doc_id in missing]
        support = [MissingDocument(place, qid, doc_id) for place, qid, doc_id in self._support if doc_id in missing]
        return qrels, support


def check_declared_missing(found: list[MissingDocument], declared: int, kind: str, subset: str, split: str,
                           place: object) -> None:
    """Rule: a folder holds exactly as many judgments on missing documents as its card declares for the split
    (``kind``: "qrels" or "nugget support"). Too many names the first undeclared row; too few names ``place``."""
    if len(found) == declared:
        return
    if len(found) > declared:
        first = found[declared]
        raise LayoutError(f"{first.place}: {kind} corpus-id {first.doc_id!r} is not in the corpus of subset "
                          f"{subset!r}, and the card declares {declared} such judgment(s) for split {split!r} "
                          f"({len(found)} found)")
    raise LayoutError(f"{place}: the card declares {declared} {kind} judgment(s) on documents missing from the "
                      f"corpus, {len(found)} found")


def count_by_query(found: Iterable[MissingDocument], keep: Mapping[str, Any] | set[str]) -> int:
    """How many of ``found`` belong to the queries in ``keep``."""
    return sum(1 for entry in found if entry.query_id in keep)
