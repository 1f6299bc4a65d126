"""Check that a folder is a valid benchmark in the standard layout, reading only the columns it needs.

Used by the writer before it renames a build into place, and by ``complexir validate`` on any folder
(a downloaded Hub repo included).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .card import MISSING_DOCUMENTS_KEY, read_front_matter
from .errors import LayoutError
from .folder import BenchmarkFolder
from .schema import CORPUS, NUGGETS, QRELS, QUERIES, REQUIRED, TOP_RANKED


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


def _rows(paths: list[Path], columns: list[str]) -> Iterator[tuple[Path, int, tuple[Any, ...]]]:
    """(file, row number in that file, values of ``columns``) over every file of a config split, one file
    in memory at a time. Required columns must not be null: a null id or grade is refused here."""
    for path in paths:
        try:
            table = pq.read_table(path, columns=columns)
        except _READ_ERRORS as error:
            raise LayoutError(f"{path}: not a readable parquet file ({error})") from error
        values = [table.column(name).to_pylist() for name in columns]
        for i, row in enumerate(zip(*values, strict=True), 1):
            for name, value in zip(columns, row, strict=True):
                if value is None:
                    raise LayoutError(f"{path}, row {i}: column {name!r} is null")
            yield path, i, row


def _unique_ids(paths: list[Path]) -> set[str]:
    seen: dict[str, tuple[Path, int]] = {}
    for path, i, (v,) in _rows(paths, ["id"]):
        if v in seen:
            first = seen[v]
            raise LayoutError(f"{path}, row {i}: duplicate id {v!r} (first at {first[0].name}, row {first[1]})")
        seen[v] = (path, i)
    return set(seen)


def _check_reference(path: Path, row: int, value: str, known: set[str], column: str) -> None:
    if value not in known:
        raise LayoutError(f"{path}, row {row}: {column} {value!r} does not exist")


def _declared_missing(folder: Path) -> dict[str, dict[str, dict[str, int]]]:
    """The card's count of judgments on documents missing from the corpus: subset → split → {qrels, nugget_support}."""
    meta = read_front_matter(folder / "README.md").get("complexir") or {}
    return meta.get(MISSING_DOCUMENTS_KEY) or {}


def _check_missing_count(path: Path, kind: str, found: list[tuple[Path, int, str]], declared: int) -> None:
    """Judgments on documents the corpus lacks are allowed, exactly as many as the card declares."""
    if len(found) == declared:
        return
    if len(found) > declared:
        where, row, did = found[declared]
        raise LayoutError(f"{where}, row {row}: {kind} corpus-id {did!r} does not exist in the corpus, and the card "
                          f"declares {declared} such judgment(s) for this split ({len(found)} found)")
    raise LayoutError(f"{path}: the card declares {declared} {kind} judgment(s) on documents missing from the corpus, "
                      f"{len(found)} found")


def validate_folder(folder: str | Path, *, every_row: bool = True) -> dict[str, dict[str, Any]]:
    """Validate ``folder``; return per-subset counts. Raises ``LayoutError`` naming the file and row.

    ``every_row`` also decodes every column of every file, as ``load_dataset`` does; the writer, checking files
    it has just written with pyarrow, skips that.
    """
    folder = Path(folder)
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
        doc_ids = _unique_ids(corpus_paths)
        counts: dict[str, Any] = {"documents": len(doc_ids), "splits": {}}
        for split, qpaths in kinds.get(QUERIES, {}).items():
            query_ids = _unique_ids(qpaths)
            if split not in kinds[QRELS]:
                raise LayoutError(f"{folder}: subset {name!r} has queries but no qrels for split {split!r}")
            pairs: dict[tuple[str, str], tuple[Path, int]] = {}
            positive: set[str] = set()
            declared = declared_missing.get(name, {}).get(split, {})
            missing_docs: list[tuple[Path, int, str]] = []
            for path, i, (qid, did, score) in _rows(kinds[QRELS][split], ["query-id", "corpus-id", "score"]):
                _check_reference(path, i, qid, query_ids, "query-id")
                if did not in doc_ids:
                    missing_docs.append((path, i, did))
                if score < 0:
                    raise LayoutError(f"{path}, row {i}: negative score {score}")
                if (qid, did) in pairs:
                    first = pairs[qid, did]
                    raise LayoutError(f"{path}, row {i}: duplicate judgment for query {qid!r} and document {did!r} "
                                      f"(first at {first[0].name}, row {first[1]})")
                pairs[qid, did] = (path, i)
                if score > 0:
                    positive.add(qid)
            missing = query_ids - positive
            if missing:
                raise LayoutError(
                    f"{qpaths[0]}: {len(missing)} queries have no positive qrel, e.g. {sorted(missing)[:3]}"
                )
            _check_missing_count(kinds[QRELS][split][0], "qrels", missing_docs, declared.get("qrels", 0))
            split_counts = {"queries": len(query_ids), "qrels": len(pairs), "nuggets": 0,
                            "missing_document_qrels": len(missing_docs), "missing_document_support": 0}
            if NUGGETS in kinds and split in kinds[NUGGETS]:
                nugget_keys: set[tuple[str, str]] = set()
                missing_support: list[tuple[Path, int, str]] = []
                for path, i, (qid, nid, support) in _rows(kinds[NUGGETS][split], ["query-id", "nugget-id", "support"]):
                    _check_reference(path, i, qid, query_ids, "query-id")
                    if (qid, nid) in nugget_keys:
                        raise LayoutError(f"{path}, row {i}: duplicate nugget {nid!r} for query {qid!r}")
                    nugget_keys.add((qid, nid))
                    supported: set[str] = set()
                    for entry in support:
                        did = entry["corpus-id"]
                        if did not in doc_ids:
                            missing_support.append((path, i, did))
                        if did in supported:
                            raise LayoutError(f"{path}, row {i}: document {did!r} twice in the support of nugget "
                                              f"{nid!r}")
                        supported.add(did)
                _check_missing_count(kinds[NUGGETS][split][0], "nugget support", missing_support,
                                     declared.get("nugget_support", 0))
                split_counts["nuggets"] = len(nugget_keys)
                split_counts["missing_document_support"] = len(missing_support)
            if TOP_RANKED in kinds and split in kinds[TOP_RANKED]:
                for path, i, (qid, ranked) in _rows(kinds[TOP_RANKED][split], ["query-id", "corpus-ids"]):
                    _check_reference(path, i, qid, query_ids, "query-id")
                    for did in ranked:
                        _check_reference(path, i, did, doc_ids, "corpus-ids")
            counts["splits"][split] = split_counts
        report[name] = counts
    if not any(counts["splits"] for counts in report.values()):
        raise LayoutError(f"{folder}: no subset has queries and qrels: nothing to evaluate")
    return report
