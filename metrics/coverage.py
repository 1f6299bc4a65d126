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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import methodcaller

import numpy as np

from .adhoc import _parse_all, check_labels
from .measures import Measure, MeasureKind
from .ranking import dedupe_rankings, index_within_runs

__all__ = [
    "DEFAULT_COVERAGE_MEASURES",
    "NuggetJudgments",
    "coverage_per_query",
    "coverage_scores",
    "judged_in_id_order",
    "nugget_judgments",
    "parse_coverage_measures",
]

logger = logging.getLogger(__name__)

DEFAULT_COVERAGE_MEASURES = ("alpha_nDCG@20", "StRecall@20")
_FULL_FAMILIES = {"AP_IA", "NRBP", "nNRBP"}  # read the whole ranking
_CHUNK_ELEMENTS = 4_000_000  # bound on topics x pool docs x nuggets held at once


@dataclass
class _Pool:
    """Every topic's "doc contains nugget" pairs at one rel level, as flat arrays (no per-item objects).

    Rows number each topic's positive docs by doc id descending (ndeval's ideal tie rule), columns its
    supported nuggets in listing order. Ranked docs are given as (topic, rank, row) triples, only for
    the ranked docs that contain some nugget; every other ranked doc has gain 0 whatever it is.
    """

    pair_topic: np.ndarray  # per pair: topic index, row, column
    pair_row: np.ndarray
    pair_col: np.ndarray
    ndocs: np.ndarray  # per topic: positive docs, supported nuggets, listed nuggets
    nsup: np.ndarray
    listed: np.ndarray
    nrel_sub: np.ndarray  # per supported nugget, topic after topic: docs containing it
    sup_start: np.ndarray  # offsets of each topic's nuggets in nrel_sub
    hit_topic: np.ndarray  # per ranked positive doc, in ranking order: topic index, 0-based rank, row
    hit_rank: np.ndarray
    hit_row: np.ndarray


@dataclass
class NuggetJudgments:
    """Judgments as flat arrays, nugget after nugget within each topic, topic after topic (no per-item objects).

    ``docs`` are integer codes whose order is the doc ids' order (ndeval's ideal breaks ties by doc id), shared
    with the rankings' codes; nuggets keep their listing order within a topic.
    """

    labels: np.ndarray  # float64, validated non-negative integers
    docs: np.ndarray  # int64 doc codes, one per label
    docs_per_nugget: np.ndarray
    nuggets_per_topic: np.ndarray


