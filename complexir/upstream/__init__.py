"""Reading upstream releases: what every loading script needs, with errors that name file and line.

This module holds the record readers (JSON Lines, string fields). Beside it:
* ``release``: one resolver from ``--source``/``--revision`` (a local folder or a Hub dataset id) to files on disk;
* ``options``: the build flags every loading script shares (``--source``, ``--revision``, ``--subset``,
  ``--no-progress``), declared once;
* ``corpus``: document text kept outside a release (ir_datasets, Hub datasets, local JSONL / TREC files);
* ``coveragebench``: CoverageBench's release files (topics, nugget TSV, nugget qrels, baseline runs).
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, overload

from complexir.layout.errors import UpstreamFormatError


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file (``.gz`` too), one line at a time.

    A line that is not JSON, or not a JSON object, is an ``UpstreamFormatError`` naming the file and line.
    A leading byte-order mark is ignored (files saved by spreadsheet tools have one).
    """
    path = Path(path)
    if not path.is_file():
        raise UpstreamFormatError(path, None, "file missing")
    opener = gzip.open if path.suffix == ".gz" else open
    number = 0
    try:
        with opener(path, "rt", encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    raise UpstreamFormatError(path, number, f"invalid JSON: {error.msg}") from None
                if not isinstance(record, dict):
                    raise UpstreamFormatError(path, number, f"expected a JSON object, got {type(record).__name__}")
                yield number, record
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:  # gzip names neither the file nor where
        raise UpstreamFormatError(path, None, f"a truncated or corrupt gzip file ({error or type(error).__name__}; "
                                              f"{number} line(s) read): download or unpack it again") from None


@overload
def string_field(record: dict[str, Any], key: str, path: Path, line: int, *, nullable: Literal[False] = False,
                 empty_ok: bool = True) -> str: ...
@overload
def string_field(record: dict[str, Any], key: str, path: Path, line: int, *, nullable: bool,
                 empty_ok: bool = True) -> str | None: ...
def string_field(record: dict[str, Any], key: str, path: Path, line: int, *, nullable: bool = False,
                 empty_ok: bool = True) -> str | None:
    """``record[key]`` checked to be a string (or null when ``nullable``); else an error naming file and line."""
    if key not in record:
        raise UpstreamFormatError(path, line, f"missing field {key!r} (fields: {sorted(record)})")
    value = record[key]
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise UpstreamFormatError(path, line, f"field {key!r}: expected a string, got {type(value).__name__}")
    if not empty_ok and not value:
        raise UpstreamFormatError(path, line, f"field {key!r}: expected a non-empty string")
    return value
