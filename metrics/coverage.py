"""Coverage (novelty and diversity) measures with ndeval semantics, vectorised over topics.

alpha_nDCG@k, alpha_DCG@k, StRecall@k, ERR_IA@k, nERR_IA@k, P_IA@k, AP_IA, NRBP, nNRBP.

Written by hand rather than calling pyndeval / ir_measures at run time: pyndeval is a C extension
limited to k <= 20, quadratic in the number of distinct nugget ids (one id table shared by all topics),
breaks score ties by doc id ascending, and ir_measures silently zeroes measures when one call mixes
alpha or rel values. Here any alpha and k work in one call, and only the top k of each ranking (plus,
for the ideal, k greedy steps) is ever touched. Tests pin the values to pyndeval / ir_measures and to
ndeval's published test vector.

Conventions (ndeval 4.5):
- judgments: topic -> nugget -> doc -> label; label >= rel means "the doc contains the nugget";
  grades are binarised. Nuggets without any supporting doc are ignored ("supported" denominator) except
  by StRecall with ``denominator="all"``.
- gain at rank r: G(r) = sum_s J(d_r, s) * (1 - alpha)^{c_s}, c_s = docs above r containing s.
- ideal: greedy over the judged pool, each step takes the largest current gain, ties to the larger doc id;
  the greedy ideal is not optimal, so alpha_nDCG can slightly exceed 1.
- alpha_DCG@k and ERR_IA@k are divided by the "ideal ideal" (every nugget covered at every rank), as
  ndeval does for k >= 2 (ndeval leaves k = 1 unnormalised; kept for agreement).
- a topic without supporting documents scores 0 and is reported; a topic missing from the run scores 0.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress

import numpy as np

from .adhoc import _parse_all, check_labels
from .measures import Measure
from .ranking import dedupe_rankings

__all__ = ["DEFAULT_COVERAGE_MEASURES", "coverage_per_query"]

logger = logging.getLogger(__name__)

DEFAULT_COVERAGE_MEASURES = ("alpha_nDCG@20", "StRecall@20")
_ALPHA_FAMILIES = {"alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP"}
_FULL_FAMILIES = {"AP_IA", "NRBP", "nNRBP"}  # read the whole ranking
_CHUNK_ELEMENTS = 4_000_000  # bound on topics x pool docs x nuggets held at once


@dataclass
class _Topic:
    rowmap: dict[str, int]  # positive doc -> row; rows ordered by doc id descending (ideal tie rule)
    rows: list[int]  # (row, column) of every "doc contains nugget" pair
    cols: np.ndarray
    nrel_sub: np.ndarray  # per supported nugget (column): docs containing it
    listed: int  # every nugget listed for the topic

    @property
    def ndocs(self) -> int:
        return len(self.rowmap)


def _prepare_all(judgments: Mapping, qids: list, rel: int) -> list[_Topic]:
    """Binarise every topic's judgments at ``rel`` in one pass (one numpy array for all labels)."""
    nug_per_topic, docs_per_nug = [], []
    for q in qids:
        nuggets = judgments[q]
        if not isinstance(nuggets, Mapping) or not all(isinstance(d, Mapping) for d in nuggets.values()):
            raise TypeError(f"topic {q!r}: judgments must map nugget id -> doc id -> label")
        nug_per_topic.append(len(nuggets))
        docs_per_nug.extend(len(d) for d in nuggets.values())
    total = sum(docs_per_nug)
    every = [d for q in qids for d in judgments[q].values()]
    try:
        labels = np.fromiter(chain.from_iterable(d.values() for d in every), np.float64, total)
        ok = total == 0 or bool(labels.min() >= 0 and not np.any(labels % 1))  # NaN/inf fail both
    except (TypeError, ValueError):
        ok = False
    if not ok:  # name the offending topic, nugget and document
        for q in qids:
            for nid, docs in judgments[q].items():
                check_labels(f"topic {q!r}, nugget {nid!r}", docs)
        raise ValueError("invalid labels in the judgments")  # pragma: no cover - check_labels raised
    keep = labels >= rel
    pos_docs = list(compress(chain.from_iterable(every), keep.tolist()))
    nug_of = np.repeat(np.arange(len(docs_per_nug)), docs_per_nug)[keep]  # global nugget of each positive
    support = np.bincount(nug_of, minlength=len(docs_per_nug))
    supported = support > 0
    sup_rank = np.cumsum(supported) - 1  # index among supported nuggets, over all topics
    nug_start = np.concatenate(([0], np.cumsum(nug_per_topic))).astype(np.int64)
    sup_start = np.concatenate(([0], np.cumsum(supported)))[nug_start]
    pos_start = np.concatenate(([0], np.cumsum(support)))[nug_start].tolist()
    local_col = sup_rank[nug_of]
    topics = []
    for i in range(len(qids)):
        lo, hi = pos_start[i], pos_start[i + 1]
        docs = pos_docs[lo:hi]
        rowmap = {d: r for r, d in enumerate(sorted(set(docs), reverse=True))}
        cols = local_col[lo:hi] - sup_start[i]
        nrel = support[nug_start[i] : nug_start[i + 1]]
        topics.append(_Topic(rowmap, [rowmap[d] for d in docs], cols, nrel[nrel > 0], nug_per_topic[i]))
    return topics


