"""Ad hoc measures with trec_eval semantics: nDCG@k, R@k, P@k, AP@k (map_cut_k), AP (map), RR@k; and ir_measures'
Judged@k (the fraction of the top k that has a judgment, of any label).

Written by hand, vectorised over queries with numpy, instead of calling pytrec_eval at run time:
pytrec_eval is a C extension that re-sorts whole runs (only the top k matters here), breaks ties in
its own way and cannot be shipped inside a pure-Python `evaluate` Space. Tests pin every value to
pytrec_eval and to trec_eval's own expected output to 1e-12.

Conventions: relevant = label >= rel (default 1); nDCG gain = label, discount log2(rank + 1), ideal
from the judged labels at the same cutoff; every query of the qrels is scored, a query missing from
the rankings (or without any relevant document) scores 0 and is reported.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

import numpy as np

from .measures import Measure, MeasureKind, max_depth, parse_measure
from .ranking import dedupe_rankings, index_within_runs, run_starts

__all__ = ["DEFAULT_ADHOC_MEASURES", "JUDGED_CEILING_KEY", "PAST_END", "UNJUDGED", "adhoc_per_query", "adhoc_scores",
           "adhoc_scores_of_codes", "judged_ceiling_per_query", "check_labels"]

logger = logging.getLogger(__name__)

DEFAULT_ADHOC_MEASURES = ("nDCG@10", "R@100", "AP@10")
UNJUDGED = -1  # label of a ranked doc without judgment (trec_eval: RELVALUE_NONPOOL)
PAST_END = -2  # past the end of a ranking: no doc there (Judged@k divides by the docs ranked, not by k)


def check_labels(where: str, judged: Mapping[str, object]) -> np.ndarray:
    """Labels as int64; ValueError naming ``where`` (e.g. "query '3'") and the doc on bad labels."""
    if not isinstance(judged, Mapping):
        raise TypeError(f"{where}: judgments must map doc id -> label, got {type(judged).__name__}")
    try:
        vals = np.fromiter(judged.values(), dtype=np.float64, count=len(judged))
    except (TypeError, ValueError):
        vals = None
    if vals is None or not (np.isfinite(vals).all() and (vals >= 0).all() and (vals == np.floor(vals)).all()):
        for doc, lab in judged.items():
            if not _is_label(lab):
                raise ValueError(
                    f"{where}, document {doc!r}: label {lab!r} is not a non-negative integer"
                )
    return vals.astype(np.int64) if vals is not None else np.zeros(0, np.int64)


def _is_label(value: object) -> bool:
    """A non-negative integer, or a float with an integer value (a bool is no label)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, np.integer)):
        return bool(value >= 0)
    if isinstance(value, (float, np.floating)):
        return float(value).is_integer() and bool(value >= 0)
    return False


def _parse_all(measures: Sequence[str | Measure], kind: MeasureKind) -> list[Measure]:
    if isinstance(measures, str):
        measures = [measures]
    parsed = [parse_measure(m) for m in measures]
    for m in parsed:
        if m.kind != kind:
            other = "coverage_per_query" if m.kind == MeasureKind.COVERAGE else "adhoc_per_query"
            raise ValueError(f"{m.name!r} is a {m.kind} measure; compute it with {other}")
    return parsed


def adhoc_per_query(
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Sequence[str]],
    measures: Sequence[str] = DEFAULT_ADHOC_MEASURES,
) -> dict[str, dict[str, float]]:
    """measure name -> query id -> value, over every query in ``qrels``.

    ``rankings`` holds ranked doc ids per query (see :func:`rank_run`); repeats count once at their
    first rank (reported with a warning). Only the top ``max(k)`` of each ranking is read unless a
    measure without cutoff (``AP``, ``nDCG``, ``RR``, ``R``) asks for the whole list.
    """
    parsed = _parse_all(measures, MeasureKind.ADHOC)
    qids = list(qrels)
    depth = None if any(m.cutoff is None for m in parsed) else max((m.cutoff or 0) for m in parsed)
    ranked = dedupe_rankings(rankings, qids, depth)
    width = max((len(r) for r in ranked.values()), default=0)  # never more than the run holds, whatever k
    labels = np.full((len(qids), max(width, 1)), PAST_END, dtype=np.int64)
    judged_labels: list[np.ndarray] = []
    for i, qid in enumerate(qids):
        judged = qrels[qid]
        judged_labels.append(check_labels(f"query {qid!r}", judged))
        docs = ranked[qid]
        if docs:
            get = judged.get
            labels[i, : len(docs)] = [get(d, UNJUDGED) for d in docs]
    missing = [q for q in qids if q not in rankings]
    if missing:
        logger.info("%d query(ies) of the qrels are missing from the run; they score 0", len(missing))
    judged_topic = np.repeat(np.arange(len(qids)), [len(lab) for lab in judged_labels])
    judged_label = np.concatenate(judged_labels) if judged_labels else np.zeros(0, np.int64)
    values = adhoc_scores(labels, judged_topic, judged_label, parsed, qids)
    return {name: dict(zip(qids, vec.tolist(), strict=True)) for name, vec in values.items()}


