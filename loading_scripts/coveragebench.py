"""CoverageBench (Samuel et al. 2026): nugget judgments + external corpora → the standard layout.

    complexir build coveragebench --source hltcoe/coveragebench --out DIR
        [--subset cast2020 crux_duc04 ...] [--corpus pooled|full] [--docs SUBSET=SOURCE ...]

The upstream release (a Hub dataset repo, or a local folder holding its files) carries, per subset,
topics (``topic_id``, ``query``, ``nuggets``), ``nuggets/<subset>_nuggets.tsv`` (``<topic_id> <nugget_num>
<text…>``, split on the first two spaces only), nugget-level judgments ``qrels/<subset>.qrels``
(``<topic_id> <nugget_num> <doc_id> <label>``, the nugget number in TREC's iteration column) and baseline
runs, but no document text. The text comes from a corpus source per subset (``--docs``): an ir_datasets
id, a Hub dataset, or a local JSONL / TREC file.

What a build writes per subset (split ``test``):
- ``queries``: the topic's ``query``;
- ``nuggets``: id = the upstream nugget number, text from the TSV, weight 1.0, ``support`` = every judged
  document of that nugget with its grade (zeros included, so the judged pool is kept);
- ``qrels``: document-level, derived as the **maximum grade over the topic's nuggets** (0 = judged, no nugget);
- ``top_ranked``: the top ``--rerank-depth`` (50) documents of a baseline run, for reranking;
- ``corpus``: ``pooled`` (judged documents + the baseline runs' candidates, looked up by id) or ``full``.

Judged documents that the corpus source does not hold are dropped from the judgments and counted in the
card; so are baseline candidates. Topics left without a positive judgment are dropped by the writer and
counted too.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import logging
import re
import statistics
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from complexir.benchmarks import COVERAGEBENCH
from complexir.card import CardInfo, read_front_matter
from complexir.errors import UpstreamFormatError
from complexir.trec_io import read_nugget_qrels, read_run
from complexir.upstream import iter_jsonl
from complexir.writer import BenchmarkWriter

logger = logging.getLogger(__name__)

SPEC = COVERAGEBENCH
HUB_ID = SPEC.upstream[0]
SPLIT = "test"
SUBSETS = SPEC.subset_names()
# Where each subset's document text lives (UPSTREAM.md); override with --docs SUBSET=SOURCE.
DEFAULT_DOCS = {s.name: s.documents for s in SPEC.subsets if s.documents}
DEFAULT_RERANK_DEPTH = 50
RUN_SUFFIXES = (".run", ".trec", ".txt", ".tsv", ".res")
TOPIC_SUFFIXES = (".jsonl", ".json", ".parquet")



# -- locating the upstream files -------------------------------------------------------------------
def aliases(subset: str) -> list[str]:
    """File-name stems a subset may go by upstream, most specific first.

    The release names some files by the collection without its year (``qrels/ragtime.qrels`` for
    ``ragtime_2025``), so the year suffix and the ``crux_`` prefix are tried after the full name.
    """
    names = [subset]
    short = re.sub(r"_?\d{4}$", "", subset)
    names.append(short)
    if short.startswith("crux_"):
        names.append(short[len("crux_"):])
    return list(dict.fromkeys(n for n in names if n))


def _stem_matches(name: str, alias: str) -> bool:
    """``name`` is ``alias`` or starts with it followed by a separator (so ``rag`` ≠ ``ragtime``)."""
    return name == alias or (name.startswith(alias) and name[len(alias)] in "._-")


def resolve_source(source: str | Path, revision: str | None = None) -> Path:
    """A local folder as is; otherwise the Hub dataset repo, downloaded with ``snapshot_download``."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    from huggingface_hub import snapshot_download

    logger.info("downloading %s from the Hub", source)
    return Path(snapshot_download(repo_id=str(source), repo_type="dataset", revision=revision))


def find_nuggets_file(root: Path, subset: str) -> Path | None:
    for alias in aliases(subset):
        path = root / "nuggets" / f"{alias}_nuggets.tsv"
        if path.is_file():
            return path
    return None