def judged_in_id_order(
    ranked_doc: np.ndarray, judged_doc: np.ndarray, order: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Doc codes (non-negative integers) recoded for :func:`coverage_scores` (ranked, judged): ndeval's ideal ranking
    breaks ties by doc id, so judged docs get codes in id order, and a ranked doc judged nowhere -1. ``order(codes)``
    maps distinct ascending codes to integers ordered as their ids; only the judged docs' ids are compared.
    """
    size = int(max(ranked_doc.max(initial=-1), judged_doc.max(initial=-1))) + 1
    judged = np.zeros(size, dtype=bool)
    judged[judged_doc] = True
    new_code = np.full(size, -1, np.int64)  # a table, not a search: codes are small integers
    distinct = np.flatnonzero(judged)
    if len(distinct):
        new_code[distinct] = order(distinct)
    return new_code[ranked_doc], new_code[judged_doc]


def nugget_judgments(
    topic: np.ndarray,
    nugget: np.ndarray,
    doc: np.ndarray,
    label: np.ndarray,
    ntopics: int,
    on_conflict: Callable[[], object] | None = None,
) -> NuggetJudgments:
    """Judgments listed one per row, as integer codes (topic index, nugget, doc; doc codes in id order), in the
    dict readers' order: topics ascending, nuggets in order of first listing within their topic, docs in order of
    first listing within their nugget. A (topic, nugget, doc) listed again counts once with its largest label;
    ``on_conflict`` is called first if two of its labels differ (the file reader raises there, naming the line).
    """
    n = len(topic)
    labels = label.astype(np.float64)
    pair = topic * (int(nugget.max(initial=-1)) + 1) + nugget
    _, first_row, pair_id = np.unique(pair, return_index=True, return_inverse=True)
    pair_first = first_row[pair_id]  # first row of each row's (topic, nugget)
    span = int(doc.max(initial=-1)) + 1
    triple = pair_id.astype(np.int64) * span + doc
    order = np.lexsort((np.arange(n), triple))  # by (topic, nugget, doc), then by row
    same = triple[order][1:] == triple[order][:-1]
    repeat = np.zeros(n, dtype=bool)
    repeat[order[1:]] = same
    if same.any():
        group = np.flatnonzero(np.concatenate(([True], ~same)))  # each triple's first place in `order`
        in_order = labels[order]
        largest = np.maximum.reduceat(in_order, group)
        if on_conflict is not None and (largest != np.minimum.reduceat(in_order, group)).any():
            on_conflict()
        labels[order[group]] = largest
    keep = np.flatnonzero(~repeat)
    keep = keep[np.lexsort((keep, pair_first[keep], topic[keep]))]
    k_pair = pair_id[keep]
    starts = np.ones(len(keep), dtype=bool)
    starts[1:] = k_pair[1:] != k_pair[:-1]
    return NuggetJudgments(
        labels=labels[keep],
        docs=doc[keep],
        docs_per_nugget=np.diff(np.append(np.flatnonzero(starts), len(keep))),
        nuggets_per_topic=np.bincount(topic[keep][starts], minlength=ntopics),
    )


def _all_mappings(values: Iterable) -> bool:
    """Whether every value is a Mapping, checked once per distinct type (isinstance on an ABC is slow)."""
    return all(issubclass(kind, Mapping) for kind in set(map(type, values)))


def _read_judgments(judgments: Mapping, qids: list, ranked_docs: list) -> tuple[NuggetJudgments, np.ndarray]:
    """Flatten the nested dicts with C-level iteration (chain, fromiter): Python work is per nugget, not per label.

    Doc ids (judged and ranked) become codes in id order; returns the judgments and the ranked docs' codes.
    """
    topics = [judgments[q] for q in qids]
    every = None
    if _all_mappings(topics):
        every = list(chain.from_iterable(map(methodcaller("values"), topics)))  # each nugget's doc -> label
    if every is None or not _all_mappings(every):
        for q, nuggets in zip(qids, topics, strict=True):  # name the offending topic
            if not isinstance(nuggets, Mapping) or not _all_mappings(nuggets.values()):
                raise TypeError(f"topic {q!r}: judgments must map nugget id -> doc id -> label")
        raise TypeError("judgments must map topic id -> nugget id -> doc id -> label")  # pragma: no cover
    docs_per_nugget = np.fromiter(map(len, every), np.int64, len(every))
    total = int(docs_per_nugget.sum())
    try:
        labels = np.fromiter(chain.from_iterable(map(methodcaller("values"), every)), np.float64, total)
        ok = total == 0 or bool(labels.min() >= 0 and not np.any(labels % 1))  # NaN/inf fail both
    except (TypeError, ValueError):
        ok = False
    if not ok:  # name the offending topic, nugget and document
        for q in qids:
            for nid, docs in judgments[q].items():
                check_labels(f"topic {q!r}, nugget {nid!r}", docs)
        raise ValueError("invalid labels in the judgments")  # pragma: no cover - check_labels raised
    judged_docs = list(chain.from_iterable(every))
    code = {d: i for i, d in enumerate(sorted(set(judged_docs).union(ranked_docs)))}
    jd = NuggetJudgments(
        labels=labels,
        docs=np.fromiter(map(code.__getitem__, judged_docs), np.int64, total),
        docs_per_nugget=docs_per_nugget,
        nuggets_per_topic=np.fromiter(map(len, topics), np.int64, len(topics)),
    )
    return jd, np.fromiter(map(code.__getitem__, ranked_docs), np.int64, len(ranked_docs))


def _build_pool(jd: NuggetJudgments, ranked_docs: np.ndarray, ranked_lens: np.ndarray, rel: int) -> _Pool:
    """Binarise at ``rel``; index every topic's pool and its ranked positive docs as flat arrays."""
    ntop = len(jd.nuggets_per_topic)
    nnug_all = len(jd.docs_per_nugget)
    keep = jd.labels >= rel
    pos_docs = jd.docs[keep]  # doc codes, in label order
    nug_of = np.repeat(np.arange(nnug_all), jd.docs_per_nugget)[keep]  # global nugget of each positive
    topic_of_nug = np.repeat(np.arange(ntop), jd.nuggets_per_topic)
    pair_topic = topic_of_nug[nug_of]

    # columns: supported nuggets (at least one positive doc) numbered per topic in listing order
    support = np.bincount(nug_of, minlength=nnug_all)
    supported = support > 0
    sup_rank = np.cumsum(supported) - 1  # index among supported nuggets, over all topics
    nug_start = np.concatenate(([0], np.cumsum(jd.nuggets_per_topic))).astype(np.int64)
    sup_start = np.concatenate(([0], np.cumsum(supported)))[nug_start]
    pair_col = sup_rank[nug_of] - sup_start[pair_topic]

    # rows: each topic's positive docs by id descending (ndeval's ideal tie rule). One sorted key per
    # (topic, doc), topic ascending then doc code descending; a row is a key's place within its topic.
    span = int(max(pos_docs.max(initial=-1), ranked_docs.max(initial=-1))) + 1
    pair_key = pair_topic * span + (span - 1 - pos_docs)
    keys = np.unique(pair_key)
    key_topic = keys // span
    row_of_key = index_within_runs(key_topic)
    pair_row = row_of_key[np.searchsorted(keys, pair_key)]
    ranked_topic = np.repeat(np.arange(ntop), ranked_lens)
    ranked_key = ranked_topic * span + (span - 1 - ranked_docs)
    at = np.minimum(np.searchsorted(keys, ranked_key), max(len(keys) - 1, 0))
    # a code < 0 marks a ranked doc that is judged nowhere (it can contain no nugget)
    hit = (keys[at] == ranked_key) & (ranked_docs >= 0) if len(keys) else np.zeros(len(ranked_key), dtype=bool)
    return _Pool(
        pair_topic=pair_topic,
        pair_row=pair_row,
        pair_col=pair_col,
        ndocs=np.bincount(key_topic, minlength=ntop).astype(np.int64),
        nsup=np.diff(sup_start),
        listed=jd.nuggets_per_topic,
        nrel_sub=support[supported],
        sup_start=sup_start,
        hit_topic=ranked_topic[hit],
        hit_rank=index_within_runs(ranked_topic)[hit],
        hit_row=row_of_key[at[hit]],
    )


def _powers(base: float, n: int) -> np.ndarray:
    """base**0 .. base**n by repeated multiplication, the way ndeval accumulates them."""
    return np.cumprod(np.concatenate(([1.0], np.full(n, base))))


def _discounts(start: int, stop: int, log_discount: bool) -> np.ndarray:
    """Discounts of 0-based ranks start..stop-1: 1/log2(rank + 2) (alpha-DCG) or 1/(rank + 1) (ERR-IA)."""
    ranks = np.arange(start, stop, dtype=np.float64)
    return np.log(2.0) / np.log(ranks + 2.0) if log_discount else 1.0 / (ranks + 1.0)


def _ideal_ideal(base: float, k: int, log_discount: bool, chunk: int = 1 << 20) -> float:
    """sum_{r<k} base**r * discount(r): the "every nugget at every rank" normaliser of alpha_DCG and ERR_IA.

    In chunks, so that a huge k costs time, not memory, and stopping once base**r has underflowed to 0.
    """
    if k <= chunk:
        return float(_powers(base, k - 1) @ _discounts(0, k, log_discount))
    total, start, scale = 0.0, 0, 1.0
    while start < k and scale > 0.0:
        stop = min(k, start + chunk)
        powers = scale * _powers(base, stop - start - 1)
        total += float(powers @ _discounts(start, stop, log_discount))
        scale = float(powers[-1] * base)
        start = stop
    return total


def _greedy_ideal(
    pt: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], avail: np.ndarray, steps: int, base: float
) -> np.ndarray:
    """Gains of the greedy ideal ranking, (topics, steps).

    ``pt`` is the (topics, nuggets, docs) incidence, ``pairs`` its non-zeros as (topic, nugget, doc)
    arrays, in nugget order within each doc. Rows are sorted by doc id descending, so argmax (first
    maximum) resolves ties to the larger id. A nugget's weight base**c is multiplied up one factor per
    covering pick, the same products as ndeval's power table, and each doc's score is summed over its
    nuggets in order (``np.bincount`` adds in input order), as ndeval does: ties stay exact ties.
    Summing over the non-zeros only also skips the ~90% of the dense incidence that is zero.
    """
    ntop, nnug, ndoc = pt.shape
    pair_t, pair_c, pair_r = pairs
    weight_slot = pair_t * nnug + pair_c
    score_slot = pair_t * ndoc + pair_r
    gains = np.zeros((ntop, steps))
    weight = np.ones((ntop, nnug))
    blocked = np.where(avail, 0.0, -np.inf)  # added to every score: picked and padding docs never win
    ar = np.arange(ntop)
    for step in range(min(steps, ndoc)):
        score = np.bincount(score_slot, weights=weight.ravel()[weight_slot], minlength=ntop * ndoc)
        score = score.reshape(ntop, ndoc) + blocked
        pick = score.argmax(axis=1)
        best = score[ar, pick]
        ok = best >= 0  # -inf: the topic has no doc left
        if not ok.any():
            break
        gains[:, step] = np.where(ok, best, 0.0)
        blocked[ar, pick] = -np.inf
        covered = (pt[ar, :, pick] > 0) & ok[:, None]
        weight = np.where(covered, weight * base, weight)
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