def _powers(base: float, n: int) -> np.ndarray:
    """base**0 .. base**n by repeated multiplication, the way ndeval accumulates them."""
    return np.cumprod(np.concatenate(([1.0], np.full(n, base))))


def _exact_sums(base: float, steps: int) -> bool:
    """True when sums of base**c (c < steps) are exact in any order: base 0, 1 or 2**-j with j*steps < 53."""
    if base in (0.0, 1.0):
        return True
    mantissa, exponent = math.frexp(base)
    return mantissa == 0.5 and (1 - exponent) * steps < 53


def _greedy_ideal(pt: np.ndarray, avail: np.ndarray, steps: int, wpow: np.ndarray) -> np.ndarray:
    """Gains of the greedy ideal ranking, (topics, steps). ``pt`` is (topics, nuggets, docs) float.

    Rows are sorted by doc id descending, so argmax (first maximum) resolves ties to the larger id.
    Scores are summed nugget by nugget, in order, as ndeval does, so exact ties stay exact.
    """
    ntop, nnug, ndoc = pt.shape
    gains = np.zeros((ntop, steps))
    counts = np.zeros((ntop, nnug), dtype=np.int64)
    avail = avail.copy()
    ar = np.arange(ntop)
    exact = _exact_sums(float(wpow[1]) if len(wpow) > 1 else 1.0, min(steps, ndoc) + 1)
    for step in range(min(steps, ndoc)):
        wv = wpow[counts]
        if exact:  # every partial sum is exact: a batched mat-vec gives ndeval's numbers bit for bit
            score = np.matmul(wv[:, None, :], pt)[:, 0, :]
        else:  # sum nugget by nugget, in ndeval's order, so float ties resolve as ndeval's do
            score = np.zeros((ntop, ndoc))
            for s in range(nnug):
                score += pt[:, s, :] * wv[:, s : s + 1]
        score[~avail] = -1.0
        pick = score.argmax(axis=1)
        best = score[ar, pick]
        ok = best >= 0
        gains[:, step] = np.where(ok, best, 0.0)
        avail[ar[ok], pick[ok]] = False
        counts[ok] += pt[ar[ok], :, pick[ok]].astype(np.int64)
        if not avail.any():
            break
    return gains


