"""CoverageBench's release files: locating them in a release folder, and reading them.

Per subset: topics (``topic_id``, ``query``, ``nuggets``; JSONL, a JSON array or parquet, possibly sharded),
``nuggets/<subset>_nuggets.tsv`` (``<topic_id> <nugget_num> <text…>``, split on the first two spaces only),
nugget-level judgments ``qrels/<subset>.qrels`` (``<topic_id> <nugget_num> <doc_id> <label>``, the nugget
number in TREC's iteration column) and baseline runs under ``runs/`` or ``baselines/``. No document text:
that comes from a corpus source (``complexir.upstream.corpus``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from complexir.layout.card import read_front_matter
from complexir.layout.errors import UpstreamFormatError
from complexir.runs.trec_io import read_nugget_qrels, read_run
from complexir.upstream import iter_jsonl

logger = logging.getLogger(__name__)

SPLIT = "test"  # the release's one split
RUN_SUFFIXES = (".run", ".trec", ".txt", ".tsv", ".res")
TOPIC_SUFFIXES = (".jsonl", ".json", ".parquet")


def aliases(subset: str) -> list[str]:
    """File-name stems a subset may go by upstream, most specific first.

    The release names its files by the collection without its year (``nuggets/ragtime_nuggets.tsv`` and
    ``qrels/ragtime.qrels`` for ``ragtime_2025``; its organisation's indexes are ``cast-``, ``fair-``,
    ``neuclir-en-``, ``ragtime-``, ``crux-``), so the year, the ``crux_`` prefix and a second word are tried
    after the full name.
    """
    names = [subset]
    short = re.sub(r"_?\d{4}$", "", subset)
    names.append(short)
    if short.startswith("crux_"):
        names.append(short[len("crux_"):])
    names.append(short.split("_")[0] if not short.startswith("crux_") else "")
    return list(dict.fromkeys(n for n in names if n))


def _stem_matches(name: str, alias: str) -> bool:
    """``name`` is ``alias`` or starts with it followed by a separator (so ``rag`` ≠ ``ragtime``)."""
    return name == alias or (name.startswith(alias) and name[len(alias)] in "._-")

def nuggets_candidates(subset: str) -> list[str]:
    return [f"nuggets/{alias}_nuggets.tsv" for alias in aliases(subset)]


def qrels_candidates(subset: str) -> list[str]:
    return [f"qrels/{alias}.qrels" for alias in aliases(subset)]


def find_nuggets_file(root: Path, subset: str) -> Path | None:
    return next((root / name for name in nuggets_candidates(subset) if (root / name).is_file()), None)


def find_qrels_file(root: Path, subset: str) -> Path | None:
    return next((root / name for name in qrels_candidates(subset) if (root / name).is_file()), None)


def topics_candidates(subset: str) -> list[str]:
    """The topic file names tried (any of ``TOPIC_SUFFIXES``), for the error when none is found."""
    return [f"{folder}{alias}{{{','.join(TOPIC_SUFFIXES)}}}" for alias in aliases(subset)
            for folder in ("topics/", "data/", "")] + [f"{subset}/test*", f"data/{subset}/test*"]


def find_topics_files(root: Path, subset: str) -> list[Path]:
    """Every topics file of ``subset`` (a sharded config has several), in a stable order.

    From the README's ``configs`` data_files when it declares the subset: every file each ``test`` pattern
    matches. Else by name: the matching files of the first folder that has any (``topics/``, ``<subset>/``,
    ``data/<subset>/``, the root), so shards of one config are read together and a copy elsewhere is not.
    """
    readme = root / "README.md"
    if readme.is_file():
        for entry in read_front_matter(readme).get("configs") or []:
            if entry.get("config_name") != subset:
                continue
            files = entry.get("data_files") or []
            if isinstance(files, str):
                files = [{"split": SPLIT, "path": files}]
            hits: list[Path] = []
            for df in files:
                if isinstance(df, dict) and df.get("split", SPLIT) == SPLIT:
                    paths = df["path"] if isinstance(df["path"], list) else [df["path"]]
                    for pattern in paths:
                        hits.extend(sorted(p for p in root.glob(pattern) if p.is_file()))
            if hits:
                return list(dict.fromkeys(hits))
    for alias in aliases(subset):
        for folder in (root / "topics", root / subset, root / "data" / subset, root / "data", root):
            if not folder.is_dir():
                continue
            candidates = [
                path for path in sorted(folder.iterdir())
                if path.suffix in TOPIC_SUFFIXES and path.is_file() and (
                    folder.name in (subset, "topics", "data") and _stem_matches(path.stem, alias)
                    or folder.name == subset and path.stem.startswith(SPLIT)
                    or folder == root and _stem_matches(path.stem, alias)
                )
            ]
            if candidates:
                return candidates
    return []


def find_run_files(root: Path, subset: str) -> list[Path]:
    """Baseline runs of ``subset``: files under ``runs/`` (or ``baselines/``) named or foldered by the subset."""
    for alias in aliases(subset):
        found: list[Path] = []
        for base in (root / "runs", root / "baselines"):
            if not base.is_dir():
                continue
            for path in sorted(base.rglob("*")):
                if not path.is_file() or path.suffix not in RUN_SUFFIXES:
                    continue
                parts = path.relative_to(base).parts
                if any(p == alias for p in parts[:-1]) or _stem_matches(path.name, alias):
                    found.append(path)
        if found:
            return found
    return []


def listed_subsets(root: Path) -> list[str]:
    """The configs the release's card lists (``dataset_info`` and ``configs`` entries), in card order."""
    readme = root / "README.md"
    if not readme.is_file():
        return []
    meta = read_front_matter(readme)
    names = []
    for key in ("dataset_info", "configs"):
        entries = meta.get(key) or []
        for entry in entries if isinstance(entries, list) else [entries]:
            if isinstance(entry, dict) and isinstance(entry.get("config_name"), str):
                names.append(entry["config_name"])
    return list(dict.fromkeys(names))


