"""Check that a folder is a valid benchmark in the standard layout, reading only the columns it needs.

Used by the writer before it renames a build into place, and by ``complexir validate`` on any folder
(a downloaded Hub repo included). This module reads the files and checks their schemas; the rules over rows
taken together are ``integrity``'s, the same the writer applies while it writes.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from complexir.layout.card import MISSING_DOCUMENTS_KEY, read_front_matter
from complexir.layout.errors import LayoutError
from complexir.layout.eval_config import check_eval_config
from complexir.layout.folder import BenchmarkFolder
from complexir.layout.integrity import DocumentIds, Place, SplitIntegrity, check_declared_missing, check_grade
from complexir.layout.schema import CORPUS, NUGGETS, QRELS, QUERIES, REQUIRED, TOP_RANKED


def configs(folder: Path) -> dict[tuple[str | None, str], dict[str, list[Path]]]:
    """(subset, kind) → split → parquet files, from the card's ``configs`` (parsed by ``BenchmarkFolder``)."""
    card = BenchmarkFolder.open_local(folder)
    return {key: card.files(config) for key, config in card.configs.items()}


# A truncated, corrupt or non-parquet file surfaces from pyarrow as ArrowInvalid/ArrowException or OSError.
_READ_ERRORS = (pa.ArrowException, OSError)


def _check_schema(path: Path, kind: str) -> pa.Schema:
    try:
        schema = pq.read_schema(path)
    except _READ_ERRORS as error:
        raise LayoutError(f"{path}: not a readable parquet file ({error})") from error
    for field in REQUIRED[kind]:
        if field.name not in schema.names:
            raise LayoutError(f"{path}: missing column {field.name!r} ({field.type})")
        if not schema.field(field.name).type.equals(field.type):
            raise LayoutError(f"{path}: column {field.name!r} has type {schema.field(field.name).type}, "
                              f"expected {field.type}")
    return schema


def _read_every_row(path: Path) -> None:
    """Decode every column of every row (as ``load_dataset`` will), so that corrupt pages or invalid UTF-8 in a
    column the checks below do not read are found here, with the file and the rows read before them."""
    rows = 0
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=65_536):
            batch.validate(full=True)
            rows += batch.num_rows
    except _READ_ERRORS as error:
        raise LayoutError(f"{path}: unreadable after row {rows} ({error})") from error


def _rows(paths: list[Path], columns: list[str]) -> Iterator[tuple[Place, tuple[Any, ...]]]:
    """(place, values of ``columns``) over every row of every file of a config split, one file in memory at a
    time. Required columns must not be null: a null id or grade is refused here."""
    for path in paths:
        try:
            table = pq.read_table(path, columns=columns)
        except _READ_ERRORS as error:
            raise LayoutError(f"{path}: not a readable parquet file ({error})") from error
        values = [table.column(name).to_pylist() for name in columns]
        for i, row in enumerate(zip(*values, strict=True), 1):
            place = Place(str(path), i, path.name)
            for name, value in zip(columns, row, strict=True):
                if value is None:
                    raise LayoutError(f"{place}: column {name!r} is null")
            yield place, row


def _document_ids(paths: list[Path], scratch: Path) -> DocumentIds:
    """The corpus ids, checked unique, read one batch of one file at a time (a corpus may be far larger than
    memory; ``DocumentIds`` keeps a hash a document in ``scratch``)."""
    ids = DocumentIds(scratch, lambda path, local, number: Place(str(path), local + 1, path.name))
    try:
        _add_ids(ids, paths)
        ids.check_unique()
    except BaseException:
        ids.remove()
        raise
    return ids


def _add_ids(ids: DocumentIds, paths: list[Path]) -> None:
    for path in paths:
        read = 0
        try:
            for batch in pq.ParquetFile(path).iter_batches(columns=["id"], batch_size=65_536):
                column = batch.column(0)
                if column.null_count:
                    null = read + column.is_null().to_pylist().index(True)
                    raise LayoutError(f"{Place(str(path), null + 1)}: column 'id' is null")
                ids.add(column.to_pylist(), path)
                read += batch.num_rows
        except _READ_ERRORS as error:
            raise LayoutError(f"{path}: not a readable parquet file ({error})") from error


def _declared_missing(folder: Path) -> dict[str, dict[str, dict[str, int]]]:
    """The card's count of judgments on documents missing from the corpus: subset → split → {qrels, nugget_support}."""
    meta = read_front_matter(folder / "README.md").get("complexir") or {}
    return meta.get(MISSING_DOCUMENTS_KEY) or {}


