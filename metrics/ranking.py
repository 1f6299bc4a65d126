"""Turning scored runs into rankings, and de-duplicating rankings.

Tie rule (trec_eval's): score descending, then document id **descending**. It is applied here, once,
so every measure and every reference tool sees the same order.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

__all__ = ["dedupe_rankings", "rank_run"]

logger = logging.getLogger(__name__)


def _rank_one(qid: str, scores: Mapping[str, float]) -> list[str]:
    docs = list(scores)
    if not docs:
        return []
    try:
        vals = np.fromiter(scores.values(), dtype=np.float64, count=len(docs))
    except (TypeError, ValueError):
        for d, v in scores.items():
            try:
                float(v)
            except (TypeError, ValueError):
                raise ValueError(f"query {qid!r}, document {d!r}: score {v!r} is not a number") from None
        raise
    finite = np.isfinite(vals)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise ValueError(f"query {qid!r}, document {docs[i]!r}: score {vals[i]} is not finite (NaN or inf)")
    order = np.argsort(-vals, kind="stable")
    ranked = [docs[i] for i in order]
    svals = vals[order]
    tied = svals[1:] == svals[:-1]
    if tied.any():
        # Re-sort each block of equal scores by doc id descending (only blocks, not the whole list).
        starts = np.flatnonzero(np.concatenate(([True], ~tied)))
        ends = np.append(starts[1:], len(ranked))
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            if e - s > 1:
                ranked[s:e] = sorted(ranked[s:e], reverse=True)
    return ranked


def rank_run(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
    """Per query, doc ids by score descending, ties by doc id descending (trec_eval's rule).

    Raises ValueError naming the query and document on a NaN/inf or non-numeric score.
    """
    return {str(qid): _rank_one(qid, scores) for qid, scores in run.items()}


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