def parse_coverage_measures(
    measures: Sequence[str | Measure], alpha: float, rel_level: int, denominator: str
) -> list[Measure]:
    """The measures parsed, and the options checked with each measure's own parameters (ValueError)."""
    parsed = _parse_all(measures, MeasureKind.COVERAGE)
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
    return parsed


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
    parsed = parse_coverage_measures(measures, alpha, rel_level, denominator)
    qids = list(judgments)
    full = any(m.family in _FULL_FAMILIES for m in parsed)
    depth = None if full else max(m.cutoff or 1 for m in parsed)
    ranked = dedupe_rankings(rankings, qids, depth)

    ranked_lists = [ranked[q] for q in qids]
    jd, ranked_docs = _read_judgments(judgments, qids, list(chain.from_iterable(ranked_lists)))
    ranked_lens = np.fromiter(map(len, ranked_lists), np.int64, len(qids))
    values = coverage_scores(jd, ranked_docs, ranked_lens, parsed, qids, alpha=alpha, rel_level=rel_level,
                             denominator=denominator)
    # keep the judgments' topic order in every result
    return {name: dict(zip(qids, vec.tolist(), strict=True)) for name, vec in values.items()}


def coverage_scores(
    jd: NuggetJudgments,
    ranked_docs: np.ndarray,
    ranked_lens: np.ndarray,
    measures: Sequence[str | Measure],
    qids: Sequence[str],
    *,
    alpha: float = 0.5,
    rel_level: int = 1,
    denominator: str = "supported",
) -> dict[str, np.ndarray]:
    """The maths on arrays: measure name -> one value per topic (in ``qids`` order).

    ``ranked_docs`` holds each topic's ranking as doc codes (the judgments' code space, -1 for a doc judged
    nowhere), topic after topic, repeats removed and at least as deep as the measures read; ``ranked_lens``
    their lengths.
    """
    parsed = _parse_all(list(measures), MeasureKind.COVERAGE)
    by_rel: dict[int, list[Measure]] = {}
    for m in parsed:
        by_rel.setdefault(int(m.params.get("rel", rel_level)), []).append(m)
    values = {m.name: np.zeros(len(qids)) for m in parsed}
    for rel, group in by_rel.items():
        pool = _build_pool(jd, ranked_docs, ranked_lens, rel)
        empty = np.flatnonzero(pool.nsup == 0).tolist()
        if empty:
            logger.warning(
                "%d topic(s) have no document containing any nugget at rel >= %d (e.g. %s); they score 0",
                len(empty), rel, ", ".join(repr(qids[i]) for i in empty[:5]),
            )
        width = int(pool.nsup.max(initial=0))
        for idx in _chunks(pool.ndocs.tolist(), width):
            chunk = np.array(idx, dtype=np.int64)
            for name, vec in _score_chunk(pool, chunk, group, alpha, denominator).items():
                values[name][chunk] = vec
    return values