def available_subsets(root: Path, subsets: Sequence[str]) -> list[str]:
    """The subsets to build by default: those the release's card lists, else those the release holds any file of
    (topics, nuggets or qrels). Every one must then be found whole (:func:`read_subset` names a missing file): a
    subset with some of its files is never dropped silently."""
    listed = [s for s in listed_subsets(root) if s in subsets]
    if listed:
        return listed
    return [s for s in subsets if find_nuggets_file(root, s) or find_qrels_file(root, s) or find_topics_files(root, s)]

@dataclass
class Topic:
    topic_id: str
    query: str
    listed_nuggets: int  # len(nuggets) in the topic row


@dataclass
class SubsetRelease:
    """Everything the upstream release says about one subset (no document text)."""

    topics: dict[str, Topic]
    nuggets: dict[str, dict[str, str]]  # topic -> nugget number -> text (file order)
    judgments: dict[str, dict[str, dict[str, int]]]  # topic -> nugget -> doc -> grade (file order)
    runs: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # run name -> topic -> doc -> score

    def ranked(self, run: str) -> dict[str, list[str]]:
        """A run as topic -> doc ids ranked (score desc, ties doc id desc: trec_eval's rule)."""
        from complexir.metrics import rank_run

        return rank_run(self.runs[run])


def _topic_rows(path: Path) -> Iterator[tuple[int, Topic]]:
    """(line or row number, topic) of one topics file: JSONL, a JSON array, or parquet."""
    rows: Iterable[tuple[int, Any]]
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = enumerate(pq.read_table(path).to_pylist(), start=1)
    elif _json_array(path):  # one JSON array of topics (whatever the suffix), not one object per line
        try:
            rows = enumerate(json.loads(path.read_text(encoding="utf-8-sig")), start=1)
        except json.JSONDecodeError as error:
            raise UpstreamFormatError(path, error.lineno, f"invalid JSON array: {error.msg}") from None
    else:
        rows = iter_jsonl(path)
    for line, row in rows:
        if not isinstance(row, dict):
            raise UpstreamFormatError(path, line, f"expected an object with topic_id, query, nuggets; got {row!r:.80}")
        tid, query, nuggets = row.get("topic_id"), row.get("query"), row.get("nuggets", [])
        if isinstance(tid, int) and not isinstance(tid, bool):
            tid = str(tid)
        if not isinstance(tid, str) or not tid:
            raise UpstreamFormatError(path, line, f"'topic_id' must be a non-empty string, got {tid!r}")
        if not isinstance(query, str) or not query.strip():
            raise UpstreamFormatError(path, line,
                                      f"topic {tid!r}: 'query' must be a non-empty string, got {query!r:.80}")
        if nuggets is None:
            nuggets = []
        if not isinstance(nuggets, list) or not all(isinstance(n, str) for n in nuggets):
            raise UpstreamFormatError(path, line, f"topic {tid!r}: 'nuggets' must be a list of strings")
        yield line, Topic(tid, query.strip(), len(nuggets))