def validate_folder(folder: str | Path, *, every_row: bool = True,
                    scratch: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Validate ``folder``; return per-subset counts. Raises ``LayoutError`` naming the file and row.

    ``every_row`` also decodes every column of every file, as ``load_dataset`` does; the writer, checking files
    it has just written with pyarrow, skips that. The corpus ids' hashes go to a temporary folder inside
    ``scratch`` (default: the system's), removed on return.
    """
    tmp = Path(tempfile.mkdtemp(dir=scratch, prefix=".complexir-validate-"))
    try:
        return _validate(Path(folder), every_row, tmp)
    finally:
        tmp.rmdir()  # each subset's DocumentIds has removed its own files


def _validate(folder: Path, every_row: bool, scratch: Path) -> dict[str, dict[str, Any]]:
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder}: not a folder" if folder.exists() else f"{folder}: no such folder")
    found = configs(folder)
    declared_missing = _declared_missing(folder)
    by_subset: dict[str | None, dict[str, dict[str, list[Path]]]] = defaultdict(dict)
    for (subset, kind), splits in found.items():
        for paths in splits.values():
            for p in paths:
                _check_schema(p, kind)
                if every_row:
                    _read_every_row(p)
        by_subset[subset][kind] = splits

    report: dict[str, dict[str, Any]] = {}
    for subset, kinds in by_subset.items():
        name = subset or "default"
        if CORPUS not in kinds:
            raise LayoutError(f"{folder}: subset {name!r} has no corpus config, has {sorted(kinds)}")
        # A subset may be corpus-only (a corpus other subsets' tasks read); anything else needs both
        # queries and qrels, split by split.
        extra_kinds = sorted(set(kinds) - {CORPUS})
        if extra_kinds and (QUERIES not in kinds or QRELS not in kinds):
            raise LayoutError(f"{folder}: subset {name!r} needs both queries and qrels configs (or neither, "
                              f"for a corpus-only subset), has {sorted(kinds)}")
        for kind in extra_kinds:
            for split in kinds[kind]:
                if split not in kinds[QUERIES]:
                    raise LayoutError(f"{folder}: subset {name!r} has {kind} but no queries for split {split!r}")
        corpus_paths = [p for ps in kinds[CORPUS].values() for p in ps]
        doc_ids = _document_ids(corpus_paths, scratch / name)
        try:
            counts: dict[str, Any] = {"documents": len(doc_ids), "splits": {}}
            for split, qpaths in kinds.get(QUERIES, {}).items():
                if split not in kinds[QRELS]:
                    raise LayoutError(f"{folder}: subset {name!r} has queries but no qrels for split {split!r}")
                rules = SplitIntegrity(name, doc_ids)
                for place, (qid,) in _rows(qpaths, ["id"]):
                    rules.query(qid, place)
                for place, (qid, did, score) in _rows(kinds[QRELS][split], ["query-id", "corpus-id", "score"]):
                    rules.judgment(qid, did, check_grade(score, f"{place}, column 'score'"), place)
                has_nuggets = NUGGETS in kinds and split in kinds[NUGGETS]
                for place, (qid, nid, support) in _rows(kinds[NUGGETS][split] if has_nuggets else [],
                                                       ["query-id", "nugget-id", "support"]):
                    for j, entry in enumerate(support, 1):
                        check_grade(entry["score"], f"{place}, support {j}, 'score'")
                    rules.nugget(qid, nid, [entry["corpus-id"] for entry in support], place)
                if TOP_RANKED in kinds and split in kinds[TOP_RANKED]:
                    for place, (qid, ranked) in _rows(kinds[TOP_RANKED][split], ["query-id", "corpus-ids"]):
                        rules.ranked_list(qid, ranked, place)
                rules.require_positive(qpaths[0])
                missing_qrels, missing_support = rules.missing_documents()
                declared = declared_missing.get(name, {}).get(split, {})
                check_declared_missing(missing_qrels, declared.get("qrels", 0), "qrels", name, split,
                                       kinds[QRELS][split][0])
                if has_nuggets:
                    check_declared_missing(missing_support, declared.get("nugget_support", 0), "nugget support", name,
                                           split, kinds[NUGGETS][split][0])
                counts["splits"][split] = {
                    "queries": len(rules.queries), "qrels": len(rules.judgments), "nuggets": len(rules.nuggets),
                    "missing_document_qrels": len(missing_qrels), "missing_document_support": len(missing_support)}
        finally:
            doc_ids.remove()
        report[name] = counts
    if not any(counts["splits"] for counts in report.values()):
        raise LayoutError(f"{folder}: no subset has queries and qrels: nothing to evaluate")
    check_eval_config(folder)  # when the folder has one (a build writes it after this check, then checks it)
    return report
