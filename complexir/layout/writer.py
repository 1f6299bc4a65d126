"""Write a benchmark folder in the standard layout: streamed, validated, atomic.

Usage by a loading script::

    with BenchmarkWriter(out_dir, card_info) as writer:
        writer.write_corpus("clinical_trial", iter_docs())          # any size, bounded memory
        writer.write_split("clinical_trial", "test", queries=..., qrels=...)
        writer.note("clinical_trial", "labels cast to int", 12)
    # here the folder exists, complete and validated; after an exception nothing was left behind

Everything is written into a hidden temporary folder beside ``out_dir`` and renamed into place only after
the whole folder validated, so an interrupted build never leaves a half dataset. ``out_dir`` is replaced only
if the writer made it (it holds ``BUILD_MARKER``) or it is empty, and never when it is, holds or lies inside one
of the build's inputs. While a writer is open, SIGTERM raises like Ctrl-C, so that both clean up.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from complexir.layout import card as cards
from complexir.layout.atomic import (
    OLD,
    raise_on_sigterm,
    remove_tree,
    replace_folder,
    restore_sigterm,
    sibling,
    signals_deferred,
)
from complexir.layout.errors import LayoutError, OutputFolderError
from complexir.layout.integrity import DocumentIds, Place, SplitIntegrity, check_grade, count_by_query
from complexir.layout.schema import (
    CORPUS,
    NUGGETS,
    QRELS,
    QUERIES,
    RUNS,
    TOP_RANKED,
    UNNAMED_SUBSET,
    check_name,
    config_files,
    data_file,
    schema_for,
)
from complexir.layout.validation import validate_folder

logger = logging.getLogger(__name__)

Row = Mapping[str, Any]


def _expect_str(value: Any, what: str, *, empty_ok: bool = False) -> str:
    if not isinstance(value, str):
        raise LayoutError(f"{what}: expected a string, got {type(value).__name__} {value!r:.60}")
    if not empty_ok and not value:
        raise LayoutError(f"{what}: expected a non-empty string")
    return value


def _expect_row(row: Any, what: str) -> Row:
    if not isinstance(row, Mapping):
        raise LayoutError(f"{what}: expected a mapping of column → value, got {type(row).__name__} {row!r:.60}")
    for name in row:
        if not isinstance(name, str):
            raise LayoutError(f"{what}: column names must be strings, got {type(name).__name__} {name!r:.60}")
    return row


def _string_columns(row: Row, standard: Iterable[str], what: str) -> None:
    """Every column outside ``standard`` is typed string by the schema (optional ones and extras alike):
    check here, so a wrong type names its row and column instead of surfacing as a bare ArrowTypeError."""
    skip = set(standard)
    for name, value in row.items():
        if name in skip:
            continue
        if value is not None and not isinstance(value, str):
            raise LayoutError(f"{what}: column {name!r} must be a string or null, got {type(value).__name__} "
                              f"{value!r:.60} (richer values belong in 'metadata' as JSON)")


def _expect_list(value: Any, what: str) -> Sequence[Any]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise LayoutError(f"{what}: expected a list, got {type(value).__name__} {value!r:.60}")
    return value


def _digest(paths: list[Path]) -> str:
    """sha256 over the bytes of ``paths`` (in order), first 16 hex digits."""
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


class WordCounts:
    """How many documents have each length in words: a card's mean, percentiles and maximum in memory bounded by
    the number of distinct lengths, not of documents."""

    def __init__(self) -> None:
        self._counts: Counter[int] = Counter()

    def add(self, words: int) -> None:
        self._counts[words] += 1

    def summary(self) -> dict[str, float | int]:
        """Mean, p50, p95 and max, equal to numpy's (``np.percentile``'s linear rule) over the lengths themselves."""
        if not self._counts:
            return WordCounts._of_sorted(np.zeros(1, np.int64), np.ones(1, np.int64))
        lengths = np.array(sorted(self._counts), dtype=np.int64)
        return WordCounts._of_sorted(lengths, np.array([self._counts[n] for n in lengths], dtype=np.int64))

    @staticmethod
    def _of_sorted(lengths: np.ndarray, counts: np.ndarray) -> dict[str, float | int]:
        total = int(counts.sum())
        ends = np.cumsum(counts)  # documents with a length <= lengths[i]

        def at(rank: int) -> float:  # the rank-th smallest length (from 0)
            return float(lengths[np.searchsorted(ends, rank, side="right")])

        def percentile(q: float) -> float:
            # numpy's default ("linear"): between the order statistics around q/100 * (n - 1), computed as numpy's
            # _lerp does, so that the card shows the same figure as before for the same corpus
            position = q / 100 * (total - 1)
            below = int(np.floor(position))
            a, b = at(below), at(min(below + 1, total - 1))
            t = position - below
            return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t

        return {"mean": float(np.dot(lengths, counts)) / total, "p50": percentile(50), "p95": percentile(95),
                "max": int(lengths[-1])}


class _SubsetStats:
    def __init__(self) -> None:
        self.doc_ids: DocumentIds | None = None
        self.words = WordCounts()
        self.splits: dict[str, dict[str, int]] = {}
        self.zero_score_queries: dict[str, list[str]] = {}  # split -> judged query ids with no positive qrel
        self.notes: dict[str, Any] = {}
        self.kinds: dict[str, list[str]] = {}  # kind -> splits written
        self.support_threshold: int | None = None  # nugget grade from which a document supports it (default 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "documents": len(self.doc_ids or ()),
            "words": self.words.summary(),
            "splits": self.splits,
            "zero_score_queries": {split: ids for split, ids in self.zero_score_queries.items() if ids},
            "notes": self.notes,
            **({"support_threshold": self.support_threshold} if self.support_threshold is not None else {}),
        }


class BenchmarkWriter:
    """Writes one benchmark folder (a Hub dataset repo) in the standard layout.

    Subsets are written corpus first, then one ``write_split`` per split. Rows are plain dicts with the
    standard column names; extra columns are kept. ``subset=None`` makes a single-subset benchmark whose
    configs are plain ``corpus``, ``queries``, ``qrels``.
    """

    def __init__(
        self,
        out_dir: str | os.PathLike,
        card: cards.CardInfo,
        *,
        overwrite: bool = False,
        shard_rows: int = 250_000,
        batch_rows: int = 5_000,
        progress: bool = True,
        inputs: Iterable[str | os.PathLike] = (),
        before_swap: Callable[[Path], object] | None = None,
    ):
        """``inputs``: the local files and folders the build reads (its ``--source``, local ``--docs``):
        ``out_dir`` may not be one of them, hold one or lie inside one. ``before_swap(folder)`` runs on the
        finished, validated folder before it is put in place (``complexir build`` adds mteb's descriptive
        statistics there): what it writes is part of the build, and if it fails the build fails."""
        self.out_dir = Path(out_dir)
        self.inputs = [Path(p) for p in inputs]
        _check_not_an_input(self.out_dir, self.inputs)
        self.out_dir.parent.mkdir(parents=True, exist_ok=True)
        _clean_stale_siblings(self.out_dir)
        if self.out_dir.exists() or self.out_dir.is_symlink():
            if not overwrite:
                raise FileExistsError(f"{self.out_dir} exists; pass --overwrite to replace it")
            _check_replaceable(self.out_dir)
        self.overwrite = overwrite
        self.card = card
        self.shard_rows = shard_rows
        self.batch_rows = batch_rows
        self.progress = progress
        self.before_swap = before_swap
        self._tmp = sibling(self.out_dir, PARTIAL)
        self._subsets: dict[str | None, _SubsetStats] = {}
        self._closed = False
        self._sigterm_installed = False
        self._started = False

    def _start(self) -> None:
        """Create the temporary folder (once) and make SIGTERM clean up, as one step: an interrupt right after
        it removes the folder again."""
        if self._started:
            return
        try:
            self._started = True
            self._sigterm_installed = raise_on_sigterm()  # before the deferral, which swaps the handlers itself
            with signals_deferred():
                self._tmp.mkdir()
        except BaseException:
            self.abort()
            raise

    # -- context manager: close on success, abort on any exception ------------------------------------
    def __enter__(self) -> Self:
        self._start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    def abort(self) -> None:
        """Remove everything written so far (a failed deletion is logged with the path to remove by hand)."""
        with signals_deferred():
            problem = remove_tree(self._tmp)
            self._closed = True
            if self._sigterm_installed:
                restore_sigterm()
                self._sigterm_installed = False
        if problem:
            logger.error("could not delete the unfinished build %s (%s); delete it by hand", self._tmp, problem)

    def _subset(self, subset: str | None) -> _SubsetStats:
        if subset not in self._subsets:
            if subset is not None:
                check_name(subset, "subset")
                if subset == UNNAMED_SUBSET:  # the folder of the unnamed subset
                    raise LayoutError("subset name 'default' is reserved for a benchmark without subsets")
            self._subsets[subset] = _SubsetStats()
        return self._subsets[subset]

    def _path(self, subset: str | None, kind: str, split: str, shard: int = 0) -> Path:
        self._start()
        path = self._tmp / data_file(subset, kind, split, shard)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def note(self, subset: str | None, key: str, value: Any) -> None:
        """A build fact shown in the card (e.g. how many labels a cast changed)."""
        self._subset(subset).notes[key] = value

    # -- corpus ---------------------------------------------------------------------------------------
    def write_corpus(self, subset: str | None, rows: Iterable[Row], *, total: int | None = None) -> int:
        """Stream the corpus of ``subset`` to sharded parquet, ``batch_rows`` rows in memory at a time."""
        stats = self._subset(subset)
        if stats.doc_ids is not None:
            raise LayoutError(f"subset {subset!r}: the corpus was already written")
        where = f"corpus of subset {subset!r}"
        columns: list[str] | None = None
        schema: pa.Schema | None = None
        writer: pq.ParquetWriter | None = None
        shard, in_shard, n = 0, 0, 0
        batch: list[dict[str, Any]] = []

        def flush() -> None:
            nonlocal writer, shard, in_shard
            if not batch:
                return
            if writer is None or in_shard >= self.shard_rows:
                if writer is not None:
                    writer.close()
                    shard += 1
                writer = pq.ParquetWriter(self._path(subset, CORPUS, "", shard), schema)
                in_shard = 0
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            ids.add([r["id"] for r in batch], self._path(subset, CORPUS, "", shard))
            in_shard += len(batch)
            batch.clear()

        self._start()
        # the ids stay in the shards; DocumentIds keeps a hash and a row number a document, on disk, inside the
        # temporary folder (so that an interrupted build leaves nothing behind either)
        ids = DocumentIds(self._tmp / f"{ID_SCRATCH}-{subset or UNNAMED_SUBSET}",
                          lambda path, local, number: Place(where, number + 1))
        stats.doc_ids = ids
        try:
            for row in tqdm(rows, total=total, desc=f"writing corpus {subset or ''}".strip(), unit="doc",
                            disable=not self.progress, mininterval=1.0):
                n += 1
                what = f"{where}, row {n}"
                _expect_row(row, what)
                if columns is None:
                    columns = list(row.keys())
                    if "title" not in columns:
                        columns.insert(1, "title")
                    schema = schema_for(CORPUS, columns)
                    expected = set(schema.names)
                doc_id = _expect_str(row.get("id"), f"{what}, column 'id'")
                text = _expect_str(row.get("text"), f"{what} (id {doc_id!r}), column 'text'", empty_ok=True)
                _string_columns(row, ("id", "text"), f"{what} (id {doc_id!r})")
                unknown = set(row) - expected
                if unknown:
                    raise LayoutError(f"{what}: columns {sorted(unknown)} not in the first row's {sorted(expected)}")
                stats.words.add(len(text.split()))
                out = dict(row)
                if out.get("title") is None:
                    out["title"] = ""
                batch.append(out)
                if len(batch) >= self.batch_rows:
                    flush()
            flush()
        finally:
            if writer is not None:
                writer.close()
        if n == 0:
            raise LayoutError(f"{where}: no documents")
        ids.check_unique()  # once every shard is written: duplicates are found by hash, confirmed on the ids
        stats.kinds[CORPUS] = [""]
        logger.info("wrote %d documents for subset %r", n, subset)
        return n

    # -- queries, qrels, nuggets, top_ranked --------------------------------------------------------
    def write_split(
        self,
        subset: str | None,
        split: str,
        *,
        queries: Sequence[Row],
        qrels: Sequence[Row],
        nuggets: Sequence[Row] | None = None,
        top_ranked: Sequence[Row] | None = None,
    ) -> dict[str, int]:
        """Validate and write one split; queries without a positive qrel are dropped and counted.

        This method checks each value's type; the rules over rows taken together are ``integrity``'s, the
        same the validator applies to a folder."""
        stats = self._subset(subset)
        check_name(split, "split")
        if stats.doc_ids is None:
            raise LayoutError(f"subset {subset!r}: write the corpus before split {split!r}")
        if split in stats.splits:
            raise LayoutError(f"subset {subset!r}: split {split!r} written twice")
        where = f"subset {subset!r}, split {split!r}"
        rules = SplitIntegrity(subset or UNNAMED_SUBSET, stats.doc_ids)

        for i, row in enumerate(queries, 1):
            place = Place(f"{where}, queries", i)
            qid = _expect_str(_expect_row(row, str(place)).get("id"), f"{place}, column 'id'")
            _expect_str(row.get("text"), f"{place} (id {qid!r}), column 'text'")
            _string_columns(row, ("id", "text"), f"{place} (id {qid!r})")
            rules.query(qid, place)

        for i, row in enumerate(qrels, 1):
            place = Place(f"{where}, qrels", i)
            qid = _expect_str(_expect_row(row, str(place)).get("query-id"), f"{place}, column 'query-id'")
            did = _expect_str(row.get("corpus-id"), f"{place}, column 'corpus-id'")
            score = check_grade(row.get("score"), f"{place}, column 'score'")
            _string_columns(row, ("query-id", "corpus-id", "score"), str(place))
            rules.judgment(qid, did, score, place)

        for i, row in enumerate(nuggets or (), 1):
            place = Place(f"{where}, nuggets", i)
            qid = _expect_str(_expect_row(row, str(place)).get("query-id"), f"{place}, column 'query-id'")
            nid = _expect_str(row.get("nugget-id"), f"{place}, column 'nugget-id'")
            _expect_str(row.get("text"), f"{place}, column 'text'", empty_ok=True)
            _string_columns(row, ("query-id", "nugget-id", "text", "weight", "support"), str(place))
            weight = row.get("weight", 1.0)
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
                raise LayoutError(f"{place}: column 'weight' must be a finite number, got {weight!r}")
            if weight < 0:
                raise LayoutError(f"{place}: column 'weight' must be >= 0, got {weight!r}")
            support: list[str] = []
            for j, sup in enumerate(_expect_list(row.get("support"), f"{place}, column 'support'"), 1):
                if not isinstance(sup, Mapping):
                    raise LayoutError(f"{place}, support {j}: expected a mapping {{'corpus-id', 'score'}}, "
                                      f"got {type(sup).__name__} {sup!r:.60}")
                support.append(_expect_str(sup.get("corpus-id"), f"{place}, support {j}, 'corpus-id'"))
                check_grade(sup.get("score"), f"{place}, support {j}, 'score'")
            rules.nugget(qid, nid, support, place)

        for i, row in enumerate(top_ranked or (), 1):
            place = Place(f"{where}, top_ranked", i)
            qid = _expect_str(_expect_row(row, str(place)).get("query-id"), f"{place}, column 'query-id'")
            _string_columns(row, ("query-id", "corpus-ids"), str(place))
            ranked = [_expect_str(did, f"{place}, corpus-ids")
                      for did in _expect_list(row.get("corpus-ids"), f"{place}, column 'corpus-ids'")]
            rules.ranked_list(qid, ranked, place)

        missing_qrels, missing_support = rules.missing_documents()
        dropped = rules.without_positive()
        if dropped:
            logger.warning("%s: dropping %d queries with no positive qrel (e.g. %r)", where, len(dropped), dropped[:3])
        # Judged queries without a relevant document still belong to the evaluated population: trec_eval and
        # ndeval average them in with score 0. The card records their ids so the tasks can do the same.
        stats.zero_score_queries[split] = [qid for qid in dropped if qid in rules.judged]
        keep = set(rules.queries.first) - set(dropped)
        if not keep:
            raise LayoutError(f"{where}: no query has a positive qrel")

        def kept(rows: Sequence[Row] | None, key: str) -> list[dict[str, Any]]:
            return [dict(r) for r in rows or () if r[key] in keep]

        tables = {
            QUERIES: kept(queries, "id"),
            QRELS: [{"query-id": r["query-id"], "corpus-id": r["corpus-id"], "score": int(r["score"]),
                     **{k: v for k, v in r.items() if k not in ("query-id", "corpus-id", "score")}}
                    for r in kept(qrels, "query-id")],
        }
        if nuggets is not None:
            tables[NUGGETS] = [{**r, "weight": float(r.get("weight", 1.0)), "support": list(r.get("support") or [])}
                               for r in kept(nuggets, "query-id")]
        if top_ranked is not None:
            tables[TOP_RANKED] = [{**r, "corpus-ids": list(r.get("corpus-ids") or [])}
                                  for r in kept(top_ranked, "query-id")]
        for kind, rows in tables.items():
            columns = list(dict.fromkeys(k for r in rows for k in r)) if rows else []
            table = pa.Table.from_pylist(rows, schema=schema_for(kind, columns))
            pq.write_table(table, self._path(subset, kind, split))
            stats.kinds.setdefault(kind, []).append(split)

        counts = {
            "queries": len(tables[QUERIES]),
            "qrels": len(tables[QRELS]),
            "nuggets": len(tables.get(NUGGETS, [])),
            "dropped_queries": len(dropped),
            "judged_without_positive": len(stats.zero_score_queries[split]),
            # judgments kept on documents the corpus lacks (ndeval/trec_eval count them as never retrieved)
            "missing_document_qrels": count_by_query(missing_qrels, keep),
            "missing_document_support": count_by_query(missing_support, keep),
        }
        if counts["missing_document_qrels"] or counts["missing_document_support"]:
            logger.warning("%s: keeping %d judgments and %d nugget supports on documents missing from the corpus",
                           where, counts["missing_document_qrels"], counts["missing_document_support"])
        stats.splits[split] = counts
        return counts

    def set_support_threshold(self, subset: str | None, grade: int) -> None:
        """Nugget grades below ``grade`` do not count as support (a graded scale, e.g. CRUX's 0-5
        answerability, supports from 3): the card records it and the coverage measures use it."""
        if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
            raise LayoutError(f"support threshold must be an integer >= 1, got {grade!r}")
        self._subset(subset).support_threshold = grade

    def write_runs(self, subset: str | None, split: str, rows: Iterable[Row]) -> int:
        """Write released rankings as they are (``run``, ``query-id``, ``corpus-id``, ``rank``, ``score``): the
        ``<subset>-runs`` config, scored as systems of their own. Documents and queries are not checked against
        the corpus or the queries (a run may retrieve what a pooled corpus lacks, for topics the layout dropped)."""
        stats = self._subset(subset)
        check_name(split, "split")
        if split not in stats.splits:
            raise LayoutError(f"subset {subset!r}: write split {split!r} before its runs")
        out = []
        seen: set[tuple[str, str, str]] = set()
        for i, row in enumerate(rows, 1):
            place = Place(f"subset {subset!r}, split {split!r}, runs", i)
            run = _expect_str(_expect_row(row, str(place)).get("run"), f"{place}, column 'run'")
            qid = _expect_str(row.get("query-id"), f"{place}, column 'query-id'")
            did = _expect_str(row.get("corpus-id"), f"{place}, column 'corpus-id'")
            rank, score = row.get("rank"), row.get("score")
            if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
                raise LayoutError(f"{place}: column 'rank' must be an integer >= 1, got {rank!r}")
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise LayoutError(f"{place}: column 'score' must be a finite number, got {score!r}")
            if (run, qid, did) in seen:
                raise LayoutError(f"{place}: run {run!r} ranks document {did!r} twice for query {qid!r}")
            seen.add((run, qid, did))
            out.append({"run": run, "query-id": qid, "corpus-id": did, "rank": rank, "score": float(score)})
        table = pa.Table.from_pylist(out, schema=schema_for(RUNS, ["run", "query-id", "corpus-id", "rank", "score"]))
        pq.write_table(table, self._path(subset, RUNS, split))
        stats.kinds.setdefault(RUNS, []).append(split)
        return len(out)

    # -- finish ---------------------------------------------------------------------------------------
    def stats(self) -> dict[str, dict[str, Any]]:
        return {subset or "default": st.as_dict() for subset, st in self._subsets.items()}

    def close(self) -> Path:
        """Render the card, validate the whole folder, then move it into place."""
        if self._closed:
            return self.out_dir
        try:
            if not self._subsets:
                raise LayoutError("nothing was written")
            files: dict[str, dict[str, str]] = {}
            digests: dict[str, str] = {}
            for subset, st in self._subsets.items():
                # A subset without splits is a corpus-only subset: a corpus that other subsets' tasks read
                # (e.g. a passage corpus scored with MaxP against full-document qrels).
                if st.doc_ids is None:
                    raise LayoutError(f"subset {subset!r}: notes but no corpus")
                for kind, splits in st.kinds.items():
                    name, patterns = config_files(subset, kind, splits)
                    files[name] = patterns
                    digests[name] = _digest(sorted(p for pattern in patterns.values()
                                                   for p in self._tmp.glob(pattern)))
            if not any(st.splits for st in self._subsets.values()):
                raise LayoutError("no subset has a split (queries and qrels): nothing to evaluate")
            for st in self._subsets.values():
                assert st.doc_ids is not None  # checked in the loop above
                st.doc_ids.remove()  # the id scratch is no part of the dataset
            readme = cards.render(self.card, self.stats(), files, digests)
            (self._tmp / "README.md").write_text(readme, encoding="utf-8")
            (self._tmp / BUILD_MARKER).write_text(MARKER_TEXT, encoding="utf-8")
            validate_folder(self._tmp, every_row=False, scratch=self._tmp)
            if self.before_swap is not None:
                self.before_swap(self._tmp)
            replace_folder(self._tmp, self.out_dir, self._check_still_replaceable)
        except BaseException:
            self.abort()
            raise
        self._closed = True
        logger.info("benchmark folder ready: %s", self.out_dir)
        return self.out_dir

    def _check_still_replaceable(self, out_dir: Path) -> None:
        # Again at the swap: the folder may have appeared or changed during a long build.
        if not self.overwrite:
            raise FileExistsError(f"{out_dir} appeared during the build (another build?); pass --overwrite to "
                                  "replace it")
        _check_replaceable(out_dir)


# Written into every folder the writer builds: ``--overwrite`` replaces only a folder holding it (or an empty
# one), never a folder of the user's that merely looks like a dataset repo. ``complexir push`` does not upload it.
BUILD_MARKER = ".complexir-build"
MARKER_TEXT = ("This folder was written by complexir's BenchmarkWriter (complexir build). A later build with "
               "--overwrite may replace it; without this file it refuses to.\n")

# Temporary siblings of the output folder: ``.<name>.partial-<pid>-<hex>`` (the build being written) and
# ``.<name>.old-<pid>-<hex>`` (the previous folder, for the instant between the two renames; see ``atomic``).
PARTIAL = "partial"
# Inside the temporary folder: the corpus ids' hashes of each subset while it is written (see ``DocumentIds``).
ID_SCRATCH = ".document-ids"


def _check_not_an_input(out_dir: Path, inputs: list[Path]) -> None:
    """Refuse an ``out_dir`` that is an input of the build, holds one or lies inside one: replacing it would
    delete the release being read, and writing inside it would change it."""
    out = out_dir.expanduser().resolve()
    for given in inputs:
        source = given.expanduser().resolve()
        if out == source:
            relation = "is"
        elif source in out.parents:
            relation = "lies inside"
        elif out in source.parents:
            relation = "holds"
        else:
            continue
        raise OutputFolderError(f"--out {out_dir} {relation} the build's input {given}; choose a folder outside "
                                "the inputs")


def _owner_alive(path: Path) -> bool:
    """Whether the process named in a temporary sibling's name still runs (unknown → assume dead)."""
    pid = path.name.rsplit("-", 2)[-2] if path.name.count("-") >= 2 else ""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _clean_stale_siblings(out_dir: Path) -> None:
    """Remove what a hard-killed build left beside ``out_dir``; restore a previous folder a kill left aside.

    ``.partial-*`` folders of dead builds are removed. An ``.old-*`` folder of a dead build is the previous
    dataset: removed when ``out_dir`` exists (the kill came after the swap), moved back otherwise (the kill
    came between the two renames).
    """
    prefix = f".{out_dir.name}."
    for path in sorted(out_dir.parent.glob(glob.escape(prefix) + f"{PARTIAL}-*")):
        if path.is_dir() and not _owner_alive(path):
            logger.warning("removing %s, left by an interrupted build", path)
            _remove_or_warn(path)
    for path in sorted(out_dir.parent.glob(glob.escape(prefix) + f"{OLD}-*")):
        if not path.is_dir() or _owner_alive(path):
            continue
        if out_dir.exists() or out_dir.is_symlink():
            logger.warning("removing %s, the previous version of %s left by an interrupted build", path, out_dir)
            _remove_or_warn(path)
        else:
            logger.warning("restoring %s from %s, moved aside by a build killed while replacing it", out_dir, path)
            os.replace(path, out_dir)


def _remove_or_warn(path: Path) -> None:
    problem = remove_tree(path)
    if problem:
        logger.warning("could not delete %s (%s); delete it by hand", path, problem)


def _check_replaceable(out_dir: Path) -> None:
    """Refuse to overwrite anything but an empty folder or a folder this writer built (``BUILD_MARKER``).

    ``--out ~/data --overwrite`` must not wipe a folder of unrelated files, nor a dataset repo someone else made.
    """
    if out_dir.is_symlink() or not out_dir.is_dir():
        raise FileExistsError(f"{out_dir} exists and is not a folder; refusing to replace it")
    if not any(out_dir.iterdir()):
        return
    marker = out_dir / BUILD_MARKER
    if marker.is_symlink() or not marker.is_file():
        raise FileExistsError(
            f"{out_dir} exists and was not written by complexir build (no {BUILD_MARKER} file); refusing to "
            "replace it. Choose a new or empty --out folder, or delete this one yourself."
        )
