"""Reading TREC qrels (``topic iteration doc label``) and runs (``topic Q0 doc rank score tag``).

Files are parsed column-wise by pyarrow's CSV reader (multi-threaded C++, no Python object per line) into
arrays that feed the numpy metric core directly (:mod:`complexir.trec_eval`); the dict readers
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

import io
import logging
import math
import os
import re
from collections.abc import Container, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from complexir.errors import UpstreamFormatError

__all__ = [
    "QrelsColumns",
    "RunColumns",
    "TrecFormatError",
    "read_nugget_qrels",
    "read_qrels",
    "read_qrels_columns",
    "read_run",
    "read_run_columns",
]

logger = logging.getLogger(__name__)

BOM = b"\xef\xbb\xbf"
_BLOCK = 1 << 20  # bytes per parse block: small blocks keep the reader's buffers (its peak memory) small
_RAW_READ = 1 << 20  # bytes read from the file at a time by the space filter


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

    An :class:`~complexir.errors.UpstreamFormatError` (so loading scripts let it through as is), but its text
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

    The reader's threads parse in their own malloc arenas, and glibc keeps what they free for reuse: after a
    473 MiB run file about 170 MiB stays resident although no array holds it, and the evaluation that follows
    allocates on top of it. Trimming once per file costs a few milliseconds.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl, macOS): their allocators return memory themselves
        pass


class _SpaceSeparated:
    """A file seen through a filter for pyarrow's CSV reader, which takes one delimiter character.

    Always: the byte-order mark at the start is dropped and tabs become spaces (found with a C-level byte
    search, replaced only in blocks that hold one). Without ``collapse``, ``irregular`` records whether any
    space is followed by another or by a line end (columns aligned with repeated spaces, trailing spaces):
    such a file is read again with ``collapse``, which makes runs of spaces one space and drops spaces at line
    ends, so a regular file pays for none of that rewriting.
    """

    _RUNS = re.compile(rb" {2,}")
    _EDGES = re.compile(rb" ?(\r?\n) ?")
    closed = False

    def __init__(self, raw: io.BufferedIOBase, collapse: bool):
        self._raw = raw
        self._collapse = collapse
        self._block = b""
        self._pos = 0
        self._carry = b""
        self._first = True
        self._eof = False
        self._last = b""
        self.irregular = False

    def readable(self) -> bool:
        return True

    def _fill(self) -> None:
        block = self._raw.read(_RAW_READ)
        if self._first:
            self._first = False
            block = block.removeprefix(BOM)
        if not self._collapse:
            if b"\t" in block:
                block = block.replace(b"\t", b" ")
            self.irregular = self.irregular or _space_before_space_or_end(self._last + block)
            self._last = block[-1:]
            self._block, self._pos, self._eof = block, 0, not block
            return
        if not block:  # collapsing works on whole lines: a block ends at its last line end
            self._eof = True
            block, self._carry = self._carry, b""
        else:
            block = self._carry + block if self._carry else block
            cut = block.rfind(b"\n") + 1
            if cut == 0:  # no line end yet: keep reading
                self._carry = block
                return
            block, self._carry = block[:cut], block[cut:]
        block = self._RUNS.sub(b" ", block.replace(b"\t", b" "))
        block = self._EDGES.sub(rb"\1", block.removeprefix(b" ")).rstrip(b" ")
        self._block, self._pos = block, 0

    def read(self, size: int = -1) -> bytes:
        while self._pos >= len(self._block) and not self._eof:
            self._fill()
        if size is None or size < 0:
            size = len(self._block) - self._pos
        out = self._block[self._pos : self._pos + size]
        self._pos += len(out)
        return out


def _space_before_space_or_end(block: bytes) -> bool:
    """Whether a space is followed by a space, CR or LF anywhere in ``block``.

    Read as 16-bit words at both byte alignments and compared in numpy (about 1 ns a byte), several times
    faster than searching the two-byte patterns with ``bytes.find``.
    """
    for start in (0, 1):
        end = start + (len(block) - start) // 2 * 2
        if end <= start:
            continue
        words = np.frombuffer(block, np.uint16, offset=start, count=(end - start) // 2)
        # little-endian words: first byte low. " " then " ", "\n" or "\r".
        if ((words == 0x2020) | (words == 0x0A20) | (words == 0x0D20)).any():
            return True
    return False


def _has_empty_field(table: pa.Table) -> bool:
    """Whether any field is empty: two separators in a row, or one at a line start (a space-aligned file)."""
    for column in table.columns:  # a number column cannot hold an empty field: its conversion fails on ""
        if not (pa.types.is_dictionary(column.type) or pa.types.is_string(column.type)):
            continue
        chunks = [c.dictionary if pa.types.is_dictionary(c.type) else c for c in column.chunks]
        if any(len(c) and pc.min(pc.binary_length(c)).as_py() == 0 for c in chunks):
            return True
    return False


def _read_table(path: str | os.PathLike[str], kind: str) -> pa.Table:
    names, _what, types = _SPECS[kind]
    read = pcsv.ReadOptions(column_names=list(names), block_size=_BLOCK)
    parse = pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False,
                              newlines_in_values=False, ignore_empty_lines=True)
    convert = pcsv.ConvertOptions(column_types=types, include_columns=list(types), null_values=[],
                                  strings_can_be_null=False, quoted_strings_can_be_null=False)
    for collapse in (False, True):
        try:
            with open(path, "rb") as raw:
                source = _SpaceSeparated(raw, collapse)
                table = pcsv.read_csv(source, read, parse, convert, memory_pool=_POOL)
        except pa.ArrowInvalid:  # a line it cannot read (or an empty file): try collapsing, then line by line
            continue
        if not source.irregular and not _has_empty_field(table):  # a leading space empties the topic
            _give_back_freed_memory()
            return table
    # A line the CSV reader refused: find it (and raise naming it), or read what it could not.
    return _scan(path, kind)


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
        row = dict(zip(names, parts, strict=True))
        if kind == "run":
            row["score"] = _score(path, lineno, row["topic"], row["doc"], row["score"])
        else:
            row["label"] = _label(path, lineno, row["label"])
        for name in types:
            cols[name].append(row[name])
    return pa.table({name: pa.array(values, type=types[name]) for name, values in cols.items()})


def _first_bad_row(path: str | os.PathLike[str], kind: str, bad: np.ndarray) -> None:
    """A vectorised check failed: read the file line by line to raise at the first bad line."""
    _scan(path, kind)
    raise TrecFormatError(path, None, f"row {int(np.flatnonzero(bad)[0]) + 1} is invalid")  # pragma: no cover


def read_run_columns(path: str | os.PathLike[str]) -> RunColumns:
    """A run file as columns; TrecFormatError naming the line on a malformed line or a NaN/inf score."""
    table = _read_table(path, "run")
    if table.num_rows == 0:
        raise TrecFormatError(path, None, "the run is empty (no 'topic Q0 doc rank score tag' line)")
    topic, doc, chunks = table.column("topic"), table.column("doc"), table.column("score").chunks
    del table
    # Scores into one numpy array, each Arrow chunk let go once copied: the column is never held twice.
    score = np.empty(len(doc), np.float64)
    start = 0
    for i, chunk in enumerate(chunks):
        score[start : start + len(chunk)] = as_numpy(chunk)
        start += len(chunk)
        chunks[i] = None
    finite = np.isfinite(score)
    if not finite.all():
        _first_bad_row(path, "run", ~finite)
    return RunColumns(str(path), topic, doc, score)


def read_qrels_columns(path: str | os.PathLike[str]) -> QrelsColumns:
    """A qrels file as columns; TrecFormatError naming the line on a malformed line or a negative label."""
    table = _read_table(path, "qrels")
    if table.num_rows == 0:
        raise TrecFormatError(path, None, "the qrels file is empty (no 'topic iteration doc label' line)")
    label = as_numpy(table.column("label"))
    if (label < 0).any():
        _first_bad_row(path, "qrels", label < 0)
    return QrelsColumns(str(path), table.column("topic"), table.column("iteration"), table.column("doc"), label)


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

