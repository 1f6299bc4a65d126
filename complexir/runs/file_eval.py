"""Scoring TREC files end to end on columns: the path ``complexir evaluate`` takes.

The files are read by :mod:`complexir.runs.trec_io` into arrays and handed to the numpy core
(:func:`~complexir.metrics.adhoc.adhoc_scores`, :func:`~complexir.metrics.coverage.coverage_scores`) with no
per-line Python object and no dict of dicts on the way. Strings are touched only by pyarrow's C++ kernels,
and only where they must be: topic ids are matched through the small per-block dictionaries the CSV reader
builds; doc ids only for the run rows that can reach a measured rank (:func:`~complexir.metrics.ranking.select_top`
picks them from the scores alone) and for the judgments. The run is read piece by piece and only those rows are
kept of each piece, so the memory a run takes is that of its top ranks, not of the file. Doc ids get shared
integer codes, and the few tied ones are compared as strings, so the ranking's tie rule (doc id descending)
and ndeval's ideal (ties to the larger id) are exact.

The numbers are the dict path's (:func:`~complexir.metrics.adhoc_per_query`, ``coverage_per_query``),
and tests hold the two equal.
"""

from __future__ import annotations

import functools
import logging
import operator
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from complexir.metrics.adhoc import adhoc_scores_of_codes
from complexir.metrics.coverage import NuggetJudgments, coverage_scores, judged_in_id_order, nugget_judgments
from complexir.metrics.measures import Measure, MeasureKind, max_depth, parse_measure
from complexir.metrics.ranking import index_within_runs, rank_codes, select_top
from complexir.runs.trec_io import (
    QrelsColumns,
    RunColumns,
    as_numpy,
    from_numpy,
    read_nugget_qrels,
    read_qrels_columns,
    read_run_pieces,
    refuse_relabelled,
)

__all__ = ["evaluate_columns", "evaluate_files"]

logger = logging.getLogger(__name__)


def _codes(values: pa.ChunkedArray, value_set: pa.Array) -> tuple[np.ndarray, set[str]]:
    """Index of each value in ``value_set`` (-1 when absent), through the chunks' dictionaries (one lookup for
    all of them: each lookup hashes ``value_set`` anew); and the distinct values not in ``value_set``."""
    if not values.num_chunks:
        return np.zeros(0, np.int32), set()
    dictionaries = pa.concat_arrays([chunk.dictionary for chunk in values.chunks])
    found = pc.index_in(dictionaries, value_set=value_set)
    valid = _mask(pc.is_valid(found))
    where = np.full(len(found), -1, np.int32)
    where[valid] = as_numpy(found.drop_null())
    unknown = set() if valid.all() else set(dictionaries.filter(pc.invert(pc.is_valid(found))).to_pylist())
    out = np.empty(len(values), np.int32)  # filled in place: no per-chunk copies of a long column
    start, offset = 0, 0
    for chunk in values.chunks:  # each chunk's indices point into its own part of `where`
        lookup = where[offset : offset + len(chunk.dictionary)]
        np.take(lookup, as_numpy(chunk.indices), out=out[start : start + len(chunk)])
        start += len(chunk)
        offset += len(chunk.dictionary)
    return out, unknown


def _mask(values: pa.BooleanArray) -> np.ndarray:
    """A null-free Arrow boolean array as a numpy bool array (from its bitmap: no pandas import)."""
    bits = np.frombuffer(values.buffers()[1], np.uint8)
    return np.unpackbits(bits, bitorder="little")[values.offset : values.offset + len(values)].astype(bool)


def _distinct(values: pa.ChunkedArray) -> pa.Array:
    """Distinct strings in order of first appearance (the order the dict readers give their keys)."""
    return pc.unique(pa.chunked_array([c.dictionary.take(pc.unique(c.indices)) for c in values.chunks],
                                      type=pa.string()))