def _score_chunk(
    pool: _Pool, chunk: np.ndarray, group: list[Measure], default_alpha: float, denominator: str
) -> dict[str, np.ndarray]:
    """Scores of the topics ``chunk`` (indices into the pool's topics), in that order."""
    ntop = len(chunk)
    local = np.full(len(pool.ndocs), -1, dtype=np.int64)  # topic index -> position in the chunk
    local[chunk] = np.arange(ntop)
    ndocs = pool.ndocs[chunk]
    nn = pool.nsup[chunk]
    ndoc = int(ndocs.max(initial=0))
    nnug = int(nn.max(initial=0))
    # pool: (topics, nuggets, docs + 1) with an all-zero last doc column for padding
    pt = np.zeros((ntop, max(nnug, 1), ndoc + 1), dtype=np.float64)
    pair_t = local[pool.pair_topic]
    mine = pair_t >= 0
    pairs = (pair_t[mine], pool.pair_col[mine], pool.pair_row[mine])  # still in nugget order per doc
    pt[pairs] = 1.0
    avail = np.arange(ndoc)[None, :] < ndocs[:, None]
    nrel_sub = np.zeros((ntop, max(nnug, 1)))
    nug_t = np.repeat(np.arange(ntop), nn)
    nug_j = index_within_runs(nug_t)  # column of each of the chunk's nuggets within its topic
    nrel_sub[nug_t, nug_j] = pool.nrel_sub[np.repeat(pool.sup_start[chunk], nn) + nug_j]
    actual = nn.astype(np.float64)
    listed = pool.listed[chunk].astype(np.float64)
    # ranked positive docs as (topics, hits) matrices: rank (padded with a huge value) and row (padded
    # with the all-zero doc column); hits stay in ranking order within each topic
    hit_t = local[pool.hit_topic]
    sel = hit_t >= 0
    hit_t = hit_t[sel]
    slot = index_within_runs(hit_t)  # a topic's hits are contiguous: the flat arrays go topic by topic
    rmax = int(np.bincount(hit_t, minlength=ntop).max(initial=0))
    big = 1 << 40
    rpos = np.full((ntop, max(rmax, 1)), big, dtype=np.int64)
    rrow = np.full((ntop, max(rmax, 1)), ndoc, dtype=np.int64)
    rpos[hit_t, slot] = pool.hit_rank[sel]
    rrow[hit_t, slot] = pool.hit_row[sel]
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

    gains_cache: dict[float, np.ndarray] = {}
    ideal_cache: dict[float, np.ndarray] = {}
    pool_docs = pt[:, :, :ndoc] if ndoc else None

    def wpow(a: float) -> np.ndarray:
        return _powers(1.0 - a, max(rmax, ndoc) + 1)  # indexed by coverage counts <= rmax

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
                have = _greedy_ideal(pool_docs, pairs, avail, steps, 1.0 - a)
            ideal_cache[a] = have
        return have[:, :steps]

    out: dict[str, np.ndarray] = {}
    for m in group:
        a = float(m.params.get("alpha", default_alpha))
        k = m.cutoff or 0
        top = valid & (rpos < k) if k else valid
        fam = m.family
        if fam in ("alpha_DCG", "alpha_nDCG", "ERR_IA", "nERR_IA"):
            log_discount = fam in ("alpha_DCG", "alpha_nDCG")
            disc_run = np.log(2.0) / np.log(rpos_c + 2.0) if log_discount else 1.0 / rank1
            raw = (run_gains(a) * disc_run * top).sum(axis=1)
            if fam in ("alpha_nDCG", "nERR_IA"):
                steps = min(k, max(ndoc, 1))  # the ideal has no gain past the pool: no allocation for k
                ideal = ideal_gains(a, steps) @ _discounts(0, steps, log_discount)
                out[m.name] = div(raw, ideal, raw > 0)
            else:
                ideal_ideal = actual * _ideal_ideal(1.0 - a, k, log_discount) if k >= 2 else np.ones(ntop)
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
