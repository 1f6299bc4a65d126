"""Ad hoc measures with trec_eval semantics: nDCG@k, R@k, P@k, AP@k (map_cut_k), AP (map), RR@k.

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

from .measures import Measure, parse_measure
from .ranking import dedupe_rankings

__all__ = ["DEFAULT_ADHOC_MEASURES", "adhoc_per_query", "check_labels"]

logger = logging.getLogger(__name__)

DEFAULT_ADHOC_MEASURES = ("nDCG@10", "R@100", "AP@10")


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
            is_float = isinstance(lab, (float, np.floating))
            ok = isinstance(lab, (int, np.integer)) or (is_float and float(lab).is_integer())
            if isinstance(lab, bool) or not ok or lab < 0:
                raise ValueError(
                    f"{where}, document {doc!r}: label {lab!r} is not a non-negative integer"
                )
    return vals.astype(np.int64) if vals is not None else np.zeros(0, np.int64)


def _parse_all(measures: Sequence[str], kind: str) -> list[Measure]:
    if isinstance(measures, str):
        measures = [measures]
    parsed = [parse_measure(m) for m in measures]
    for m in parsed:
        if m.kind != kind:
            other = "coverage_per_query" if m.kind == "coverage" else "adhoc_per_query"
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
    parsed = _parse_all(measures, "adhoc")
    qids = list(qrels)
    depth = None if any(m.cutoff is None for m in parsed) else max((m.cutoff or 0) for m in parsed)
    ranked = dedupe_rankings(rankings, qids, depth)
    nq = len(qids)
    width = depth if depth is not None else max((len(r) for r in ranked.values()), default=0)
    width = max(width, 1)

    labels = np.zeros((nq, width), dtype=np.int64)  # labels of the ranked docs, 0 = unjudged/non-rel
    judged_labels: list[np.ndarray] = []
    for i, qid in enumerate(qids):
        judged = qrels[qid]
        judged_labels.append(check_labels(f"query {qid!r}", judged))
        docs = ranked[qid]
        if docs:
            get = judged.get
            labels[i, : len(docs)] = [get(d, 0) for d in docs]

    no_rel = [q for q, lab in zip(qids, judged_labels, strict=True) if not (lab >= 1).any()]
    if no_rel:
        logger.warning(
            "%d query(ies) have no relevant document in the qrels (e.g. %s); they score 0",
            len(no_rel), ", ".join(map(repr, no_rel[:5])),
        )
    missing = [q for q in qids if q not in rankings]
    if missing:
        logger.info("%d query(ies) of the qrels are missing from the run; they score 0", len(missing))

    ranks = np.arange(1, width + 1, dtype=np.float64)
    num_rel_cache: dict[int, np.ndarray] = {}

    def num_rel(t: int) -> np.ndarray:
        if t not in num_rel_cache:
            num_rel_cache[t] = np.array([int((lab >= t).sum()) for lab in judged_labels], dtype=np.float64)
        return num_rel_cache[t]

    ideal_cache: dict[int, np.ndarray] = {}

    def ideal(k: int) -> np.ndarray:
        if k not in ideal_cache:
            mat = np.zeros((nq, k), dtype=np.float64)
            for i, lab in enumerate(judged_labels):
                top = np.sort(lab[lab > 0])[::-1][:k]
                mat[i, : len(top)] = top
            ideal_cache[k] = mat
        return ideal_cache[k]

    def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        out = np.zeros_like(num, dtype=np.float64)
        np.divide(num, den, out=out, where=den > 0)
        return out

    results: dict[str, dict[str, float]] = {}
    for m in parsed:
        k = m.cutoff if m.cutoff is not None else width
        kk = min(k, width)
        t = int(m.params.get("rel", 1))
        rel = labels[:, :kk] >= t
        if m.family == "nDCG":
            gains = labels[:, :kk].astype(np.float64)
            disc = 1.0 / np.log2(ranks[:kk] + 1.0)
            dcg = gains @ disc
            if m.cutoff is None:
                kk_ideal = max((int((lab > 0).sum()) for lab in judged_labels), default=0) or 1
            else:
                kk_ideal = k
            ideal_gains = ideal(kk_ideal)
            idisc = 1.0 / np.log2(np.arange(2, kk_ideal + 2, dtype=np.float64))
            values = safe_div(dcg, ideal_gains @ idisc)
        elif m.family == "R":
            values = safe_div(rel.sum(axis=1).astype(np.float64), num_rel(t))
        elif m.family == "P":
            values = rel.sum(axis=1) / float(k)
        elif m.family == "AP":
            hits = np.cumsum(rel, axis=1)
            values = safe_div((rel * hits / ranks[:kk]).sum(axis=1), num_rel(t))
        elif m.family == "RR":
            first = rel.argmax(axis=1)
            values = np.where(rel.any(axis=1), 1.0 / (first + 1.0), 0.0)
        else:  # pragma: no cover - parse_measure guards this
            raise ValueError(m.name)
        results[m.name] = dict(zip(qids, values.tolist(), strict=True))
    return results


def mean_scores(per_query: dict[str, dict[str, float]]) -> dict[str, float]:
    """Arithmetic mean per measure over the queries present (0.0 for an empty measure)."""
    return {name: (math.fsum(v.values()) / len(v) if v else 0.0) for name, v in per_query.items()}
