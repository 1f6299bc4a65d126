"""Turning scored runs into rankings, and de-duplicating rankings.

Tie rule (trec_eval's): score descending, then document id **descending**. It is applied here, once,
so every measure and every reference tool sees the same order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

__all__ = ["dedupe_rankings", "index_within_runs", "rank_run"]

logger = logging.getLogger(__name__)


def _checked_scores(qid: str, scores: Mapping[str, float]) -> np.ndarray:
    """Scores as float64 in dict order; ValueError naming the query and doc on a non-number or NaN/inf."""
    try:
        vals = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    except (TypeError, ValueError):
        for d, v in scores.items():
            try:
                float(v)
            except (TypeError, ValueError):
                raise ValueError(f"query {qid!r}, document {d!r}: score {v!r} is not a number") from None
        raise
    # One vectorised check; only on failure walk to the offending doc to name it.
    finite = np.isfinite(vals)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        doc = next(islice(scores, i, None))
        raw = scores[doc]
        # numpy turns None (and the string "nan") into NaN: say what was actually given
        what = "is not finite (NaN or inf)" if isinstance(raw, (int, float, np.number)) else "is not a number"
        raise ValueError(f"query {qid!r}, document {doc!r}: score {raw!r} {what}")
    return vals


def _rank_one(qid: str, scores: Mapping[str, float], depth: int | None) -> list[str]:
    n = len(scores)
    vals = _checked_scores(qid, scores)  # the whole run is checked, whatever the depth
    if n == 0 or depth == 0:
        return []
    # Doc ids in an object array: gathering them by a numpy index and .tolist() is C-level, several times
    # faster than a Python loop over the order (fromiter, unlike np.array, never splits tuple-like ids).
    docs = np.fromiter(scores, dtype=object, count=n)
    if depth is not None and depth < n:
        # Only the top `depth` are wanted: find the depth-th largest score in O(n) and keep every doc
        # scoring at least that, i.e. the whole block tied with the boundary too, so the doc-id
        # tie-break below picks exactly the docs a full sort would put at ranks <= depth.
        boundary = np.partition(vals, n - depth)[n - depth]
        keep = np.flatnonzero(vals >= boundary)
        vals, docs = vals[keep], docs[keep]
    # Score descending; the order inside blocks of equal scores is arbitrary here (no stable sort
    # needed, numpy's default sort is the fastest) and is fixed next.
    order = np.argsort(vals)[::-1]
    vals = vals[order]
    ranked: list[str] = docs[order].tolist()
    tied = vals[1:] == vals[:-1]
    if tied.any():
        # trec_eval's tie-break: re-sort each block of equal scores by doc id descending.
        starts = np.flatnonzero(np.concatenate(([True], ~tied)))
        ends = np.append(starts[1:], len(ranked))
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            if e - s > 1:
                ranked[s:e] = sorted(ranked[s:e], reverse=True)
    return ranked if depth is None else ranked[:depth]


def rank_run(run: Mapping[str, Mapping[str, float]], depth: int | None = None) -> dict[str, list[str]]:
    """Per query, doc ids by score descending, ties by doc id descending (trec_eval's rule).

    ``depth`` keeps only the first ``depth`` docs of each ranking (exactly ``rank_run(run)[q][:depth]``),
    which is all that @k measures read: use :func:`~complexir.metrics.measures.max_depth` of the measures.
    Selecting them costs O(n) per query instead of a full sort. Every score is checked either way:
    ValueError naming the query and document on a NaN/inf or non-numeric score.
    """
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 0):
        raise ValueError(f"depth must be a non-negative integer or None, got {depth!r}")
    return {str(qid): _rank_one(qid, scores, depth) for qid, scores in run.items()}


def dedupe_rankings(
    rankings: Mapping[str, Sequence[str]], qids: Iterable[str], depth: int | None
) -> dict[str, list[str]]:
    """First ``depth`` distinct docs of each ranking (all when None); repeats keep their first rank.

    Duplicates are counted and reported once per call with a warning, never silently dropped.
    """
    out: dict[str, list[str]] = {}
    dup_queries: list[str] = []
    dup_total = 0
    for qid in qids:
        ranking = rankings.get(qid)
        if not ranking:
            out[qid] = []
            continue
        if isinstance(ranking, str):
            raise TypeError(f"query {qid!r}: a ranking is a sequence of doc ids, not a string")
        # Only the first `depth` distinct docs matter: read a prefix, widen it only if repeats shorten it.
        # Repeats are therefore counted within the part of the ranking that is evaluated.
        read = len(ranking) if depth is None else min(len(ranking), depth)
        while True:
            head = ranking[:read] if read < len(ranking) else ranking
            unique = dict.fromkeys(head)
            if read >= len(ranking) or depth is None or len(unique) >= depth:
                break
            read = min(len(ranking), 2 * read + 1)
        if len(unique) != len(head):
            dup_queries.append(qid)
            dup_total += len(head) - len(unique)
        docs = list(unique)
        out[qid] = docs if depth is None else docs[:depth]
    if dup_total:
        logger.warning(
            "%d duplicate document(s) in the rankings of %d query(ies) (e.g. %s); each counts once, "
            "at its first (best) rank",
            dup_total, len(dup_queries), ", ".join(map(repr, dup_queries[:5])),
        )
    return out


def run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal neighbours begins: [5, 5, 2, 2, 2] -> [0, 2]; [] -> []."""
    if len(values) == 0:
        return np.zeros(0, np.int64)
    return np.concatenate(([0], np.flatnonzero(values[1:] != values[:-1]) + 1))


def index_within_runs(groups: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal neighbours: [5, 5, 2, 2, 2] -> [0, 1, 0, 1, 2]."""
    starts = run_starts(groups)
    return np.arange(len(groups)) - np.repeat(starts, np.diff(np.append(starts, len(groups))))


_ROWS_PER_TOPIC_FOR_GRID = 512  # select_top's matrix is used below this many rows a topic on average


@dataclass(frozen=True)
class _TopicBlocks:
    """Rows laid out topic by topic: ``order`` (None: the rows already are) puts each topic's rows together,
    block ``b`` holding rows ``starts[b] .. starts[b] + lengths[b] - 1`` of that order."""

    order: np.ndarray | None
    starts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, topic: np.ndarray) -> _TopicBlocks:
        starts = run_starts(topic)
        order = None
        if len(np.unique(topic[starts])) != len(starts):  # a topic in several places (TREC runs list each once)
            order = np.argsort(topic, kind="stable")
            starts = run_starts(topic[order])
        return cls(order, starts, np.diff(np.append(starts, len(topic))))

    def grid(self, values: np.ndarray, fill: float) -> np.ndarray | None:
        """``values`` (in the blocks' order) as one row of a matrix per block, padded with ``fill`` at its end;
        None when padding would more than double the cells (a few very long topics among short ones).

        Why a matrix: numpy's row-wise ``partition``/``argsort`` then work on every topic in one C call, where
        one call per topic costs more in Python than the work itself (10,000 topics of 100 rows: lexsort
        0.30 s, row-wise argsort 0.03 s, measured here).
        """
        n = int(self.lengths.sum())
        width = int(self.lengths.max(initial=0))
        if len(self.lengths) * width > 2 * n + width:
            return None
        if n == len(self.lengths) * width:  # every block full (a run with the same depth for every topic)
            return values.reshape(len(self.lengths), width)
        matrix = np.full((len(self.lengths), width), fill, dtype=values.dtype)
        # row b's values start at flat index b * width instead of starts[b]
        matrix.reshape(-1)[np.arange(n) + np.repeat(np.arange(len(self.lengths)) * width - self.starts,
                                                    self.lengths)] = values
        return matrix


def select_top(topic: np.ndarray, score: np.ndarray, ntopics: int, depth: int | None) -> np.ndarray:
    """Rows (indices, grouped by topic) that can reach the top ``depth`` of their topic's ranking, from arrays.

    ``topic`` holds each row's topic index (0 .. ntopics-1, any integer type), ``score`` its finite score. Per
    topic, the depth-th largest score is found (read off the depth-th row when the topics are listed best first,
    as TREC runs are; else by ``np.partition``, in O(n)) and every row scoring at least that is kept:
    the whole block tied at the boundary too, so that the doc-id tie-break done later on these rows alone
    (:func:`rank_codes`) is exact. Doc ids are not needed here, which is what lets a caller encode only the
    ids of the kept rows. ``depth`` None keeps every row.
    """
    n = len(topic)
    if n == 0:
        return np.zeros(0, np.int64)
    blocks = _TopicBlocks.of(topic)
    if depth is None or depth >= int(blocks.lengths.max()):
        return np.arange(n, dtype=np.int64) if blocks.order is None else blocks.order.astype(np.int64)
    sorted_score = score if blocks.order is None else score[blocks.order]
    ascents = np.flatnonzero(sorted_score[1:] > sorted_score[:-1]) + 1
    if not np.isin(ascents, blocks.starts).all():  # some topic is not listed best first: find its boundary
        return _partitioned(blocks, sorted_score, depth)
    # Every topic listed best first, as TREC runs are written: the depth-th row holds the boundary score.
    boundary = sorted_score[blocks.starts + np.minimum(depth, blocks.lengths) - 1]
    rows = np.flatnonzero(sorted_score >= np.repeat(boundary, blocks.lengths))
    return rows if blocks.order is None else blocks.order[rows]


def _partitioned(blocks: _TopicBlocks, sorted_score: np.ndarray, depth: int) -> np.ndarray:
    """:func:`select_top` for topics in any order: each topic's depth-th largest score found by ``np.partition``."""
    n = len(sorted_score)
    # The matrix pays for its padding and scatter; one partition per topic pays per call: measured here on 350k
    # rows, the matrix is 5x faster at 30 rows a topic, even at 300, and 2x slower at 1,000.
    matrix = blocks.grid(sorted_score, -np.inf) if n <= _ROWS_PER_TOPIC_FOR_GRID * len(blocks.lengths) else None
    if matrix is not None:  # scores are finite: the padding is below every one of them
        width = matrix.shape[1]
        boundary = np.partition(matrix, width - depth, axis=1)[:, width - depth]
        rows = np.flatnonzero(sorted_score >= np.repeat(boundary, blocks.lengths))
    else:
        kept: list[np.ndarray] = []
        # One numpy call per topic: the per-topic work is O(n) in C, the Python loop is per topic, not per row.
        for s, length in zip(blocks.starts.tolist(), blocks.lengths.tolist(), strict=True):
            block_scores = sorted_score[s : s + length]
            if length <= depth:
                kept.append(np.arange(s, s + length))
            else:
                boundary = np.partition(block_scores, length - depth)[length - depth]
                kept.append(np.flatnonzero(block_scores >= boundary) + s)
        rows = np.concatenate(kept)
    return rows if blocks.order is None else blocks.order[rows]


def _by_topic_then_score(topic: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Row indices ordered by topic ascending, then score descending (ties in any order)."""
    blocks = _TopicBlocks.of(topic)
    matrix = blocks.grid(-score if blocks.order is None else -score[blocks.order], np.inf)
    if matrix is None:
        return np.lexsort((-score, topic))  # last key first: topic, then score descending
    within = np.argsort(matrix, axis=1, kind="stable")  # the padding (+inf) sorts last in each row
    by_topic = np.argsort(topic[blocks.order[blocks.starts] if blocks.order is not None else blocks.starts],
                          kind="stable")
    rows = (blocks.starts[:, None] + within)[by_topic]
    real = (np.arange(matrix.shape[1]) < blocks.lengths[:, None])[by_topic]
    order = rows[real]
    return order if blocks.order is None else blocks.order[order]


def rank_codes(
    topic: np.ndarray,
    doc: np.ndarray,
    score: np.ndarray,
    depth: int | None,
    doc_order: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Rank rows given as arrays: score descending, ties by doc id descending (trec_eval's rule).

    ``doc`` holds integer doc codes (equal ids, equal codes). Their order is only read to break score ties:
    through ``doc_order`` (codes -> integers ordered as the ids) when given, else the codes themselves,
    and only for the rows inside a tie, so a caller can sort the few tied ids instead of every id.
    Returns ``(rows, repeated)``: the row indices in ranking order, topic by topic (topics ascending), each
    (topic, doc) once at its best rank and cut at ``depth``; and per row, whether it repeats a (topic, doc)
    ranked above it (dropped).
    """
    n = len(topic)
    order = _by_topic_then_score(topic, score)
    t, s = topic[order], score[order]
    tied = (t[1:] == t[:-1]) & (s[1:] == s[:-1])
    if tied.any():  # each block of equal (topic, score), re-ordered by doc id descending
        block = np.cumsum(np.concatenate(([True], ~tied)))
        inside = np.zeros(n, dtype=bool)
        inside[1:] |= tied
        inside[:-1] |= tied
        at = np.flatnonzero(inside)
        keys = doc[order[at]]
        keys = doc_order(keys) if doc_order is not None else keys
        order[at] = order[at][np.lexsort((-keys, block[at]))]
    t = topic[order]
    span = int(doc.max(initial=0)) + 1
    _, first = np.unique(t.astype(np.int64) * span + doc[order], return_index=True)  # first = best rank
    best = np.zeros(n, dtype=bool)
    best[first] = True
    rows, t = order[best], t[best]
    repeated = np.zeros(n, dtype=bool)
    repeated[order[~best]] = True
    if depth is not None:
        rows = rows[index_within_runs(t) < depth]
    return rows, repeated
