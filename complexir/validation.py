"""Check that a folder is a valid benchmark in the standard layout, reading only the columns it needs.

Used by the writer before it renames a build into place, and by ``complexir validate`` on any folder
(a downloaded Hub repo included).
"""

from __future__ import annotations

import glob
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
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


def configs(folder: Path) -> dict[tuple[str | None, str], dict[str, list[Path]]]:
    """(subset, kind) → split → parquet files, from the README's ``configs`` list."""
    readme = folder / "README.md"
    if not readme.is_file():
        raise LayoutError(f"{readme}: missing (the card carries the configs list)")
    meta = read_front_matter(readme)
    if not meta.get("configs"):
        raise LayoutError(f"{readme}: no 'configs' in the YAML front matter")
    out: dict[tuple[str | None, str], dict[str, list[Path]]] = {}
    for entry in meta["configs"]:
        key = parse_config_name(entry["config_name"])
        splits: dict[str, list[Path]] = {}
        for df in entry["data_files"]:
            paths = sorted(Path(p) for p in glob.glob(str(folder / df["path"])))
            if not paths:
                raise LayoutError(f"{readme}: config {entry['config_name']!r} split {df['split']!r}: "
                                  f"no file matches {df['path']!r}")
            splits[df["split"]] = paths
        out[key] = splits
    return out


def _check_schema(path: Path, kind: str) -> pa.Schema:
    schema = pq.read_schema(path)
    for field in REQUIRED[kind]:
        if field.name not in schema.names:
            raise LayoutError(f"{path}: missing column {field.name!r} ({field.type})")
        if not schema.field(field.name).type.equals(field.type):
            raise LayoutError(f"{path}: column {field.name!r} has type {schema.field(field.name).type}, "
                              f"expected {field.type}")
    return schema


def _column(paths: list[Path], name: str) -> list[Any]:
    return [v for p in paths for v in pq.read_table(p, columns=[name]).column(name).to_pylist()]


def _unique(values: list[str], what: str) -> set[str]:
    seen: set[str] = set()
    for i, v in enumerate(values, 1):
        if v in seen:
            raise LayoutError(f"{what}, row {i}: duplicate id {v!r}")
        seen.add(v)
    return seen


def validate_folder(folder: str | Path) -> dict[str, dict[str, Any]]:
    """Validate ``folder``; return per-subset counts. Raises ``LayoutError`` naming the file and row."""
    folder = Path(folder)
    found = configs(folder)
    by_subset: dict[str | None, dict[str, dict[str, list[Path]]]] = defaultdict(dict)
    for (subset, kind), splits in found.items():
        for paths in splits.values():
            for p in paths:
                _check_schema(p, kind)
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
        doc_ids = _unique(_column(corpus_paths, "id"), f"{corpus_paths[0].parent}/corpus-*.parquet")
        counts: dict[str, Any] = {"documents": len(doc_ids), "splits": {}}
        for split, qpaths in kinds.get(QUERIES, {}).items():
            query_ids = _unique(_column(qpaths, "id"), str(qpaths[0]))
            if split not in kinds[QRELS]:
                raise LayoutError(f"{folder}: subset {name!r} has queries but no qrels for split {split!r}")
            qrels_path = kinds[QRELS][split][0]
            qrels = pq.read_table(qrels_path, columns=["query-id", "corpus-id", "score"])
            _check_references(qrels_path, qrels.column("query-id").to_pylist(), query_ids, "query-id")
            _check_references(qrels_path, qrels.column("corpus-id").to_pylist(), doc_ids, "corpus-id")
            if pc.any(pc.less(qrels.column("score"), 0)).as_py():
                raise LayoutError(f"{qrels_path}: negative score")
            positive = set(pc.filter(qrels.column("query-id"), pc.greater(qrels.column("score"), 0)).to_pylist())
            missing = query_ids - positive
            if missing:
                raise LayoutError(
                    f"{qpaths[0]}: {len(missing)} queries have no positive qrel, e.g. {sorted(missing)[:3]}"
                )
            split_counts = {"queries": len(query_ids), "qrels": qrels.num_rows, "nuggets": 0}
            if NUGGETS in kinds and split in kinds[NUGGETS]:
                npath = kinds[NUGGETS][split][0]
                nuggets = pq.read_table(npath, columns=["query-id", "support"])
                _check_references(npath, nuggets.column("query-id").to_pylist(), query_ids, "query-id")
                support_ids = pc.list_flatten(nuggets.column("support")).combine_chunks()
                if len(support_ids):
                    _check_references(npath, support_ids.field("corpus-id").to_pylist(), doc_ids, "support corpus-id")
                split_counts["nuggets"] = nuggets.num_rows
            if TOP_RANKED in kinds and split in kinds[TOP_RANKED]:
                tpath = kinds[TOP_RANKED][split][0]
                top = pq.read_table(tpath)
                _check_references(tpath, top.column("query-id").to_pylist(), query_ids, "query-id")
                _check_references(tpath, pc.list_flatten(top.column("corpus-ids")).to_pylist(), doc_ids, "corpus-ids")
            counts["splits"][split] = split_counts
        report[name] = counts
    if not any(counts["splits"] for counts in report.values()):
        raise LayoutError(f"{folder}: no subset has queries and qrels: nothing to evaluate")
    return report


def _check_references(path: Path, values: list[str], known: set[str], column: str) -> None:
    for i, v in enumerate(values, 1):
        if v not in known:
            raise LayoutError(f"{path}, row {i}: {column} {v!r} does not exist")
