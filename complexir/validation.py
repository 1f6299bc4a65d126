"""Check that a folder is a valid benchmark in the standard layout, reading only the columns it needs.

Used by the writer before it renames a build into place, and by ``complexir validate`` on any folder
(a downloaded Hub repo included).
"""

from __future__ import annotations

import glob
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .card import read_front_matter
from .errors import LayoutError
from .schema import CORPUS, KINDS, NUGGETS, QRELS, QUERIES, REQUIRED, TOP_RANKED


def parse_config_name(name: str) -> tuple[str | None, str]:
    """``"clinical_trial-corpus"`` → ``("clinical_trial", "corpus")``; ``"corpus"`` → ``(None, "corpus")``."""
    for kind in KINDS:
        if name == kind:
            return None, kind
        if name.endswith("-" + kind):
            return name[: -len(kind) - 1], kind
    raise LayoutError(f"config {name!r}: expected '<subset>-<kind>' with kind one of {KINDS}")


def _data_files(readme: Path, name: str, value: Any) -> dict[str, list[str]]:
    """A config's ``data_files`` in any form ``datasets`` accepts (a pattern, a list of patterns, or a list of
    ``{split, path}`` with ``path`` a pattern or a list of them) as split → patterns; a bare pattern or list
    is the split ``train``, as in ``datasets``."""
    def patterns(path: Any, where: str) -> list[str]:
        items = [path] if isinstance(path, str) else path
        if not isinstance(items, list) or not items or not all(isinstance(p, str) and p for p in items):
            raise LayoutError(f"{readme}: config {name!r}{where}: expected a path pattern or a list of them, "
                              f"got {path!r:.80}")
        return items

    if isinstance(value, str) or (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
        return {"train": patterns(value, "")}
    if not isinstance(value, list) or not value:
        raise LayoutError(f"{readme}: config {name!r}: 'data_files' must be a pattern, a list of patterns or a list "
                          f"of {{split, path}}, got {value!r:.80}")
    splits: dict[str, list[str]] = {}
    for entry in value:
        if not isinstance(entry, dict) or not isinstance(entry.get("split"), str) or "path" not in entry:
            raise LayoutError(f"{readme}: config {name!r}: each data_files entry needs 'split' and 'path', got "
                              f"{entry!r:.80}")
        splits[entry["split"]] = patterns(entry["path"], f" split {entry['split']!r}")
    return splits


def _files_inside(folder: Path, readme: Path, where: str, pattern: str) -> list[Path]:
    """The files ``pattern`` matches, all inside ``folder``: a pattern or a link reaching outside is refused."""
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise LayoutError(f"{readme}: {where}: path {pattern!r} points outside the folder")
    root = folder.resolve()
    paths = sorted(Path(p) for p in glob.glob(str(folder / pattern), recursive=True))
    for path in paths:
        if not path.resolve().is_relative_to(root):
            raise LayoutError(f"{readme}: {where}: {path} is a link to {path.resolve()}, outside the folder")
    return [p for p in paths if p.is_file()]


def configs(folder: Path) -> dict[tuple[str | None, str], dict[str, list[Path]]]:
    """(subset, kind) → split → parquet files, from the README's ``configs`` list."""
    readme = folder / "README.md"
    if not readme.is_file():
        raise LayoutError(f"{readme}: missing (the card carries the configs list)")
    meta = read_front_matter(readme)
    if not meta.get("configs"):
        raise LayoutError(f"{readme}: no 'configs' in the YAML front matter")
    if not isinstance(meta["configs"], list):
        raise LayoutError(f"{readme}: 'configs' must be a list of {{config_name, data_files}} entries (datasets "
                          f"reads no other form), got a {type(meta['configs']).__name__}")
    out: dict[tuple[str | None, str], dict[str, list[Path]]] = {}
    for entry in meta["configs"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("config_name"), str):
            raise LayoutError(f"{readme}: each configs entry needs a 'config_name', got {entry!r:.80}")
        name = entry["config_name"]
        key = parse_config_name(name)
        if key in out:
            raise LayoutError(f"{readme}: config {name!r} listed twice")
        splits: dict[str, list[Path]] = {}
        for split, split_patterns in _data_files(readme, name, entry.get("data_files")).items():
            where = f"config {name!r} split {split!r}"
            paths = sorted({p for pattern in split_patterns for p in _files_inside(folder, readme, where, pattern)})
            if not paths:
                shown = split_patterns[0] if len(split_patterns) == 1 else split_patterns
                raise LayoutError(f"{readme}: {where}: no file matches {shown!r}")
            splits[split] = paths
        out[key] = splits
    return out


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


def validate_folder(folder: str | Path, *, every_row: bool = True) -> dict[str, dict[str, Any]]:
    """Validate ``folder``; return per-subset counts. Raises ``LayoutError`` naming the file and row.

    ``every_row`` also decodes every column of every file, as ``load_dataset`` does; the writer, checking files
    it has just written with pyarrow, skips that.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder}: not a folder" if folder.exists() else f"{folder}: no such folder")
    found = configs(folder)
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
            for path, i, (qid, did, score) in _rows(kinds[QRELS][split], ["query-id", "corpus-id", "score"]):
                _check_reference(path, i, qid, query_ids, "query-id")
                _check_reference(path, i, did, doc_ids, "corpus-id")
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
            split_counts = {"queries": len(query_ids), "qrels": len(pairs), "nuggets": 0}
            if NUGGETS in kinds and split in kinds[NUGGETS]:
                nugget_keys: set[tuple[str, str]] = set()
                for path, i, (qid, nid, support) in _rows(kinds[NUGGETS][split], ["query-id", "nugget-id", "support"]):
                    _check_reference(path, i, qid, query_ids, "query-id")
                    if (qid, nid) in nugget_keys:
                        raise LayoutError(f"{path}, row {i}: duplicate nugget {nid!r} for query {qid!r}")
                    nugget_keys.add((qid, nid))
                    supported: set[str] = set()
                    for entry in support:
                        did = entry["corpus-id"]
                        _check_reference(path, i, did, doc_ids, "support corpus-id")
                        if did in supported:
                            raise LayoutError(f"{path}, row {i}: document {did!r} twice in the support of nugget "
                                              f"{nid!r}")
                        supported.add(did)
                split_counts["nuggets"] = len(nugget_keys)
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
