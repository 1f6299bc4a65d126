"""Reading TREC qrels (``topic iteration doc label``) and runs (``topic Q0 doc rank score tag``).

Files are parsed column-wise by pyarrow's CSV reader (multi-threaded C++, no Python object per line) into
arrays that feed the numpy metric core directly (:mod:`complexir.metrics`), a piece of some MiB of whole
lines at a time: :func:`read_run_pieces` hands each piece to the caller as soon as it is parsed, so a caller
that keeps only the rows it needs never holds a whole run (``complexir evaluate``). The dict readers
(:func:`read_run`, :func:`read_qrels`, :func:`read_nugget_qrels`) are built on the same columns for callers
that want mappings. Fields are separated by spaces or tabs, any number of them, as trec_eval reads them;
blank lines are skipped, a UTF-8 byte-order mark at the start is skipped (it is not part of the first
topic id), CRLF line ends are fine. A run file's rank and tag columns are ignored, as trec_eval ignores the
rank: order comes from the score, ties by doc id descending (see :func:`complexir.metrics.rank_run`).

Every error names the file and the line (:class:`TrecFormatError` carries them as ``path`` and ``line``;
invalid UTF-8 is Python's ``UnicodeDecodeError``, which the CLI locates):
the columns are validated with vectorised checks, and only when one fails is the file read again line by
line (:func:`_scan`) to find the first bad line and say what is wrong with it. That slow reader also accepts
the few spellings the CSV reader does not (a label ``+1``, a score ``1_000``, as Python's ``int`` and
``float`` do), so the result never depends on which of the two read a file.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Callable, Container, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from complexir.layout.errors import UpstreamFormatError

__all__ = [
    "QrelsColumns",
    "RunColumns",
    "TrecFormatError",
    "read_nugget_qrels",
    "read_qrels",
    "read_qrels_columns",
    "read_run",
    "read_run_columns",
    "read_run_pieces",
    "refuse_relabelled",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")

BOM = b"\xef\xbb\xbf"
# Bytes of whole lines parsed at a time: each piece is parsed (on every core) and reduced before the next is
# read, so a large file is never held whole, as bytes or as columns.
_PIECE = 16 << 20
_BLOCK = 1 << 20  # bytes per CSV parse block within a piece: one block per thread, many blocks per piece
_WINDOW = 1 << 18  # bytes per step of the spacing check: its temporaries stay in the CPU cache


_NUMPY_TYPES = {pa.int32(): np.int32, pa.int64(): np.int64, pa.uint64(): np.uint64, pa.float64(): np.float64}


def as_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A null-free numeric Arrow column as a numpy array, straight from its buffers.

    pyarrow's own ``to_numpy`` imports pandas on first use (about a second here): a command that never needs
    pandas should not pay for it.
    """
    if isinstance(values, pa.ChunkedArray):
        parts = [as_numpy(chunk) for chunk in values.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, _NUMPY_TYPES[values.type])
    if values.null_count:
        raise ValueError("as_numpy takes columns without nulls")
    dtype = np.dtype(_NUMPY_TYPES[values.type])
    return np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * dtype.itemsize)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-d numeric numpy array as an Arrow array over the same memory (``pa.array`` would import pandas)."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


class TrecFormatError(UpstreamFormatError):
    """A malformed TREC file: ``path`` and ``line`` (1-based, None for the file as a whole) name where.

    An :class:`~complexir.layout.errors.UpstreamFormatError` (so loading scripts let it through as is), but its text
    keeps the compiler-style ``path:line: message`` that ``complexir evaluate`` has always printed.
    """

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str):
        super().__init__(path, line, message)
        self.message = message
        self.args = (f"{path}:{line}: {message}" if line is not None else f"{path}: {message}",)


@dataclass(frozen=True)
class RunColumns:
    """A run file as columns, one row per line in file order (repeats kept; ranking removes them)."""

    path: str
    topic: pa.ChunkedArray  # dictionary<int32, string>; each chunk has its own dictionary
    doc: pa.ChunkedArray  # string
    score: np.ndarray  # float64, finite