def _chunks(sizes: list[int], width: int) -> list[list[int]]:
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    out: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        if cur and (len(cur) + 1) * (sizes[i] + 1) * max(width, 1) > _CHUNK_ELEMENTS:
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def coverage_per_query(
    judgments: Mapping[str, Mapping[str, Mapping[str, int]]],
    rankings: Mapping[str, Sequence[str]],
    measures: Sequence[str] = DEFAULT_COVERAGE_MEASURES,
    *,
    alpha: float = 0.5,
    rel_level: int = 1,
    denominator: str = "supported",
) -> dict[str, dict[str, float]]:
    """measure name -> topic id -> value, over every topic in ``judgments`` (topic -> nugget -> doc -> label).

    ``alpha`` and ``rel_level`` are defaults that a measure's own parameters override
    (``alpha_nDCG(alpha=0.9)@20``, ``StRecall(rel=2)@20``); ``denominator`` ("supported" or "all")
    chooses StRecall's denominator: nuggets with a supporting doc (ndeval) or every listed nugget.
    """
    parsed = _parse_all(measures, "coverage")
    if not (0.0 <= float(alpha) <= 1.0):
        raise ValueError(f"alpha must lie in [0, 1], got {alpha!r}")
    if denominator not in ("supported", "all"):
        raise ValueError(f"denominator must be 'supported' or 'all', got {denominator!r}")
    for m in parsed:
        a = m.params.get("alpha", alpha)
        b = m.params.get("beta", 0.5)
        r = m.params.get("rel", rel_level)
        if not (0.0 <= a <= 1.0) or not (0.0 <= b <= 1.0):
            raise ValueError(f"measure {m.name!r}: alpha and beta must lie in [0, 1]")
        if int(r) != r or r < 1:
            raise ValueError(f"measure {m.name!r}: rel must be an integer >= 1, got {r!r}")
    qids = list(judgments)
    full = any(m.family in _FULL_FAMILIES for m in parsed)
    depth = None if full else max(m.cutoff or 1 for m in parsed)
    ranked = dedupe_rankings(rankings, qids, depth)

    results: dict[str, dict[str, float]] = {m.name: {} for m in parsed}
    by_rel: dict[int, list[Measure]] = {}
    for m in parsed:
        by_rel.setdefault(int(m.params.get("rel", rel_level)), []).append(m)

    for rel, group in by_rel.items():
        topics = _prepare_all(judgments, qids, rel)
        empty = [q for q, t in zip(qids, topics, strict=True) if not len(t.nrel_sub)]
        if empty:
            logger.warning(
                "%d topic(s) have no document containing any nugget at rel >= %d (e.g. %s); they score 0",
                len(empty), rel, ", ".join(map(repr, empty[:5])),
            )
        width = max((len(t.nrel_sub) for t in topics), default=0)
        for idx in _chunks([t.ndocs for t in topics], width):
            values = _score_chunk(
                [topics[i] for i in idx], [ranked[qids[i]] for i in idx], group, alpha, denominator
            )
            for name, vec in values.items():
                for i, v in zip(idx, vec.tolist(), strict=True):
                    results[name][qids[i]] = v
    # keep the judgments' topic order in every result
    return {name: {q: per[q] for q in qids} for name, per in results.items()}