@dataclass
class _Docs:
    """Doc ids of several columns as integer codes (equal ids of one topic, equal codes), and the ids themselves."""

    codes: list[np.ndarray]  # one array per column
    ids: pa.Array  # code -> id

    def order(self, codes: np.ndarray) -> np.ndarray:
        """Integers ordered as the ids of ``codes`` are (UTF-8 byte order = code point order, as Python and
        trec_eval's strcmp compare), sorting only the distinct ids among ``codes``."""
        distinct, inverse = np.unique(codes, return_inverse=True)
        rank = np.empty(len(distinct), np.int64)
        rank[as_numpy(pc.sort_indices(self.ids.take(from_numpy(distinct))))] = np.arange(len(distinct))
        return rank[inverse]


def _take(values: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
    """``values.take(rows)`` for ascending ``rows``, chunk by chunk (no concatenation of a large column)."""
    if len(rows) and not (rows[1:] >= rows[:-1]).all():
        return values.take(from_numpy(rows))
    bounds = np.cumsum([0, *(len(c) for c in values.chunks)])
    cuts = np.searchsorted(rows, bounds)
    return pa.chunked_array([chunk.take(from_numpy(rows[a:b] - start))
                             for chunk, start, a, b in zip(values.chunks, bounds[:-1], cuts[:-1], cuts[1:], strict=True)
                             if b > a], type=values.type)


# Ids per dictionary_encode call: a hash table of this many ids stays in the CPU cache. One table of every id
# misses the cache on nearly every probe: measured here, 2M ids took 0.86 s in one call and 0.07 s in groups of 64k.
_IDS_PER_GROUP = 1 << 16


def _doc_codes(run_topic: np.ndarray, run_doc: pa.ChunkedArray, judged_topic: np.ndarray,
               judged_doc: pa.ChunkedArray, nq: int) -> _Docs:
    """The doc ids of the kept run rows and of the judgments as integer codes, equal for equal ids of one topic:
    all that the ranking, the matching with the judgments and the ideal rankings compare.

    Codes need only agree within a topic, so the ids are hashed in groups of consecutive topics of about
    ``_IDS_PER_GROUP`` ids (a topic is never split), one small hash table per group, the groups on two threads
    (pyarrow's kernels release the GIL); each group's codes are numbered after the previous group's.
    """
    sizes = np.bincount(run_topic, minlength=nq) + np.bincount(judged_topic, minlength=nq)
    topic_group = (np.cumsum(sizes) - sizes) // _IDS_PER_GROUP
    groups = int(topic_group.max(initial=-1)) + 1
    run_parts = _group_rows(topic_group[run_topic], run_doc, groups)
    judged_parts = _group_rows(topic_group[judged_topic], judged_doc, groups)

    def encode(run_part: tuple[np.ndarray, pa.ChunkedArray], judged_part: tuple[np.ndarray, pa.ChunkedArray]
               ) -> pa.DictionaryArray:
        chunks = [*run_part[1].chunks, *judged_part[1].chunks]
        return pc.dictionary_encode(pa.concat_arrays(chunks) if chunks else pa.array([], pa.string()))

    with ThreadPoolExecutor(2, thread_name_prefix="complexir-doc-codes") as pool:
        encoded = list(pool.map(encode, run_parts, judged_parts))
    run_codes = np.empty(len(run_topic), np.int64)
    judged_codes = np.empty(len(judged_topic), np.int64)
    offset = 0
    for (run_rows, run_docs), (judged_rows, _), group in zip(run_parts, judged_parts, encoded, strict=True):
        codes = as_numpy(group.indices) + offset
        run_codes[run_rows] = codes[: len(run_docs)]
        judged_codes[judged_rows] = codes[len(run_docs) :]
        offset += len(group.dictionary)
    return _Docs([run_codes, judged_codes], pa.concat_arrays([group.dictionary for group in encoded])
                 if encoded else pa.array([], pa.string()))


def _group_rows(group: np.ndarray, values: pa.ChunkedArray, groups: int
                ) -> list[tuple[np.ndarray | slice, pa.ChunkedArray]]:
    """Per group 0 .. groups-1: its rows (a slice when the rows come group by group, as TREC files list topics)
    and their ``values``, in row order."""
    if not (group[1:] >= group[:-1]).all():
        order = np.argsort(group, kind="stable")
        bounds = np.searchsorted(group[order], np.arange(groups + 1))
        return [(order[a:b], _take(values, order[a:b])) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    bounds = np.searchsorted(group, np.arange(groups + 1)).tolist()
    return [(slice(a, b), values.slice(a, b - a)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


@dataclass
class _RunTop:
    """What evaluation needs of a run: the rows that can reach a measured rank of their topic."""

    topic: np.ndarray  # int64: the row's topic as an index into the qrels' topics
    doc: pa.ChunkedArray  # string
    score: np.ndarray
    rows: np.ndarray  # per topic, its rows in the whole run, kept or not (more than kept: the topic was cut)
    unknown: set[str]  # the run's topics that the qrels lack (their rows are dropped)


def _selection(topic: np.ndarray, score: np.ndarray, nq: int, depth: int | None,
               whole: np.ndarray | None) -> np.ndarray:
    """The rows that can reach the top ``depth`` of their topic, and every row of the topics marked in ``whole``."""
    selected = select_top(topic, score, nq, depth)
    if whole is not None and whole[topic].any():
        selected = np.union1d(selected, np.flatnonzero(whole[topic]))
    return selected


def _top_rows(run: RunColumns, qids: pa.Array, depth: int | None, whole: np.ndarray | None) -> _RunTop:
    """The rows of ``run`` (a whole run or one piece of it) that :func:`_selection` keeps. A row with ``depth``
    rows scoring above it in a piece has as many in the whole run, so the rows kept from each piece hold those
    that the whole run would keep: :func:`_merged` selects among them again where a topic was split between pieces."""
    topic, unknown = _codes(run.topic, qids)
    known = np.flatnonzero(topic >= 0) if (topic < 0).any() else None
    score = run.score if known is None else run.score[known]
    if known is not None:
        topic = topic[known]
    selected = _selection(topic, score, len(qids), depth, whole)
    rows = selected if known is None else known[selected]
    return _RunTop(topic[selected].astype(np.int64), _take(run.doc, rows), score[selected],
                   np.bincount(topic, minlength=len(qids)), unknown)


def _merged(parts: list[_RunTop], nq: int, depth: int | None, whole: np.ndarray | None) -> _RunTop:
    """The rows of a whole run that :func:`_selection` keeps, from those kept of each of its pieces, give or take
    a few: rows that cannot reach ``depth`` may stay (the ranking cuts them), never one that can be dropped.

    A topic inside one piece was selected whole there; only a topic split between pieces (one or two per piece
    boundary in a TREC run, every topic in a run ordered otherwise) is selected again. When that would drop
    at most an eighth of the rows, they stay: dropping them means copying every kept doc id.
    """
    if len(parts) == 1:
        return parts[0]
    topic = np.concatenate([part.topic for part in parts])
    score = np.concatenate([part.score for part in parts])
    doc = pa.chunked_array([chunk for part in parts for chunk in part.doc.chunks], type=pa.string())
    pieces_holding = np.sum([np.bincount(np.unique(part.topic), minlength=nq) for part in parts], axis=0)
    in_one_piece = pieces_holding[topic] == 1
    split = np.flatnonzero(~in_one_piece)
    again = split[_selection(topic[split], score[split], nq, depth, whole)]
    rows = functools.reduce(operator.add, (part.rows for part in parts))
    unknown = set().union(*(part.unknown for part in parts))
    if len(split) - len(again) <= len(topic) // 8:
        return _RunTop(topic, doc, score, rows, unknown)
    selected = np.union1d(np.flatnonzero(in_one_piece), again)
    return _RunTop(topic[selected], _take(doc, selected), score[selected], rows, unknown)


@dataclass
class _Ranked:
    topic: np.ndarray  # per ranked doc, in ranking order, topic after topic (ascending)
    doc: np.ndarray  # doc code, shared with the judgments
    judged_doc: np.ndarray  # the judgments' doc codes, row by row
    docs: _Docs


def _rank(top: _RunTop, again: Callable[[np.ndarray], _RunTop], nq: int, depth: int | None,
          judged_topic: np.ndarray, judged: pa.ChunkedArray, path: str) -> _Ranked:
    """The kept rows ranked, each (topic, doc) once. ``again(whole)`` collects the rows anew, with every row of the
    topics marked in ``whole``: for a topic whose repeated docs leave fewer than ``depth`` distinct docs among its
    kept rows (rare: a run that repeats docs near the cut), the docs below them."""
    while True:
        docs = _doc_codes(top.topic, top.doc, judged_topic, judged, nq)
        doc, judged_doc = docs.codes
        ranked, repeated = rank_codes(top.topic, doc, top.score, depth, doc_order=docs.order)
        if depth is None or not repeated.any():
            break
        kept = np.bincount(top.topic, minlength=nq)
        short = (np.bincount(top.topic[~repeated], minlength=nq) < depth) & (kept < top.rows)
        if not short.any():
            break
        top = again(short)
    if repeated.any():
        logger.warning(
            "%s: %d repeated (topic, doc) line(s) among the ranks evaluated; each doc counts once, at its best score",
            path, int(repeated.sum()),
        )
    return _Ranked(top.topic[ranked], doc[ranked], judged_doc, docs)


def _adhoc(measures: list[Measure], qids: list[str], ranked: _Ranked, q_topic: np.ndarray,
           q_label: np.ndarray) -> dict[str, np.ndarray]:
    missing = len(qids) - int(np.count_nonzero(np.bincount(ranked.topic, minlength=len(qids))))
    if missing:
        logger.info("%d query(ies) of the qrels are missing from the run; they score 0", missing)
    return adhoc_scores_of_codes(ranked.topic, ranked.doc, q_topic, ranked.judged_doc, q_label, measures, qids)


def _refuse_relabelled(qrels: QrelsColumns, q_topic: np.ndarray, doc: np.ndarray) -> None:
    """A (topic, iteration, doc) judged twice with two labels is refused at its line, as trec_eval refuses it:
    no label may be picked silently. The same doc under two iterations (ndeval's nuggets) is two judgments."""
    if len(doc) < 2:
        return
    iteration = _codes(qrels.iteration, _distinct(qrels.iteration))[0].astype(np.int64)
    order = np.lexsort((qrels.label, doc, iteration, q_topic))
    same = (q_topic[order][1:] == q_topic[order][:-1]) & (iteration[order][1:] == iteration[order][:-1]) & (
        doc[order][1:] == doc[order][:-1])
    if (same & (qrels.label[order][1:] != qrels.label[order][:-1])).any():
        refuse_relabelled(qrels.path)


def _nugget_judgments(qrels: QrelsColumns, q_topic: np.ndarray, doc: np.ndarray) -> NuggetJudgments:
    """Flat judgments in the dict reader's order (:func:`~complexir.metrics.coverage.nugget_judgments`); a (topic,
    nugget, doc) listed twice with two labels is the dict reader's error, naming the line."""
    nugget = _codes(qrels.iteration, _distinct(qrels.iteration))[0].astype(np.int64)
    return nugget_judgments(q_topic, nugget, doc, qrels.label, int(q_topic.max(initial=-1)) + 1,
                            on_conflict=lambda: read_nugget_qrels(qrels.path))


def evaluate_columns(
    qrels: QrelsColumns,
    run: RunColumns,
    measures: Sequence[str | Measure],
    **options: Any,
) -> tuple[list[str], dict[str, np.ndarray]]:
    """Query ids of the qrels (first-appearance order) and measure name -> one value per query.

    Ad hoc measures read, per document, its largest label over the qrels' lines (over the nuggets with
    ``nuggets``); coverage measures need ``nuggets`` (the iteration column is the nugget id). Options:
    ``nuggets``, ``alpha``, ``rel_level``, ``denominator``, as :func:`evaluate_files` takes them.
    """
    return _evaluate(qrels, run.path, lambda qids, depth, whole: _top_rows(run, qids, depth, whole), measures,
                     **options)


def evaluate_files(
    qrels_path: str | os.PathLike[str],
    run_path: str | os.PathLike[str],
    measures: Sequence[str | Measure],
    **options: Any,
) -> tuple[list[str], dict[str, np.ndarray]]:
    """:func:`evaluate_columns` on two TREC files (errors name the file and line). The run is read piece by
    piece and only the rows that can reach a measured rank are kept of each: the whole run is never in memory."""

    def collect(qids: pa.Array, depth: int | None, whole: np.ndarray | None) -> _RunTop:
        parts = read_run_pieces(run_path, lambda piece: _top_rows(piece, qids, depth, whole))
        return _merged(parts, len(qids), depth, whole)

    return _evaluate(read_qrels_columns(qrels_path), str(run_path), collect, measures, **options)


def _evaluate(
    qrels: QrelsColumns,
    run_path: str,
    collect: Callable[[pa.Array, int | None, np.ndarray | None], _RunTop],
    measures: Sequence[str | Measure],
    *,
    nuggets: bool = False,
    alpha: float = 0.5,
    rel_level: int = 1,
    denominator: str = "supported",
) -> tuple[list[str], dict[str, np.ndarray]]:
    """``collect(qids, depth, whole)`` gives the run's rows that can reach rank ``depth`` (:class:`_RunTop`)."""
    parsed = [parse_measure(m) for m in measures]
    coverage = [m for m in parsed if m.kind == MeasureKind.COVERAGE]
    if coverage and not nuggets:
        raise ValueError("coverage measures need nugget ids (the qrels' iteration column)")
    if coverage and not (0.0 <= float(alpha) <= 1.0):
        raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
    if coverage and denominator not in ("supported", "all"):
        raise ValueError(f"denominator must be 'supported' or 'all', got {denominator!r}")
    if coverage and (int(rel_level) != rel_level or rel_level < 1):
        raise ValueError(f"rel_level must be an integer >= 1, got {rel_level!r}")
    qid_array = _distinct(qrels.topic)
    qids = qid_array.to_pylist()
    nq = len(qids)
    depth = max_depth(parsed) if parsed else 1
    top = collect(qid_array, depth, None)
    if top.unknown:
        logger.warning("%d query(ies) of the run are not in the qrels and are ignored", len(top.unknown))
    q_topic = _codes(qrels.topic, qid_array)[0].astype(np.int64)
    ranked = _rank(top, lambda whole: collect(qid_array, depth, whole), nq, depth, q_topic, qrels.doc, run_path)
    del top
    _refuse_relabelled(qrels, q_topic, ranked.judged_doc)
    out: dict[str, np.ndarray] = {}
    adhoc = [m for m in parsed if m.kind == MeasureKind.ADHOC]
    if adhoc:
        out.update(_adhoc(adhoc, qids, ranked, q_topic, qrels.label))
    if coverage:
        depth = max_depth(coverage)
        pos = index_within_runs(ranked.topic)
        use = pos < depth if depth is not None else np.ones(len(pos), dtype=bool)
        ranked_docs, judged_docs = judged_in_id_order(ranked.doc[use], ranked.judged_doc, ranked.docs.order)
        jd = _nugget_judgments(qrels, q_topic, judged_docs)
        out.update(coverage_scores(jd, ranked_docs, np.bincount(ranked.topic[use], minlength=nq), coverage,
                                   qids, alpha=alpha, rel_level=rel_level, denominator=denominator))
    return qids, {m.name: out[m.name] for m in parsed}