@dataclass(frozen=True)
class QrelsColumns:
    """A qrels file as columns, one row per line in file order."""

    path: str
    topic: pa.ChunkedArray  # dictionary<int32, string>
    iteration: pa.ChunkedArray  # dictionary<int32, string>: the nugget id in ndeval's format, ignored by trec_eval
    doc: pa.ChunkedArray  # string
    label: np.ndarray  # int64, >= 0


# kind -> (field names, what the line should hold, arrow types of the fields read)
_RUN = ("topic", "q0", "doc", "rank", "score", "tag")
_QRELS = ("topic", "iteration", "doc", "label")
# Topics and nugget ids repeat line after line: the CSV reader dictionary-encodes them as it parses.
_CODES = pa.dictionary(pa.int32(), pa.string())
_SPECS = {
    "run": (_RUN, "topic Q0 doc rank score tag", {"topic": _CODES, "doc": pa.string(), "score": pa.float64()}),
    "qrels": (_QRELS, "topic iteration doc label",
              {"topic": _CODES, "iteration": _CODES, "doc": pa.string(), "label": pa.int64()}),
}
# Arrow's system-allocator pool hands freed blocks back to the OS at once (mimalloc keeps them): a lower peak.
_POOL = pa.system_memory_pool()


def _give_back_freed_memory() -> None:
    """Return the heap pages freed by the CSV reader to the OS (glibc's ``malloc_trim``; elsewhere nothing).

    The reader's threads parse in their own malloc arenas, and glibc keeps what they free for reuse: trimming
    once per file (a few milliseconds) keeps that from sitting under the evaluation that follows.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl, macOS): their allocators return memory themselves
        pass


class _NotColumnar(Exception):
    """The CSV reader refused a piece: the file is read again by the line reader, which names the bad line."""


def _pieces(path: str | os.PathLike[str]) -> Iterator[memoryview | bytes]:
    """The file in pieces of whole lines (about ``_PIECE`` bytes; the last may lack its line end), each with
    the fields separated by single spaces (:func:`_single_spaced`) and the byte-order mark dropped.

    One buffer is read into again and again, the line cut at a piece's end moved to its front: no copy of the
    file's bytes on the way to the parser, and no fresh memory to fault in per piece. A piece is valid until
    the next is asked for (the parser copies what it keeps).
    """
    with open(path, "rb", buffering=0) as raw:
        buffer = bytearray(_PIECE)
        kept = 0  # bytes of a line cut at the previous piece's end, at the buffer's front
        first = True
        while True:
            got = raw.readinto(memoryview(buffer)[kept:])
            end = kept + got
            cut = buffer.rfind(b"\n", 0, end) + 1 if got else end
            if cut == 0 and got:  # no LF: lines may end in lone CRs (should the CR of a CRLF end up last, the
                cut = buffer.rfind(b"\r", 0, end) + 1  # next piece merely starts with an empty line)
            if cut == 0 and got:  # a line longer than the buffer: a larger one (the old one may still be exported)
                buffer = buffer[:end] + bytearray(len(buffer))
                kept = end
                continue
            start = len(BOM) if first and buffer.startswith(BOM) else 0  # the first piece starts the file
            first = False
            if cut > start:
                yield _single_spaced(buffer, start, cut)
            if not got:
                return
            buffer[: end - cut] = buffer[cut:end]
            kept = end - cut


_RUNS = re.compile(rb" {2,}")
_EDGES = re.compile(rb" ?(\r\n|\r|\n) ?")


def _single_spaced(buffer: bytearray, start: int, end: int) -> memoryview | bytes:
    """``buffer[start:end]`` with tabs as spaces and, only where some field would read as empty, runs of
    spaces made one and spaces at line starts and ends dropped: the one-character delimiter that pyarrow's CSV
    reader takes. A view of ``buffer`` when nothing changes; :class:`_NotColumnar` when a piece still has an
    empty field (a control byte next to a space)."""
    piece: memoryview | bytes = memoryview(buffer)[start:end]
    if buffer.find(b"\t", start, end) >= 0:  # a C-level byte search: a tab-free file pays nothing more
        piece = bytes(piece).replace(b"\t", b" ")
    if _has_empty_field(piece):
        piece = _EDGES.sub(rb"\1", _RUNS.sub(b" ", bytes(piece)).removeprefix(b" ")).rstrip(b" ")
        if _has_empty_field(piece):
            raise _NotColumnar
    return piece


def _has_empty_field(piece: memoryview | bytes) -> bool:
    """Whether a space is next to another space or a line end, or starts or ends ``piece`` (a piece starts a
    line): where a space-delimited parse would see an empty field, in a column it converts or one it skips.

    Vectorised over windows of the bytes (about 0.3 ns a byte); a control byte (below 0x20) counts as a line
    end, so a rare file with other control bytes next to spaces merely takes the slower collapsing path.
    """
    if piece[:1] == b" " or piece[-1:] == b" ":
        return True
    data = np.frombuffer(piece, np.uint8)
    for start in range(0, len(data), _WINDOW):
        window = data[start : start + _WINDOW + 1]  # one byte of overlap: a pair split between windows
        blank = window <= 0x20  # a space or a line end
        pair = blank[:-1] & blank[1:]
        # Two blanks side by side: an empty field unless both are line ends (CRLF, a blank line). Files with LF
        # line ends have no such pair at all, and stop at the first test: half the time of testing every pair.
        if pair.any() and (pair & ((window[:-1] == 0x20) | (window[1:] == 0x20))).any():
            return True
    return False


def _parsed_pieces(path: str | os.PathLike[str], kind: str) -> Iterator[pa.Table]:
    """The file as one table per piece; :class:`_NotColumnar` when the CSV reader refuses a piece."""
    names, _what, types = _SPECS[kind]
    read = pcsv.ReadOptions(column_names=list(names), block_size=_BLOCK)
    parse = pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False,
                              newlines_in_values=False, ignore_empty_lines=True)
    # ASCII is valid UTF-8: the reader's own check (a fifth of the parse of an ad hoc run, measured here) is
    # left to pieces with other bytes, found by one vectorised max over the piece.
    convert = {check: pcsv.ConvertOptions(column_types=types, include_columns=list(types), null_values=[],
                                          strings_can_be_null=False, quoted_strings_can_be_null=False,
                                          check_utf8=check) for check in (True, False)}
    for piece in _pieces(path):
        all_ascii = int(np.frombuffer(piece, np.uint8).max(initial=0)) < 0x80
        try:
            yield pcsv.read_csv(pa.BufferReader(piece), read, parse, convert[not all_ascii], memory_pool=_POOL)
        except pa.ArrowInvalid:  # a malformed line (or invalid UTF-8): the line reader names it
            raise _NotColumnar from None


def _fold(path: str | os.PathLike[str], kind: str, reduce: Callable[[pa.Table], T]) -> list[T]:
    """``reduce`` of each piece of the file, as soon as it is parsed; of the whole file read line by line
    (:func:`_scan`, which raises at the first bad line) when the CSV reader refuses a piece."""
    try:
        out = [reduce(table) for table in _ahead(_parsed_pieces(path, kind)) if table.num_rows]
    except _NotColumnar:
        out = [reduce(table) for table in [_scan(path, kind)] if table.num_rows]
    _give_back_freed_memory()
    return out


def _ahead(items: Iterator[T]) -> Iterator[T]:
    """``items``, each next one made on a second thread while the caller works on the one it was given.

    Reading and parsing a piece (pyarrow's parser and the byte checks run without the GIL) then overlaps with
    reducing the previous one, which leaves a core idle between pieces otherwise.
    """
    done = object()
    with ThreadPoolExecutor(1, thread_name_prefix="complexir-read-ahead") as pool:
        pending = pool.submit(next, items, done)
        while (item := pending.result()) is not done:
            pending = pool.submit(next, items, done)
            yield cast(T, item)  # not the sentinel: one of the items


def _lines(path: str | os.PathLike[str], fields: int, what: str) -> Iterator[tuple[int, list[str]]]:
    """Line by line, the way the columnar reader splits: spaces and tabs, BOM skipped, blank lines skipped.

    Text mode, so invalid UTF-8 raises the ``UnicodeDecodeError`` that the CLI's error policy locates
    (file and line) for every text reader alike.
    """
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if lineno == 1:
                line = line.removeprefix("\ufeff")
            parts = [p for p in line.replace("\t", " ").strip(" \r\n").split(" ") if p]
            if not parts:
                continue
            if len(parts) != fields:
                raise TrecFormatError(
                    path, lineno, f"expected {fields} whitespace-separated fields ({what}), "
                                  f"got {len(parts)}: {line.rstrip()!r}"
                )
            yield lineno, parts


def _label(path: str | os.PathLike[str], lineno: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise TrecFormatError(path, lineno, f"label {text!r} is not an integer") from None
    if value < 0:
        raise TrecFormatError(path, lineno, f"label {value} is negative; labels are integers >= 0")
    if value >= 2**63:
        raise TrecFormatError(path, lineno, f"label {value} is too large")
    return value


def _score(path: str | os.PathLike[str], lineno: int, topic: str, doc: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TrecFormatError(path, lineno, f"score {text!r} is not a number") from None
    if not math.isfinite(value):
        raise TrecFormatError(path, lineno, f"score {text!r} is not finite (topic {topic!r}, doc {doc!r})")
    return value


def _scan(path: str | os.PathLike[str], kind: str) -> pa.Table:
    """The slow path: every line checked in order; the first bad one raises. Returns the columns otherwise."""
    names, what, types = _SPECS[kind]
    cols: dict[str, list] = {name: [] for name in types}
    for lineno, parts in _lines(path, len(names), what):
        fields = dict(zip(names, parts, strict=True))
        row: dict[str, object] = dict(fields)
        if kind == "run":
            row["score"] = _score(path, lineno, fields["topic"], fields["doc"], fields["score"])
        else:
            row["label"] = _label(path, lineno, fields["label"])
        for name in types:
            cols[name].append(row[name])
    return pa.table({name: pa.array(values, type=types[name]) for name, values in cols.items()})


def _first_bad_row(path: str | os.PathLike[str], kind: str, bad: np.ndarray) -> None:
    """A vectorised check failed: read the file line by line to raise at the first bad line."""
    _scan(path, kind)
    raise TrecFormatError(path, None, f"row {int(np.flatnonzero(bad)[0]) + 1} is invalid")  # pragma: no cover


def _run_piece(path: str | os.PathLike[str], table: pa.Table) -> RunColumns:
    score = as_numpy(table.column("score"))
    finite = np.isfinite(score)
    if not finite.all():
        _first_bad_row(path, "run", ~finite)
    return RunColumns(str(path), table.column("topic"), table.column("doc"), score)


def read_run_pieces(path: str | os.PathLike[str], reduce: Callable[[RunColumns], T]) -> list[T]:
    """``reduce`` of the columns of each piece of a run file (some MiB of whole lines, in file order), called
    as soon as the piece is parsed: a caller that keeps only part of each piece never holds the whole run.
    TrecFormatError naming the line on a malformed line or a NaN/inf score, before or after some pieces."""
    rows = 0

    def checked(table: pa.Table) -> T:
        nonlocal rows
        rows += table.num_rows
        return reduce(_run_piece(path, table))

    out = _fold(path, "run", checked)
    if rows == 0:
        raise TrecFormatError(path, None, "the run is empty (no 'topic Q0 doc rank score tag' line)")
    return out


def read_run_columns(path: str | os.PathLike[str]) -> RunColumns:
    """A run file as columns; TrecFormatError naming the line on a malformed line or a NaN/inf score."""
    pieces = read_run_pieces(path, lambda piece: piece)
    return RunColumns(str(path), _chunks([p.topic for p in pieces]), _chunks([p.doc for p in pieces]),
                      np.concatenate([p.score for p in pieces]))


def read_qrels_columns(path: str | os.PathLike[str]) -> QrelsColumns:
    """A qrels file as columns; TrecFormatError naming the line on a malformed line or a negative label."""

    def checked(table: pa.Table) -> QrelsColumns:
        label = as_numpy(table.column("label"))
        if (label < 0).any():
            _first_bad_row(path, "qrels", label < 0)
        return QrelsColumns(str(path), table.column("topic"), table.column("iteration"), table.column("doc"), label)

    pieces = _fold(path, "qrels", checked)
    if not pieces:
        raise TrecFormatError(path, None, "the qrels file is empty (no 'topic iteration doc label' line)")
    return QrelsColumns(str(path), _chunks([p.topic for p in pieces]), _chunks([p.iteration for p in pieces]),
                        _chunks([p.doc for p in pieces]), np.concatenate([p.label for p in pieces]))


def _chunks(columns: list[pa.ChunkedArray]) -> pa.ChunkedArray:
    """One column of the chunks of several (no copy)."""
    return pa.chunked_array([chunk for column in columns for chunk in column.chunks], type=columns[0].type)


def read_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """topic -> doc -> label. A doc listed twice for a topic (e.g. under two nuggets) keeps its largest label."""
    cols = read_qrels_columns(path)
    qrels: dict[str, dict[str, int]] = {}
    for topic, doc, value in zip(cols.topic.to_pylist(), cols.doc.to_pylist(), cols.label.tolist(), strict=True):
        docs = qrels.setdefault(topic, {})
        if value > docs.get(doc, -1):
            docs[doc] = value
    return qrels


def read_nugget_qrels(
    path: str | os.PathLike[str], known: Mapping[str, Container[str]] | None = None
) -> dict[str, dict[str, dict[str, int]]]:
    """topic -> nugget -> doc -> label, the iteration column read as the nugget id (ndeval's format).

    The same (topic, nugget, doc) twice is fine with the same label and an error with two. With ``known``
    (topic -> its nugget ids, e.g. from a nugget list), a judgment of any other nugget is an error at its line.
    """
    cols = read_qrels_columns(path)
    out: dict[str, dict[str, dict[str, int]]] = {}
    rows = zip(cols.topic.to_pylist(), cols.iteration.to_pylist(), cols.doc.to_pylist(), cols.label.tolist(),
               strict=True)
    for row, (topic, nugget, doc, value) in enumerate(rows):
        if known is not None and nugget not in known.get(topic, ()):
            raise TrecFormatError(path, _line_of_row(path, row), f"topic {topic!r}, nugget {nugget!r} is not in "
                                                                  "the nuggets file")
        docs = out.setdefault(topic, {}).setdefault(nugget, {})
        if doc in docs and docs[doc] != value:
            raise TrecFormatError(
                path, _line_of_row(path, row), f"topic {topic!r}, nugget {nugget!r}, doc {doc!r} judged twice "
                                               f"with different labels ({docs[doc]} and {value})"
            )
        docs[doc] = value
    return out


def refuse_relabelled(path: str | os.PathLike[str]) -> None:
    """TrecFormatError at the first line of a qrels file that judges a (topic, iteration, doc) again with another
    label (trec_eval refuses such a file; a label must not be picked silently)."""
    labels: dict[tuple[str, str, str], tuple[int, int]] = {}
    for lineno, (topic, iteration, doc, text) in _lines(path, len(_QRELS), " ".join(_QRELS)):
        value = _label(path, lineno, text)
        first = labels.setdefault((topic, iteration, doc), (value, lineno))
        if first[0] != value:
            raise TrecFormatError(path, lineno, f"topic {topic!r}, doc {doc!r} (iteration {iteration!r}) is judged "
                                                f"twice with different labels ({first[0]} at line {first[1]}, {value} "
                                                "here); judge each once")


def _line_of_row(path: str | os.PathLike[str], row: int) -> int:
    """The line number of the row-th (0-based) non-blank line: for errors found after parsing."""
    for i, (lineno, _parts) in enumerate(_lines(path, len(_QRELS), " ".join(_QRELS))):
        if i == row:
            return lineno
    raise IndexError(row)  # pragma: no cover - the row came from this file


def read_run(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """topic -> doc -> score. A doc repeated within a topic keeps its best score and is reported."""
    cols = read_run_columns(path)
    run: dict[str, dict[str, float]] = {}
    repeats = 0
    for topic, doc, value in zip(cols.topic.to_pylist(), cols.doc.to_pylist(), cols.score.tolist(), strict=True):
        docs = run.setdefault(topic, {})
        if doc in docs:
            repeats += 1
            if value <= docs[doc]:
                continue
        docs[doc] = value
    if repeats:
        logger.warning(
            "%s: %d repeated (topic, doc) line(s); each doc counts once, at its best score", path, repeats
        )
    return run