def adhoc_scores(
    labels: np.ndarray,
    judged_topic: np.ndarray,
    judged_label: np.ndarray,
    measures: Sequence[str | Measure],
    qids: Sequence[str],
) -> dict[str, np.ndarray]:
    """The maths on arrays: measure name -> one value per query (in ``qids`` order).

    ``labels`` is (queries, ranks): the label of the doc at each rank, :data:`UNJUDGED` (-1) for an
    unjudged doc, :data:`PAST_END` (-2) past the end of the ranking (duplicates already removed; only Judged@k
    tells the two apart, so a caller that fills -1 past the end gets Judged@k over k). ``judged_topic`` and
    ``judged_label`` list every judgment as (query index, label >= 0). trec_eval's rules: a doc is
    relevant when judged with label >= rel (so ``rel=0`` counts every judged doc, never an unjudged one);
    nDCG's gain is the label and its ideal comes from the judged labels.
    """
    parsed = _parse_all(list(measures), MeasureKind.ADHOC)
    nq, width = labels.shape
    if len(judged_topic) and not (judged_label >= 1).all():
        has_rel = np.bincount(judged_topic, weights=judged_label >= 1, minlength=nq) > 0
    else:
        has_rel = np.bincount(judged_topic, minlength=nq) > 0
    if not has_rel.all():
        no_rel = np.flatnonzero(~has_rel)[:5].tolist()
        logger.warning(
            "%d query(ies) have no relevant document in the qrels (e.g. %s); they score 0",
            int((~has_rel).sum()), ", ".join(repr(qids[i]) for i in no_rel),
        )
    ranks = np.arange(1, width + 1, dtype=np.float64)
    gains_all = np.maximum(labels, 0).astype(np.float64)
    num_rel_cache: dict[int, np.ndarray] = {}

    def num_rel(t: int) -> np.ndarray:
        if t not in num_rel_cache:
            num_rel_cache[t] = np.bincount(judged_topic, weights=judged_label >= t, minlength=nq).astype(np.float64)
        return num_rel_cache[t]

    # Judged positive labels, each query's sorted descending: position within its query = ideal rank.
    pos = judged_label > 0
    order = np.lexsort((-judged_label[pos], judged_topic[pos]))
    ideal_topic = judged_topic[pos][order]
    ideal_label = judged_label[pos][order].astype(np.float64)
    ideal_rank = index_within_runs(ideal_topic)
    most_positive = int(ideal_rank.max()) + 1 if len(ideal_rank) else 0

    def ideal_dcg(k: int) -> np.ndarray:
        cols = max(min(k, most_positive), 1)  # ranks past the last positive judgment add nothing
        keep = ideal_rank < cols
        mat = np.zeros((nq, cols))
        mat[ideal_topic[keep], ideal_rank[keep]] = ideal_label[keep]
        return mat @ (1.0 / np.log2(np.arange(2, cols + 2, dtype=np.float64)))

    def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        out = np.zeros_like(num, dtype=np.float64)
        np.divide(num, den, out=out, where=den > 0)
        return out

    results: dict[str, np.ndarray] = {}
    for m in parsed:
        k = m.cutoff if m.cutoff is not None else width
        kk = min(k, width)  # a cutoff past the longest ranking reads the whole ranking: no allocation for k
        t = int(m.params.get("rel", 1))
        rel = labels[:, :kk] >= t
        if m.family == "nDCG":
            dcg = gains_all[:, :kk] @ (1.0 / np.log2(ranks[:kk] + 1.0))
            values = safe_div(dcg, ideal_dcg(most_positive if m.cutoff is None else k))
        elif m.family == "R":
            values = safe_div(rel.sum(axis=1).astype(np.float64), num_rel(t))
        elif m.family == "P":
            values = rel.sum(axis=1) / float(k)
        elif m.family == "AP":
            hits = np.cumsum(rel, axis=1)
            values = safe_div((rel * hits / ranks[:kk]).sum(axis=1), num_rel(t))
        elif m.family == "Judged":  # ir_measures: judged docs / min(k, docs ranked); nothing ranked scores 0
            ranked = labels[:, :kk] != PAST_END
            values = safe_div((labels[:, :kk] >= 0).sum(axis=1).astype(np.float64),
                              ranked.sum(axis=1).astype(np.float64))
        elif m.family == "RR":
            first = rel.argmax(axis=1)
            values = np.where(rel.any(axis=1), 1.0 / (first + 1.0), 0.0)
        else:  # pragma: no cover - parse_measure guards this
            raise ValueError(m.name)
        results[m.name] = values
    return results


