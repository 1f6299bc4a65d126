"""Scoring TREC files end to end on columns: the path ``complexir evaluate`` takes.

The files are read by :mod:`complexir.trec_io` into arrays and handed to the numpy core
(:func:`~complexir.metrics.adhoc.adhoc_scores`, :func:`~complexir.metrics.coverage.coverage_scores`) with no
per-line Python object and no dict of dicts on the way. Strings are touched only by pyarrow's C++ kernels,
and only where they must be: topic ids are matched through the small per-block dictionaries the CSV reader
builds; doc ids only for the run rows that can reach a measured rank (:func:`~complexir.metrics.ranking.select_top`
picks them from the scores alone) and for the judgments. Those doc ids get codes in id order, so the
ranking's tie rule (doc id descending) and ndeval's ideal (ties to the larger id) are integer comparisons.

The numbers are the dict path's (:func:`~complexir.metrics.adhoc_per_query`, ``coverage_per_query``),
and tests hold the two equal.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from complexir.metrics.adhoc import UNJUDGED, adhoc_scores
from complexir.metrics.coverage import NuggetJudgments, coverage_scores
from complexir.metrics.measures import Measure, max_depth, parse_measure
from complexir.metrics.ranking import index_within_runs, rank_codes, select_top
from complexir.trec_io import (
    QrelsColumns,
    RunColumns,
    as_numpy,
    from_numpy,
    read_nugget_qrels,
    read_qrels_columns,
    read_run_columns,
)

__all__ = ["evaluate_columns", "evaluate_files"]

logger = logging.getLogger(__name__)


def _codes(values: pa.ChunkedArray, value_set: pa.Array) -> tuple[np.ndarray, set[str]]:
    """Index of each value in ``value_set`` (-1 when absent), chunk by chunk through each chunk's dictionary;
    and the distinct values not in ``value_set``."""
    out = np.empty(len(values), np.int32)  # filled in place: no per-chunk copies of a 10-million-row column
    unknown: set[str] = set()
    start = 0
    for chunk in values.chunks:
        found = pc.index_in(chunk.dictionary, value_set=value_set)
        valid = _mask(pc.is_valid(found))
        where = np.full(len(found), -1, np.int32)
        where[valid] = as_numpy(found.drop_null())
        if not valid.all():  # a chunk's dictionary holds exactly the values of that chunk
            unknown.update(chunk.dictionary.filter(pc.invert(pc.is_valid(found))).to_pylist())
        np.take(where, as_numpy(chunk.indices), out=out[start : start + len(chunk)])
        start += len(chunk)
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
    """Doc ids of several columns as shared integer codes (equal ids, equal codes), and the ids themselves."""

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


def _doc_codes(*columns: pa.ChunkedArray) -> _Docs:
    encoded = pc.dictionary_encode(pa.chunked_array([c for col in columns for c in col.chunks], type=pa.string()))
    ids = encoded.chunks[0].dictionary if encoded.num_chunks else pa.nulls(0, pa.string())
    codes = np.concatenate([as_numpy(c.indices) for c in encoded.chunks]).astype(np.int64) \
        if encoded.num_chunks else np.zeros(0, np.int64)
    out, start = [], 0
    for col in columns:
        out.append(codes[start : start + len(col)])
        start += len(col)
    return _Docs(out, ids)


@dataclass
class _Ranked:
    topic: np.ndarray  # per ranked doc, in ranking order, topic after topic (ascending)
    doc: np.ndarray  # doc code, shared with the judgments
    judged_doc: np.ndarray  # the judgments' doc codes, row by row
    docs: _Docs


def _rank(run: RunColumns, run_topic: np.ndarray, nq: int, depth: int | None, judged: pa.ChunkedArray) -> _Ranked:
    if not (run_topic < 0).any():  # every run topic is judged: no copy
        rows, topic_all, score_all = None, run_topic, run.score
    else:
        rows = np.flatnonzero(run_topic >= 0)
        topic_all, score_all = run_topic[rows], run.score[rows]
    selected = select_top(topic_all, score_all, nq, depth)
    while True:
        topic, score = topic_all[selected].astype(np.int64), score_all[selected]
        docs = _doc_codes(_take(run.doc, selected if rows is None else rows[selected]), judged)
        doc, judged_doc = docs.codes
        ranked, repeated = rank_codes(topic, doc, score, depth, doc_order=docs.order)
        if depth is None or not repeated.any():
            break
        # A topic whose repeats leave fewer than `depth` distinct docs among its selected rows may have more
        # docs below them: take all of its rows (rare: a run that repeats docs near the cut).
        distinct = np.bincount(topic[~repeated], minlength=nq)
        short = (distinct < depth) & (np.bincount(topic, minlength=nq) < np.bincount(topic_all, minlength=nq))
        if not short.any():
            break
        selected = np.union1d(selected, np.flatnonzero(short[topic_all]))
    if repeated.any():
        logger.warning(
            "%s: %d repeated (topic, doc) line(s) among the ranks evaluated; each doc counts once, at its best score",
            run.path, int(repeated.sum()),
        )
    return _Ranked(topic[ranked], doc[ranked], judged_doc, docs)


def _judged_max(topic: np.ndarray, doc: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, ...]:
    """(topic, doc) pairs once each with their largest label, sorted by the pair key; and that key."""
    span = int(doc.max(initial=-1)) + 1
    key = topic * span + doc
    order = np.lexsort((-label, key))
    first = np.ones(len(order), dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    keep = order[first]
    return key[keep], topic[keep], label[keep], span


def _adhoc(measures: list[Measure], qids: list[str], ranked: _Ranked, q_topic: np.ndarray,
           q_label: np.ndarray) -> dict[str, np.ndarray]:
    nq = len(qids)
    keys, j_topic, j_label, span = _judged_max(q_topic, ranked.judged_doc, q_label)
    depth = max_depth(measures)
    pos = index_within_runs(ranked.topic)
    use = pos < depth if depth is not None else np.ones(len(pos), dtype=bool)
    r_topic, r_doc, r_pos = ranked.topic[use], ranked.doc[use], pos[use]
    r_key = r_topic * max(span, 1) + r_doc
    at = np.minimum(np.searchsorted(keys, r_key), max(len(keys) - 1, 0))
    found = (keys[at] == r_key) & (r_doc < span) if len(keys) else np.zeros(len(r_key), dtype=bool)
    width = int(r_pos.max(initial=-1)) + 1
    labels = np.full((nq, max(width, 1)), UNJUDGED, dtype=np.int64)
    labels[r_topic, r_pos] = np.where(found, j_label[at] if len(keys) else UNJUDGED, UNJUDGED)
    missing = nq - int(np.count_nonzero(np.bincount(ranked.topic, minlength=nq)))
    if missing:
        logger.info("%d query(ies) of the qrels are missing from the run; they score 0", missing)
    return adhoc_scores(labels, j_topic, j_label, measures, qids)


def _nugget_judgments(qrels: QrelsColumns, q_topic: np.ndarray, doc: np.ndarray) -> NuggetJudgments:
    """Flat judgments in the dict reader's order: topics in qrels order, nuggets in listing order within
    their topic, docs in listing order within their nugget, a (topic, nugget, doc) repeated with the same
    label once (with two labels: the dict reader's error, naming the line)."""
    nugget = _codes(qrels.iteration, _distinct(qrels.iteration))[0].astype(np.int64)
    n = len(q_topic)
    pair = q_topic * (int(nugget.max(initial=-1)) + 1) + nugget
    _, first_row, pair_id = np.unique(pair, return_index=True, return_inverse=True)
    pair_first = first_row[pair_id]  # first line of each row's (topic, nugget)
    span = int(doc.max(initial=-1)) + 1
    triple = pair_id.astype(np.int64) * span + doc
    order = np.lexsort((np.arange(n), triple))
    t_sorted = triple[order]
    repeat = np.zeros(n, dtype=bool)
    repeat[order[1:]] = t_sorted[1:] == t_sorted[:-1]
    if repeat.any():
        prev = np.empty(n, np.int64)
        prev[order[1:]] = order[:-1]
        if (qrels.label[repeat] != qrels.label[prev[repeat]]).any():
            read_nugget_qrels(qrels.path)  # raises at the line with the second label
    keep = np.flatnonzero(~repeat)
    keep = keep[np.lexsort((keep, pair_first[keep], q_topic[keep]))]
    k_pair = pair_id[keep]
    starts = np.ones(len(keep), dtype=bool)
    starts[1:] = k_pair[1:] != k_pair[:-1]
    nugget_topic = q_topic[keep][starts]
    return NuggetJudgments(
        labels=qrels.label[keep].astype(np.float64),
        docs=doc[keep],
        docs_per_nugget=np.diff(np.append(np.flatnonzero(starts), len(keep))),
        nuggets_per_topic=np.bincount(nugget_topic, minlength=int(q_topic.max(initial=-1)) + 1),
    )


def evaluate_columns(
    qrels: QrelsColumns,
    run: RunColumns,
    measures: Sequence[str | Measure],
    *,
    nuggets: bool = False,
    alpha: float = 0.5,
    rel_level: int = 1,
    denominator: str = "supported",
) -> tuple[list[str], dict[str, np.ndarray]]:
    """Query ids of the qrels (first-appearance order) and measure name -> one value per query.

    Ad hoc measures read, per document, its largest label over the qrels' lines (over the nuggets with
    ``nuggets``); coverage measures need ``nuggets`` (the iteration column is the nugget id).
    """
    parsed = [parse_measure(m) for m in measures]
    coverage = [m for m in parsed if m.kind == "coverage"]
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
    run_topic, extra = _codes(run.topic, qid_array)
    if extra:
        logger.warning("%d query(ies) of the run are not in the qrels and are ignored", len(extra))
    ranked = _rank(run, run_topic, nq, max_depth(parsed) if parsed else 1, qrels.doc)
    q_topic = _codes(qrels.topic, qid_array)[0].astype(np.int64)
    out: dict[str, np.ndarray] = {}
    adhoc = [m for m in parsed if m.kind == "adhoc"]
    if adhoc:
        out.update(_adhoc(adhoc, qids, ranked, q_topic, qrels.label))
    if coverage:
        # ndeval's ideal breaks ties by doc id: judged docs get codes in id order, other ranked docs -1
        judged = np.unique(ranked.judged_doc)
        in_order = ranked.docs.order(judged)
        jd = _nugget_judgments(qrels, q_topic, in_order[np.searchsorted(judged, ranked.judged_doc)])
        depth = max_depth(coverage)
        pos = index_within_runs(ranked.topic)
        use = pos < depth if depth is not None else np.ones(len(pos), dtype=bool)
        at = np.minimum(np.searchsorted(judged, ranked.doc[use]), max(len(judged) - 1, 0))
        ranked_docs = np.where(judged[at] == ranked.doc[use], in_order[at], -1) if len(judged) else \
            np.full(int(use.sum()), -1, np.int64)
        out.update(coverage_scores(jd, ranked_docs, np.bincount(ranked.topic[use], minlength=nq), coverage,
                                   qids, alpha=alpha, rel_level=rel_level, denominator=denominator))
    return qids, {m.name: out[m.name] for m in parsed}


def evaluate_files(
    qrels_path: str | os.PathLike[str],
    run_path: str | os.PathLike[str],
    measures: Sequence[str | Measure],
    **options,
) -> tuple[list[str], dict[str, np.ndarray]]:
    """:func:`evaluate_columns` on two TREC files (errors name the file and line)."""
    return evaluate_columns(read_qrels_columns(qrels_path), read_run_columns(run_path), measures, **options)