def _score_chunk(
    topics: list[_Topic], docs_lists: list[list[str]], group: list[Measure], default_alpha: float,
    denominator: str,
) -> dict[str, np.ndarray]:
    ntop = len(topics)
    ndoc = max((t.ndocs for t in topics), default=0)
    nnug = max((len(t.nrel_sub) for t in topics), default=0)
    # pool: (topics, nuggets, docs + 1) with an all-zero last doc column for padding
    pt = np.zeros((ntop, max(nnug, 1), ndoc + 1), dtype=np.float64)
    counts = [len(t.rows) for t in topics]
    if sum(counts):
        tix = np.repeat(np.arange(ntop), counts)
        cols = np.concatenate([t.cols for t in topics], dtype=np.int64, casting="unsafe")
        rows = np.concatenate([t.rows for t in topics], dtype=np.int64, casting="unsafe")
        pt[tix, cols, rows] = 1.0
    avail = np.arange(ndoc)[None, :] < np.array([t.ndocs for t in topics])[:, None]
    nrel_sub = np.zeros((ntop, max(nnug, 1)))
    nn = [len(t.nrel_sub) for t in topics]
    if sum(nn):
        nrel_sub[np.repeat(np.arange(ntop), nn), np.concatenate([np.arange(n) for n in nn])] = np.concatenate(
            [t.nrel_sub for t in topics], dtype=np.float64, casting="unsafe"
        )
    actual = np.array(nn, dtype=np.float64)
    listed = np.array([t.listed for t in topics], dtype=np.float64)
    pos_lists: list[list[int]] = []
    row_lists: list[list[int]] = []
    for t, docs in zip(topics, docs_lists, strict=True):
        get = t.rowmap.get
        rows = [get(doc) for doc in docs]
        pos_lists.append([p for p, r in enumerate(rows) if r is not None])
        row_lists.append([r for r in rows if r is not None])
    rmax = max((len(p) for p in pos_lists), default=0)
    big = 1 << 40
    rpos = np.full((ntop, max(rmax, 1)), big, dtype=np.int64)
    rrow = np.full((ntop, max(rmax, 1)), ndoc, dtype=np.int64)
    for i, (p, r) in enumerate(zip(pos_lists, row_lists, strict=True)):
        rpos[i, : len(p)] = p
        rrow[i, : len(r)] = r
    run = pt[np.arange(ntop)[:, None], :, rrow]  # (topics, relevant retrieved, nuggets)
    valid = rpos < big
    rpos_c = np.where(valid, rpos, 0)
    rank1 = rpos_c + 1.0
    prior = (np.cumsum(run, axis=1) - run).astype(np.int64)  # nugget coverage above each rank
    has_sub = actual > 0

    def div(num: np.ndarray, den: np.ndarray, cond: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros(ntop)
        mask = den > 0 if cond is None else (cond & (den > 0))
        np.divide(num, den, out=out, where=mask)
        return out

    max_k = max((m.cutoff or 0) for m in group)
    gains_cache: dict[float, np.ndarray] = {}
    ideal_cache: dict[float, np.ndarray] = {}
    pool_docs = pt[:, :, :ndoc] if ndoc else None

    def wpow(a: float) -> np.ndarray:
        return _powers(1.0 - a, max(rmax, ndoc, max_k) + 1)

    def run_gains(a: float) -> np.ndarray:
        if a not in gains_cache:
            gains_cache[a] = (run * wpow(a)[prior]).sum(axis=2) * valid
        return gains_cache[a]

    def ideal_gains(a: float, steps: int) -> np.ndarray:
        have = ideal_cache.get(a)
        if have is None or have.shape[1] < steps:
            if pool_docs is None:
                have = np.zeros((ntop, steps))
            else:
                have = _greedy_ideal(pool_docs, avail, steps, wpow(a))
            ideal_cache[a] = have
        return have[:, :steps]

    out: dict[str, np.ndarray] = {}
    for m in group:
        a = float(m.params.get("alpha", default_alpha))
        k = m.cutoff or 0
        top = valid & (rpos < k) if k else valid
        fam = m.family
        if fam in ("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA"):
            if fam in ("alpha_DCG", "alpha_nDCG"):
                disc_run = np.log(2.0) / np.log(rpos_c + 2.0)
                disc_k = np.log(2.0) / np.log(np.arange(k) + 2.0)
            else:
                disc_run = 1.0 / rank1
                disc_k = 1.0 / (np.arange(k) + 1.0)
            raw = (run_gains(a) * disc_run * top).sum(axis=1)
            if fam in ("alpha_nDCG", "nERR_IA"):
                ideal = ideal_gains(a, k) @ disc_k
                out[m.name] = div(raw, ideal, raw > 0)
            else:
                ideal_ideal = actual * float(_powers(1.0 - a, k - 1) @ disc_k) if k >= 2 else np.ones(ntop)
                out[m.name] = div(raw, ideal_ideal, has_sub)
        elif fam == "StRecall":
            covered = (run * top[:, :, None]).any(axis=1).sum(axis=1).astype(np.float64)
            den = listed if denominator == "all" else actual
            out[m.name] = div(covered, den)
        elif fam == "P_IA":
            out[m.name] = div((run.sum(axis=2) * top).sum(axis=1), k * actual)
        elif fam == "AP_IA":
            hits = np.cumsum(run, axis=1)
            per_nugget = (run * hits / rank1[:, :, None] * valid[:, :, None]).sum(axis=1)
            ratio = np.zeros_like(per_nugget)
            np.divide(per_nugget, nrel_sub, out=ratio, where=nrel_sub > 0)
            out[m.name] = div(ratio.sum(axis=1), actual)
        elif fam in ("NRBP", "nNRBP"):
            b = float(m.params.get("beta", 0.5))
            bpow = _powers(b, max(int(rpos_c.max()), ndoc) + 1)
            score = (run_gains(a) * bpow[rpos_c] * valid).sum(axis=1)
            if fam == "NRBP":
                out[m.name] = div(score * (1.0 - (1.0 - a) * b), actual)
            else:
                ideal = ideal_gains(a, max(ndoc, 1)) @ bpow[: max(ndoc, 1)]
                out[m.name] = div(score, ideal, has_sub)
        else:  # pragma: no cover
            raise ValueError(m.name)
    return out
