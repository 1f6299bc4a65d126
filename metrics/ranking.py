"""Turning scored runs into rankings, and de-duplicating rankings.

Tie rule (trec_eval's): score descending, then document id **descending**. It is applied here, once,
so every measure and every reference tool sees the same order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
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


def index_within_runs(groups: np.ndarray) -> np.ndarray:
    """Position of each element within its run of equal neighbours: [5, 5, 2, 2, 2] -> [0, 1, 0, 1, 2]."""
    idx = np.arange(len(groups))
    starts = np.ones(len(groups), dtype=bool)
    starts[1:] = groups[1:] != groups[:-1]
    return idx - np.maximum.accumulate(np.where(starts, idx, 0))


def select_top(topic: np.ndarray, score: np.ndarray, ntopics: int, depth: int | None) -> np.ndarray:
    """Rows (indices, grouped by topic) that can reach the top ``depth`` of their topic's ranking, from arrays.

    ``topic`` holds each row's topic index (0 .. ntopics-1, any integer type), ``score`` its finite score. Per
    topic, the depth-th largest score is found in O(n) (``np.partition``) and every row scoring at least that is kept:
    the whole block tied at the boundary too, so that the doc-id tie-break done later on these rows alone
    (:func:`rank_codes`) is exact. Doc ids are not needed here, which is what lets a caller encode only the
    ids of the kept rows. ``depth`` None keeps every row.
    """
    n = len(topic)
    if n == 0:
        return np.zeros(0, np.int64)
    starts = np.concatenate(([0], np.flatnonzero(topic[1:] != topic[:-1]) + 1))
    if len(np.unique(topic[starts])) == len(starts):  # each topic one contiguous block (TREC runs are)
        order = None
    else:
        order = np.argsort(topic, kind="stable")
        sorted_topic = topic[order]
        starts = np.concatenate(([0], np.flatnonzero(sorted_topic[1:] != sorted_topic[:-1]) + 1))
    ends = np.append(starts[1:], n)
    if depth is None or depth >= int((ends - starts).max()):
        return np.arange(n, dtype=np.int64) if order is None else order.astype(np.int64)
    sorted_score = score if order is None else score[order]
    kept: list[np.ndarray] = []
    # One numpy call per topic: the per-topic work is O(n) in C, the Python loop is per topic, not per row.
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        block = sorted_score[s:e]
        if e - s <= depth:
            kept.append(np.arange(s, e))
        else:
            boundary = np.partition(block, e - s - depth)[e - s - depth]
            kept.append(np.flatnonzero(block >= boundary) + s)
    rows = np.concatenate(kept)
    return rows if order is None else order[rows]


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
    order = np.lexsort((-score, topic))  # last key first: topic, then score descending
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