def find_qrels_file(root: Path, subset: str) -> Path | None:
    for alias in aliases(subset):
        path = root / "qrels" / f"{alias}.qrels"
        if path.is_file():
            return path
    return None


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
        for folder in (root / "topics", root / subset, root / "data" / subset, root):
            if not folder.is_dir():
                continue
            candidates = [
                path for path in sorted(folder.iterdir())
                if path.suffix in TOPIC_SUFFIXES and path.is_file() and (
                    folder.name in (subset, "topics") and _stem_matches(path.stem, alias)
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


def available_subsets(root: Path) -> list[str]:
    """The subsets whose nuggets and qrels files the release holds, in the canonical order."""
    return [s for s in SUBSETS if find_nuggets_file(root, s) and find_qrels_file(root, s)]


# -- reading the upstream files ------------------------------------------------------------------------
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
    runs: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # run name -> topic -> ranked docs


def _topic_rows(path: Path) -> Iterator[tuple[int, Topic]]:
    """(line or row number, topic) of one topics file: JSONL, a JSON array, or parquet."""
    rows: Iterable[tuple[int, Any]]
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = enumerate(pq.read_table(path).to_pylist(), start=1)
    elif path.suffix == ".json" and path.read_text(encoding="utf-8").lstrip().startswith("["):
        rows = enumerate(json.loads(path.read_text(encoding="utf-8")), start=1)
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


def read_baseline(path: Path) -> dict[str, list[str]]:
    """A TREC run as topic → doc ids ranked (score desc, ties doc id desc: trec_eval's rule)."""
    from complexir.metrics import rank_run

    return rank_run(read_run(path))  # a malformed line raises TrecFormatError, an UpstreamFormatError


def read_subset(root: Path, subset: str) -> SubsetRelease:
    """Topics, nuggets, nugget judgments and baseline runs of one subset."""
    topics_paths = find_topics_files(root, subset)
    nuggets_path = find_nuggets_file(root, subset)
    qrels_path = find_qrels_file(root, subset)
    for what, path, expected in (("topics", topics_paths or None, f"topics/{subset}.jsonl or a README config"),
                                 ("nuggets", nuggets_path, f"nuggets/{subset}_nuggets.tsv"),
                                 ("qrels", qrels_path, f"qrels/{subset}.qrels")):
        if path is None:
            raise FileNotFoundError(f"{root}: no {what} file for subset {subset!r} (expected {expected})")
    topics = read_topics(topics_paths)
    nuggets = read_nuggets(nuggets_path, topics)
    # ``<topic_id> <nugget_num> <doc_id> <label>``: the house TREC reader (integer labels >= 0, the same
    # judgment twice only with one label), checked against the nugget TSV
    judgments = read_nugget_qrels(qrels_path, known=nuggets)
    runs = {p.relative_to(root).as_posix(): read_baseline(p) for p in find_run_files(root, subset)}
    for tid, topic in topics.items():
        n = len(nuggets.get(tid, {}))
        if topic.listed_nuggets and topic.listed_nuggets != n:
            logger.warning("%s: topic %r lists %d nuggets but %s has %d", subset, tid, topic.listed_nuggets,
                           nuggets_path.name, n)
    return SubsetRelease(topics, nuggets, judgments, runs)


# -- corpus sources --------------------------------------------------------------------------------
@dataclass
class CorpusSource:
    """Where document text comes from: ``irds:<id>``, ``hf:<repo>[:<config>]``, ``jsonl:<path>``, ``trec:<path>``."""

    kind: str
    location: str
    config: str | None = None
    shown: str | None = None  # how the card names a local file (relative to the release folder when inside it)

    def __str__(self) -> str:
        return f"{self.kind}:{self.shown or self.location}" + (f":{self.config}" if self.config else "")


def parse_corpus_source(spec: str, base: Path | None = None) -> CorpusSource:
    """A ``--docs`` value. Without a prefix: an existing file (``.jsonl[.gz]`` → JSONL, else TREC), an
    ir_datasets id ir_datasets knows, else a Hub dataset. Relative paths are tried against the working
    directory, then against the (local) upstream folder ``base``."""
    kind, _, rest = spec.partition(":")
    if kind in ("irds", "ir_datasets"):
        return CorpusSource("irds", rest)
    if kind in ("hf", "hub"):
        repo, _, config = rest.partition(":")
        return CorpusSource("hf", repo, config or None)
    if kind in ("jsonl", "trec"):
        path = _local_path(rest, base)
        return CorpusSource(kind, str(path), shown=_shown(path, base))
    path = _local_path(spec, base)
    if path.exists():
        return CorpusSource("jsonl" if ".jsonl" in path.name else "trec", str(path), shown=_shown(path, base))
    import ir_datasets

    try:
        ir_datasets.registry[spec]
        return CorpusSource("irds", spec)
    except KeyError:
        return CorpusSource("hf", spec)


def _local_path(text: str, base: Path | None) -> Path:
    path = Path(text).expanduser()
    if not path.is_absolute() and not path.exists() and base is not None and (base / path).exists():
        return base / path
    return path


def _shown(path: Path, base: Path | None) -> str:
    """A local corpus file as the card shows it: relative to the release folder when inside it (so a
    build's card does not depend on where the checkout lives), else as given."""
    if base is not None:
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def _pick(row: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if row.get(name) is not None:
            return row[name]
    return None


ID_FIELDS = ("id", "doc_id", "docid", "_id", "pid")
TEXT_FIELDS = ("text", "contents", "content", "body", "passage", "segment")


def _row_from_mapping(row: dict[str, Any], where: str) -> dict[str, str]:
    doc_id, text = _pick(row, ID_FIELDS), _pick(row, TEXT_FIELDS)
    if doc_id is None or text is None:
        raise UpstreamFormatError(where, None, f"a document needs one of {ID_FIELDS} and one of {TEXT_FIELDS}; "
                                               f"got fields {sorted(row)}")
    title = row.get("title") or ""
    return {"id": str(doc_id), "title": str(title), "text": str(text)}


def _row_from_irds(doc: Any) -> dict[str, str]:
    """An ir_datasets doc namedtuple: its ``text`` field when it has one, else ``default_text()``."""
    title = getattr(doc, "title", "") or ""
    text = getattr(doc, "text", None)
    if not isinstance(text, str):
        text, title = doc.default_text(), ""  # default_text already includes the title
    return {"id": str(doc.doc_id), "title": str(title), "text": text}


def _irds_dataset(source: CorpusSource) -> Any:
    import ir_datasets

    try:
        dataset = ir_datasets.load(source.location)
    except KeyError:
        raise ValueError(f"ir_datasets does not know {source.location!r} (ir_datasets {ir_datasets.__version__}); "
                         f"upgrade ir_datasets or pass --docs SUBSET=<local JSONL/TREC file>") from None
    if not dataset.has_docs():
        raise ValueError(f"ir_datasets {source.location!r} has no documents")
    return dataset


def iter_documents(source: CorpusSource) -> Iterator[dict[str, str]]:
    """Every document of ``source``, streamed (bounded memory)."""
    if source.kind == "irds":
        for doc in _irds_dataset(source).docs_iter():
            yield _row_from_irds(doc)
    elif source.kind == "trec":
        import ir_datasets

        docs = ir_datasets.formats.TrecDocs(ir_datasets.util.LocalDownload(Path(source.location)), parser="text")
        for doc in docs.docs_iter():
            yield _row_from_irds(doc)
    elif source.kind == "jsonl":
        path = Path(source.location)
        for line, row in iter_jsonl(path):
            try:
                yield _row_from_mapping(row, str(path))
            except UpstreamFormatError as error:
                raise UpstreamFormatError(path, line, str(error).split(": ", 1)[-1]) from None
    elif source.kind == "hf":
        import datasets

        data = datasets.load_dataset(source.location, source.config, streaming=True)
        for split in sorted(data):
            for row in data[split]:
                yield _row_from_mapping(row, f"{source} split {split}")
    else:  # pragma: no cover - parse_corpus_source never makes another kind
        raise ValueError(f"unknown corpus source kind {source.kind!r}")


def pooled_documents(source: CorpusSource, wanted: set[str], progress: bool = True) -> list[dict[str, str]]:
    """The documents of ``wanted`` that ``source`` holds, sorted by id.

    ir_datasets sources are read through their docstore (``get_many``: a lookup, not a scan); other
    sources have no index, so they are scanned once, stopping when every wanted id was found.
    """
    found: dict[str, dict[str, str]] = {}
    if source.kind == "irds":
        store = _irds_dataset(source).docs_store()
        for doc_id, doc in store.get_many(sorted(wanted)).items():
            found[doc_id] = _row_from_irds(doc)
    else:
        bar = tqdm(iter_documents(source), desc=f"scanning {source}", unit="doc", disable=not progress,
                   mininterval=1.0)
        for row in bar:
            if row["id"] in wanted and row["id"] not in found:
                found[row["id"]] = row
                if len(found) == len(wanted):
                    break
        bar.close()
    return [found[d] for d in sorted(found)]


# -- building --------------------------------------------------------------------------------------
def _select_baseline(runs: dict[str, dict[str, list[str]]], pattern: str | None) -> str | None:
    if not runs:
        return None
    names = sorted(runs)
    if pattern:
        chosen = [n for n in names if fnmatch.fnmatch(n, pattern) or fnmatch.fnmatch(Path(n).name, pattern)]
        if not chosen:
            raise ValueError(f"--baseline {pattern!r} matches none of the runs {names}")
        return chosen[0]
    return names[0]


def _spread(values: list[float]) -> str:
    if not values:
        return "–"
    return f"{statistics.fmean(values):.2f} / {min(values):g} / {max(values):g}"


def build_subset(writer: BenchmarkWriter, subset: str, release: SubsetRelease, source: CorpusSource, *,
                 corpus: str, rerank_depth: int, baseline: str | None, progress: bool) -> dict[str, Any]:
    """Write one subset; returns the statistics the card's tables show."""
    judged = {d for ns in release.judgments.values() for docs in ns.values() for d in docs}
    chosen = _select_baseline(release.runs, baseline)
    candidates = {d for run in release.runs.values() for docs in run.values() for d in docs[:rerank_depth]}

    if corpus == "pooled":
        rows = pooled_documents(source, judged | candidates, progress=progress)
        n_docs = writer.write_corpus(subset, rows, total=len(rows))
        present = {r["id"] for r in rows}
    else:
        present = set()
        tracked = judged | candidates

        def stream() -> Iterator[dict[str, str]]:
            for row in iter_documents(source):
                if row["id"] in tracked:
                    present.add(row["id"])
                yield row

        n_docs = writer.write_corpus(subset, stream())

    missing_judged = judged - present
    dropped_judgments = sum(1 for ns in release.judgments.values() for docs in ns.values() for d in docs
                            if d not in present)
    if missing_judged:
        logger.warning("%s: %d judged documents (%d judgments) are not in %s; their judgments are dropped",
                       subset, len(missing_judged), dropped_judgments, source)

    queries, qrels, nuggets, top_ranked = [], [], [], []
    for tid, topic in release.topics.items():
        queries.append({"id": tid, "text": topic.query})
        doc_grade: dict[str, int] = {}
        for num, text in release.nuggets.get(tid, {}).items():
            support = [{"corpus-id": d, "score": g} for d, g in release.judgments.get(tid, {}).get(num, {}).items()
                       if d in present]
            for s in support:  # doc-level grade = max over the topic's nuggets
                doc_grade[s["corpus-id"]] = max(doc_grade.get(s["corpus-id"], 0), s["score"])
            nuggets.append({"query-id": tid, "nugget-id": num, "text": text, "weight": 1.0, "support": support})
        qrels.extend({"query-id": tid, "corpus-id": d, "score": g} for d, g in doc_grade.items())
        if chosen is not None:
            docs = [d for d in release.runs[chosen].get(tid, [])[:rerank_depth] if d in present]
            if docs:
                top_ranked.append({"query-id": tid, "corpus-ids": docs})
    missing_candidates = {d for d in candidates if d not in present}

    counts = writer.write_split(subset, SPLIT, queries=queries, qrels=qrels, nuggets=nuggets,
                                top_ranked=top_ranked if chosen is not None else None)

    writer.note(subset, "corpus setting", f"{corpus} ({n_docs:,} documents from {source})")
    writer.note(subset, "judged documents missing from the corpus source (judgments dropped)",
                f"{len(missing_judged):,} documents, {dropped_judgments:,} nugget judgments")
    if chosen is not None:
        writer.note(subset, "top_ranked", f"top {rerank_depth} of baseline run `{chosen}` "
                                          f"({len(release.runs)} run(s) available: {', '.join(sorted(release.runs))})")
        writer.note(subset, "baseline candidates missing from the corpus source", f"{len(missing_candidates):,}")
    else:
        writer.note(subset, "top_ranked", "no baseline run in the release: no reranking config")

    kept = {r["query-id"] for r in qrels if r["score"] > 0}
    per_topic = [len(release.nuggets.get(t, {})) for t in release.topics if t in kept]
    support_counts = [sum(1 for s in n["support"] if s["score"] > 0) for n in nuggets if n["query-id"] in kept]
    return {
        "topics": len(release.topics), "kept": counts["queries"], "dropped": counts["dropped_queries"],
        "nuggets_per_topic": per_topic, "support_per_nugget": support_counts,
        "unsupported": sum(1 for c in support_counts if c == 0),
        "corpus": corpus, "source": str(source), "documents": n_docs,
        "missing_judged": len(missing_judged), "dropped_judgments": dropped_judgments,
        "baseline": chosen or "–",
    }


def card_languages(subsets: list[str]) -> list[str]:
    """The card's ``languages``: English (every subset's topics), plus the document languages of the subsets."""
    return list(dict.fromkeys(["en", *(lang for s in subsets for lang in SPEC.subset(s).document_languages)]))


def _tables(stats: dict[str, dict[str, Any]]) -> dict[str, str]:
    nugget = ["| subset | topics (upstream) | topics kept | topics dropped (no supported nugget) | nuggets / topic "
              "(mean / min / max) | supporting docs / nugget (mean / min / max) | nuggets without support |",
              "|---|---:|---:|---:|---|---|---:|"]
    corpus = ["| subset | corpus setting | corpus source | documents | judged docs missing | nugget judgments "
              "dropped | baseline for top_ranked |", "|---|---|---|---:|---:|---:|---|"]
    for subset, st in stats.items():
        nugget.append(f"| {subset} | {st['topics']} | {st['kept']} | {st['dropped']} "
                      f"| {_spread(st['nuggets_per_topic'])} | {_spread(st['support_per_nugget'])} "
                      f"| {st['unsupported']} |")
        corpus.append(f"| {subset} | {st['corpus']} | `{st['source']}` | {st['documents']:,} | {st['missing_judged']:,}"
                      f" | {st['dropped_judgments']:,} | `{st['baseline']}` |")
    return {"nugget_table": "\n".join(nugget), "corpus_table": "\n".join(corpus)}


def build_coveragebench(
    source: str | Path,
    out_dir: str | Path,
    *,
    subsets: list[str] | None = None,
    corpus: str = "pooled",
    docs: dict[str, str] | None = None,
    rerank_depth: int = DEFAULT_RERANK_DEPTH,
    baseline: str | None = None,
    revision: str | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> Path:
    """Build the CoverageBench folder from ``source`` (Hub id or local folder); returns ``out_dir``."""
    if corpus not in ("pooled", "full"):
        raise ValueError(f"corpus must be 'pooled' or 'full', got {corpus!r}")
    if rerank_depth < 1:
        raise ValueError(f"rerank depth must be >= 1, got {rerank_depth}")
    root = resolve_source(source, revision)
    local_base = Path(source).expanduser() if Path(source).expanduser().is_dir() else None
    # each subset once, in the order given: the same name twice would write its corpus twice
    wanted = list(dict.fromkeys(subsets)) if subsets else available_subsets(root)
    if not wanted:
        raise FileNotFoundError(f"{root}: no subset has both nuggets/<subset>_nuggets.tsv and qrels/<subset>.qrels")
    unknown = [s for s in wanted if s not in SUBSETS]
    if unknown:
        raise ValueError(f"unknown subset(s) {unknown}; CoverageBench has {list(SUBSETS)}")
    docs = dict(docs or {})
    bad = [s for s in docs if s not in SUBSETS]
    if bad:
        raise ValueError(f"--docs names unknown subset(s) {bad}; CoverageBench has {list(SUBSETS)}")
    sources = {s: parse_corpus_source(docs.get(s, DEFAULT_DOCS[s]), local_base) for s in wanted}

    card = CardInfo(
        benchmark=SPEC.folder, pretty_name=SPEC.pretty_name, license=SPEC.license, citation=SPEC.citation,
        source=str(source), revision=revision or "unknown", languages=card_languages(wanted),
        task_categories=["text-retrieval"], task_ids=["document-retrieval"],
    )
    stats: dict[str, dict[str, Any]] = {}
    with BenchmarkWriter(out_dir, card, overwrite=overwrite, progress=progress) as writer:
        for subset in wanted:
            release = read_subset(root, subset)
            logger.info("%s: %d topics, %d nuggets, corpus %s (%s)", subset, len(release.topics),
                        sum(map(len, release.nuggets.values())), sources[subset], corpus)
            stats[subset] = build_subset(writer, subset, release, sources[subset], corpus=corpus,
                                         rerank_depth=rerank_depth, baseline=baseline, progress=progress)
        card.extra.update(_tables(stats))
        card.extra["corpus_setting"] = corpus
    return Path(out_dir)


# -- CLI -------------------------------------------------------------------------------------------
def _docs_arg(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        subset, sep, spec = value.partition("=")
        if not sep or not subset or not spec:
            raise argparse.ArgumentTypeError(f"--docs expects SUBSET=SOURCE, got {value!r}")
        out[subset] = spec
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", default=HUB_ID,
                        help=f"the release: a Hub dataset id or a local folder with its files (default {HUB_ID})")
    parser.add_argument("--revision", default=None, help="Hub revision of --source")
    parser.add_argument("--subset", nargs="+", choices=SUBSETS, default=None,
                        help="subsets to build (default: every subset the release holds)")
    parser.add_argument("--corpus", choices=("pooled", "full"), default="pooled",
                        help="pooled: judged documents + baseline candidates, looked up by id (default); "
                             "full: stream the whole collection")
    parser.add_argument("--docs", nargs="+", action="extend", default=[], metavar="SUBSET=SOURCE",
                        help="document source of a subset: irds:<ir_datasets id>, hf:<repo>[:<config>], "
                             "jsonl:<file>, trec:<file>, or a bare file / id (defaults: "
                             + ", ".join(f"{k}={v}" for k, v in DEFAULT_DOCS.items()) + ")")
    parser.add_argument("--rerank-depth", type=int, default=DEFAULT_RERANK_DEPTH,
                        help=f"baseline documents per topic kept in top_ranked (default {DEFAULT_RERANK_DEPTH})")
    parser.add_argument("--baseline", default=None,
                        help="glob selecting the baseline run for top_ranked (default: the first run by name)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def build(args: argparse.Namespace) -> int:
    build_coveragebench(
        args.source, args.out, subsets=args.subset, corpus=args.corpus, docs=_docs_arg(args.docs),
        rerank_depth=args.rerank_depth, baseline=args.baseline, revision=args.revision,
        overwrite=args.overwrite, progress=not args.no_progress,
    )
    return 0