def _judged_max(topic: np.ndarray, doc: np.ndarray,
                label: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(topic, doc) pairs once each with their largest label, sorted by the pair key; and that key."""
    span = int(doc.max(initial=-1)) + 1
    key = topic * span + doc
    if len(key) == 0:
        return key, topic, label, span
    # One sort on the key and a max per run of equal keys: half the time of lexsort with the label (measured
    # here on 1M judgments; numpy's stable sort beat its quicksort on these topic-major keys).
    order = np.argsort(key, kind="stable")
    starts = run_starts(key[order])
    first = order[starts]
    return key[first], topic[first], np.maximum.reduceat(label[order], starts), span


def adhoc_scores_of_codes(ranked_topic: np.ndarray, ranked_doc: np.ndarray, judged_topic: np.ndarray,
                          judged_doc: np.ndarray, judged_label: np.ndarray, measures: Sequence[str | Measure],
                          qids: Sequence[str]) -> dict[str, np.ndarray]:
    """:func:`adhoc_scores` from integer codes: measure name -> one value per query (in ``qids`` order).

    ``ranked_topic`` and ``ranked_doc`` list the rankings as (query index, doc code), query after query
    (ascending), each in ranking order with each doc once; ``judged_*`` list the judgments, a doc judged
    several times (e.g. per nugget) keeping its largest label. Equal doc ids of a query have equal codes.
    """
    nq = len(qids)
    keys, j_topic, j_label, span = _judged_max(judged_topic, judged_doc, judged_label)
    depth = max_depth(measures)
    pos = index_within_runs(ranked_topic)
    use = pos < depth if depth is not None else np.ones(len(pos), dtype=bool)
    r_topic, r_doc, r_pos = ranked_topic[use], ranked_doc[use], pos[use]
    r_key = r_topic * max(span, 1) + r_doc
    at = np.minimum(np.searchsorted(keys, r_key), max(len(keys) - 1, 0))
    found = (keys[at] == r_key) & (r_doc < span) if len(keys) else np.zeros(len(r_key), dtype=bool)
    width = int(r_pos.max(initial=-1)) + 1
    labels = np.full((nq, max(width, 1)), PAST_END, dtype=np.int64)
    labels[r_topic, r_pos] = np.where(found, j_label[at] if len(keys) else UNJUDGED, UNJUDGED)
    return adhoc_scores(labels, j_topic, j_label, measures, qids)


def mean_scores(per_query: dict[str, dict[str, float]]) -> dict[str, float]:
    """Arithmetic mean per measure over the queries present (0.0 for an empty measure)."""
    return {name: (math.fsum(v.values()) / len(v) if v else 0.0) for name, v in per_query.items()}


# Beside Judged@10 (every task reports it), the largest Judged@10 the qrels allow each query (its judged documents, at
# most 10, over the top 10 or the ranking when shorter): a benchmark that judges one document per query allows 0.1, so
# its Judged@10 is read against that, not against 1 (complexir.analysis.tables.judged_low).
JUDGED_CEILING_KEY = "judged_at_10_max"


def judged_ceiling_per_query(qrels: Mapping[str, Mapping[str, int]], rankings: Mapping[str, list[str]],
                             k: int = 10) -> dict[str, float]:
    """Per query of ``qrels``: the largest Judged@k a ranking as long as the one given could reach, min(judged
    documents, k, its length) / min(k, its length) (a query not ranked: over k, as Judged@k reads it)."""
    out = {}
    for qid, judged in qrels.items():
        length = len(rankings.get(qid, ()))
        depth = min(k, length) if length else k
        out[qid] = min(len(judged), depth) / depth
    return out