def _json_array(path: Path) -> bool:
    with open(path, encoding="utf-8-sig") as handle:
        for line in handle:
            if line.strip():
                return line.lstrip().startswith("[")
    return False


def read_topics(paths: Path | list[Path]) -> dict[str, Topic]:
    """Topic rows (``topic_id`` str, ``query`` str, ``nuggets`` list[str]) of one file or of every shard of a
    config, in file order; a topic id may appear once across all of them."""
    paths = [paths] if isinstance(paths, Path) else list(paths)
    topics: dict[str, Topic] = {}
    where: dict[str, str] = {}
    for path in paths:
        for line, topic in _topic_rows(path):
            if topic.topic_id in topics:
                raise UpstreamFormatError(path, line, f"duplicate topic_id {topic.topic_id!r} "
                                                      f"(first in {where[topic.topic_id]})")
            topics[topic.topic_id] = topic
            where[topic.topic_id] = f"{path.name}, line {line}"
    if not topics:
        raise UpstreamFormatError(paths[0] if len(paths) == 1 else ", ".join(map(str, paths)), None, "no topics")
    return topics


def read_nuggets(path: Path, topics: dict[str, Topic]) -> dict[str, dict[str, str]]:
    """``<topic_id> <nugget_num> <text…>``: split on the first two spaces only; the text keeps its spaces."""
    out: dict[str, dict[str, str]] = {}
    with open(path, encoding="utf-8") as fh:
        for line, raw in enumerate(fh, start=1):
            text = raw.rstrip("\r\n")
            if not text.strip():
                continue
            parts = text.split(" ", 2)
            if len(parts) < 3 or not parts[0] or not parts[1] or not parts[2].strip():
                raise UpstreamFormatError(path, line, f"expected '<topic_id> <nugget_num> <text>', got {text!r:.100}")
            tid, num, nugget = parts[0], parts[1], parts[2].strip()
            if not num.isdigit():
                raise UpstreamFormatError(path, line, f"nugget number {num!r} is not a non-negative integer")
            if tid not in topics:
                raise UpstreamFormatError(path, line, f"topic {tid!r} is not in the topics file")
            per = out.setdefault(tid, {})
            if num in per:
                raise UpstreamFormatError(path, line, f"topic {tid!r}: nugget {num} listed twice")
            per[num] = nugget
    return out


def run_names(paths: list[Path], root: Path) -> dict[str, Path]:
    """Each run file's name: its stem (``bm25`` for ``runs/cast2020/bm25.run``), else, where two share a stem,
    its path in the release without the suffix."""
    stems = [p.stem for p in paths]
    return {(p.stem if stems.count(p.stem) == 1 else p.relative_to(root).with_suffix("").as_posix()): p
            for p in paths}


def read_subset(root: Path, subset: str) -> SubsetRelease:
    """Topics, nuggets, nugget judgments and baseline runs of one subset."""
    topics_paths = find_topics_files(root, subset)
    nuggets_path = find_nuggets_file(root, subset)
    qrels_path = find_qrels_file(root, subset)
    for what, path, tried in (("topics", topics_paths or None, topics_candidates(subset) + ["a README config"]),
                              ("nuggets", nuggets_path, nuggets_candidates(subset)),
                              ("qrels", qrels_path, qrels_candidates(subset))):
        if path is None:
            raise FileNotFoundError(f"{root}: subset {subset!r} has no {what} file (tried {', '.join(tried)})")
    assert nuggets_path is not None and qrels_path is not None  # the loop above raised otherwise
    topics = read_topics(topics_paths)
    nuggets = read_nuggets(nuggets_path, topics)
    # ``<topic_id> <nugget_num> <doc_id> <label>``: the house TREC reader (integer labels >= 0, the same
    # judgment twice only with one label), checked against the nugget TSV
    judgments = read_nugget_qrels(qrels_path, known=nuggets)
    runs = {name: read_run(p) for name, p in run_names(find_run_files(root, subset), root).items()}
    for tid, topic in topics.items():
        n = len(nuggets.get(tid, {}))
        if topic.listed_nuggets and topic.listed_nuggets != n:
            logger.warning("%s: topic %r lists %d nuggets but %s has %d", subset, tid, topic.listed_nuggets,
                           nuggets_path.name, n)
    return SubsetRelease(topics, nuggets, judgments, runs)
