"""The standard layout's Arrow schemas and naming rules (the user's guide: docs/layout.md).

One benchmark is one folder that is a Hugging Face dataset repo: ``data/<subset>/<kind>-<split>.parquet``
files (the corpus in shards ``corpus-00000.parquet``, ...), announced as ``<subset>-<kind>`` configs in the
README's YAML. Column names follow MTEB's retrieval loader so that ``mteb`` reads the folder natively.

This module is the one owner of names and files: config name ↔ (subset, kind), and (subset, kind, split) ↔
the file the writer writes and the pattern the card announces.
"""

from __future__ import annotations

import re

import pyarrow as pa

from complexir.layout.errors import LayoutError

CORPUS = "corpus"
QUERIES = "queries"
QRELS = "qrels"
NUGGETS = "nuggets"
TOP_RANKED = "top_ranked"
# Released rankings kept as they are (CoverageBench's baseline runs): one row per (run, query, document), scored
# as systems of their own; they may name documents the corpus lacks and queries the layout dropped.
RUNS = "runs"
KINDS = (CORPUS, QUERIES, QRELS, NUGGETS, TOP_RANKED, RUNS)

# The corpus config has a single split; BEIR and MTEB datasets on the Hub name it "corpus".
CORPUS_SPLIT = "corpus"

# Subset and split names become folder and file names (``data/<subset>/<kind>-<split>.parquet``): letters,
# digits, ``_`` and ``-`` only, so that no name can reach outside the folder (``..``, ``/``) or hide a file.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
# Split names: no "-" either, as `datasets` requires.
SPLIT_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]{0,99}")


def check_name(name: object, what: str) -> str:
    """``name`` if it is a valid subset (``what="subset"``) or split name, else a ``LayoutError``."""
    pattern, chars = (SPLIT_PATTERN, "'_'") if what == "split" else (NAME_PATTERN, "'_' or '-'")
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise LayoutError(f"{what} name {name!r}: expected 1-100 letters, digits, {chars}, starting with a "
                          "letter or digit (it becomes a folder or file name)")
    return name

# Required columns, in order. Optional columns are listed separately; any other extra column is kept as is.
REQUIRED = {
    CORPUS: pa.schema([("id", pa.string()), ("title", pa.string()), ("text", pa.string())]),
    QUERIES: pa.schema([("id", pa.string()), ("text", pa.string())]),
    QRELS: pa.schema([("query-id", pa.string()), ("corpus-id", pa.string()), ("score", pa.int32())]),
    NUGGETS: pa.schema(
        [
            ("query-id", pa.string()),
            ("nugget-id", pa.string()),
            ("text", pa.string()),
            ("weight", pa.float64()),
            (
                "support",
                pa.list_(pa.struct([("corpus-id", pa.string()), ("score", pa.int32())])),
            ),
        ]
    ),
    TOP_RANKED: pa.schema([("query-id", pa.string()), ("corpus-ids", pa.list_(pa.string()))]),
    RUNS: pa.schema([("run", pa.string()), ("query-id", pa.string()), ("corpus-id", pa.string()),
                     ("rank", pa.int32()), ("score", pa.float64())]),
}

OPTIONAL = {
    CORPUS: pa.schema(
        [("parent-id", pa.string()), ("language", pa.string()), ("metadata", pa.string())]
    ),
    QUERIES: pa.schema(
        [("instruction", pa.string()), ("language", pa.string()), ("metadata", pa.string())]
    ),
    QRELS: pa.schema([]),
    NUGGETS: pa.schema([]),
    TOP_RANKED: pa.schema([]),
    RUNS: pa.schema([]),
}


DATA_FOLDER = "data"
UNNAMED_SUBSET = "default"  # the folder (and card key) of a benchmark's single, unnamed subset


def config_name(subset: str | None, kind: str) -> str:
    """``<subset>-<kind>``, or just ``<kind>`` for a benchmark with a single, unnamed subset."""
    return f"{subset}-{kind}" if subset else kind


def parse_config_name(name: str) -> tuple[str | None, str]:
    """``"clinical_trial-corpus"`` → ``("clinical_trial", "corpus")``; ``"corpus"`` → ``(None, "corpus")``."""
    for kind in KINDS:
        if name == kind:
            return None, kind
        if name.endswith("-" + kind):
            return name[: -len(kind) - 1], kind
    raise LayoutError(f"config {name!r}: expected '<subset>-<kind>' with kind one of {KINDS}")


def data_file(subset: str | None, kind: str, split: str, shard: int = 0) -> str:
    """The file one config split is written to, relative to the folder (``shard``: the corpus's n-th file)."""
    folder = f"{DATA_FOLDER}/{subset or UNNAMED_SUBSET}"
    return f"{folder}/corpus-{shard:05d}.parquet" if kind == CORPUS else f"{folder}/{kind}-{split}.parquet"


def data_files(subset: str | None, kind: str, split: str) -> str:
    """The path pattern the card announces for one config split (the corpus is sharded)."""
    folder = f"{DATA_FOLDER}/{subset or UNNAMED_SUBSET}"
    return f"{folder}/corpus-*.parquet" if kind == CORPUS else f"{folder}/{kind}-{split}.parquet"


def config_files(subset: str | None, kind: str, splits: list[str]) -> tuple[str, dict[str, str]]:
    """(config name, {split: pattern}) for the README's ``configs`` list; the corpus has its one split."""
    if kind == CORPUS:
        return config_name(subset, kind), {CORPUS_SPLIT: data_files(subset, kind, CORPUS_SPLIT)}
    return config_name(subset, kind), {s: data_files(subset, kind, s) for s in splits}


def schema_for(kind: str, columns: list[str]) -> pa.Schema:
    """The schema of a ``kind`` table holding ``columns``: required ones first, then optional, then extras.

    Extra columns (not in the standard) are typed as strings: anything richer belongs in ``metadata`` JSON.
    """
    required = REQUIRED[kind]
    optional = {f.name: f for f in OPTIONAL[kind]}
    fields = list(required)
    for name in columns:
        if name in required.names:
            continue
        fields.append(optional.get(name, pa.field(name, pa.string())))
    return pa.schema(fields)
