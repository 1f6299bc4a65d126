"""The statistics of a comparison, on per-query scores: intervals, paired tests and their correction.

* :func:`bootstrap_means`: the paired bootstrap over queries (the same resampled queries for every system), from
  which :func:`percentile_interval` / :func:`percentile_intervals` take a 95% interval of each system's mean;
* :func:`randomisation_pvalues`: two-sided paired randomisation tests (sign flips of each query's pair) of many pairs
  at once, exact when there are few queries, with scipy's ``permutation_test``'s draws and p-values; with
  :func:`ttest_pvalues` (scipy's ``ttest_rel``) they make :func:`paired_tests_rows` (many pairs on the same queries)
  and :func:`paired_tests` (one pair);
* :func:`holm`: Holm's step-down adjustment over a family of p-values (:func:`adjust_family`: over a family of
  tests);
* :func:`compare_systems`: all of it for a (systems × queries) matrix of one task and measure: intervals and every
  pair's p-values, Holm-adjusted.

The draws depend only on the number of queries and the seed (:data:`SEED`), so one draw serves every pair, system
and measure of a task, and the same inputs give the same numbers. ``complexir compare`` and ``complexir report
--baseline`` both use this module.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

#: One value per query: a list or a 1-d array.
Values = Sequence[float] | np.ndarray

logger = logging.getLogger(__name__)

N_RESAMPLES = 10_000  # randomisation test (exact below 2**13 queries' worth of sign patterns)
N_BOOTSTRAP = 10_000
SEED = 0
LEVEL = 0.95
_CELLS_PER_BATCH = 4_000_000  # bootstrap resamples drawn in batches of at most this many query indices


def common_queries(*scores: dict[str, float]) -> list[str]:
    """The queries every one of ``scores`` has, sorted; logs when some have others too."""
    shared = set(scores[0]).intersection(*scores[1:]) if scores else set()
    if any(len(s) != len(shared) for s in scores):
        logger.warning("paired statistics on the %d queries all runs scored (%s)", len(shared),
                       " vs ".join(str(len(s)) for s in scores))
    return sorted(shared)


def bootstrap_means(values: np.ndarray, *, seed: int = SEED, n_resamples: int = N_BOOTSTRAP) -> np.ndarray:
    """``values`` is (systems, queries); the mean of each system over ``n_resamples`` resamples of the queries drawn
    with replacement, the same resamples for every system (paired): (systems, n_resamples).

    Any number of rows share one draw (every system and measure of a task at once): each batch of resamples becomes
    a (resamples, queries) matrix of how often each query was drawn, and the means one matrix product with ``values``,
    instead of gathering every row's resampled values."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[None, :]
    n = values.shape[1]
    if n == 0:
        return np.full((values.shape[0], n_resamples), np.nan)
    rng = np.random.default_rng(seed)
    out = np.empty((values.shape[0], n_resamples))
    batch = max(1, _CELLS_PER_BATCH // n)
    for start in range(0, n_resamples, batch):
        stop = min(start + batch, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        idx += (np.arange(stop - start) * n)[:, None]
        counts = np.bincount(idx.ravel(), minlength=(stop - start) * n).reshape(stop - start, n)
        out[:, start:stop] = (counts.astype(np.float64) @ values.T).T / n
    return out


def percentile_interval(resampled: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The percentile interval of one system's bootstrap means (``level`` coverage, two-sided)."""
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(resampled, [tail, 100.0 - tail])
    return float(low), float(high)


def percentile_intervals(resampled: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """:func:`percentile_interval` of each row of ``resampled`` (rows, resamples): (rows, 2)."""
    tail = (1.0 - level) / 2.0 * 100.0
    return np.percentile(resampled, [tail, 100.0 - tail], axis=1).T


def _flips(n: int, seed: int, n_resamples: int) -> Iterator[np.ndarray]:
    """Batches of sign patterns over ``n`` queries, (patterns, n) with True where a query's pair is swapped.

    Every one of the 2**n patterns when ``n_resamples`` covers them (an exact test); else ``n_resamples`` random
    ones, drawn as scipy's ``permutation_test(permutation_type="samples", random_state=seed)`` draws them (for each
    resample and query two uniforms, the pair swapped when the first is larger), so the p-values are scipy's."""
    batch = max(1, _CELLS_PER_BATCH // max(n, 1))
    if n_resamples >= 2 ** n:
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, 2 ** n, batch):
            codes = np.arange(start, min(start + batch, 2 ** n), dtype=np.int64)
            yield ((codes[:, None] >> bits) & 1).astype(bool)
        return
    rng = np.random.RandomState(seed)
    for start in range(0, n_resamples, batch):
        uniforms = rng.random_sample((min(batch, n_resamples - start), n, 2))
        yield uniforms[..., 0] > uniforms[..., 1]


def randomisation_pvalues(diffs: np.ndarray, *, weights: np.ndarray | None = None, seed: int = SEED,
                          n_resamples: int = N_RESAMPLES) -> np.ndarray:
    """Two-sided paired randomisation (sign-flip) tests of many pairs at once, with one draw of sign patterns shared
    by every row: ``diffs`` is (tests, queries), each row one pair's per-query differences on the same queries.

    The statistic is the mean difference (with ``weights``: the weighted sum of the differences); the p-value is
    scipy's ``permutation_test``'s, paired samples, two-sided (twice the smaller one-sided share, each counting the
    observed pattern and with scipy's relative tolerance for ties), exact when 2**queries <= ``n_resamples``. A row
    with no difference (or under 2 queries) gets 1.0. The null statistics of a batch of patterns are one matrix
    product, (patterns, queries) x (queries, tests), so memory stays bounded for any number of resamples."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[None, :]
    n_tests, n = d.shape
    terms = d / n if weights is None else d * np.asarray(weights, dtype=np.float64)[None, :]
    out = np.ones(n_tests)
    live = np.flatnonzero(np.any(d != 0, axis=1)) if n >= 2 else np.array([], dtype=np.int64)
    if len(live) == 0:
        return out
    terms = terms[live]
    observed = terms.sum(axis=1)  # a pattern's statistic is this less twice the swapped queries' terms
    gamma = np.abs(np.finfo(np.float64).eps * 100 * observed)  # scipy's tolerance for theoretically equal values
    less = np.zeros(len(live), dtype=np.int64)
    greater = np.zeros(len(live), dtype=np.int64)
    total = 0
    for swapped in _flips(n, seed, n_resamples):
        null = observed - 2.0 * (swapped.astype(np.float64) @ terms.T)  # (patterns, tests)
        less += np.count_nonzero(null <= observed + gamma, axis=0)
        greater += np.count_nonzero(null >= observed - gamma, axis=0)
        total += len(swapped)
    adjustment = 0 if n_resamples >= 2 ** n else 1  # a sampled test counts the observed pattern (scipy's)
    p = 2 * np.minimum(less + adjustment, greater + adjustment) / (total + adjustment)
    out[live] = np.clip(p, 0.0, 1.0)
    return out


def ttest_pvalues(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`ttest_p` of each row pair of ``x`` and ``y`` (tests, queries), in one scipy call."""
    from scipy import stats

    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    if x.shape[1] < 2:
        return np.full(x.shape[0], math.nan)
    same = np.all(x == y, axis=1)
    out = np.ones(x.shape[0])
    if not same.all():
        p = np.asarray(stats.ttest_rel(x[~same], y[~same], axis=1).pvalue, dtype=np.float64)
        out[~same] = np.where(np.isfinite(p), p, 1.0)
    return out


def paired_tests_rows(x: np.ndarray, y: np.ndarray, *, weights: np.ndarray | None = None, seed: int = SEED,
                      n_resamples: int = N_RESAMPLES) -> dict[str, np.ndarray]:
    """:func:`paired_tests` of each row pair of ``x`` and ``y`` (tests, queries: every row on the same queries), with
    one draw of sign flips for all of them: ``{"delta", "p_randomisation", "p_ttest"}``, one value per row."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    if x.shape != y.shape:
        raise ValueError(f"paired tests need two equal-shape matrices, got {x.shape} and {y.shape}")
    diffs = x - y
    n = x.shape[1]
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if w is not None and w.shape != (n,):
        raise ValueError(f"paired tests need one weight per query, got {w.shape} for {n} queries")
    if n == 0:
        delta = np.full(x.shape[0], math.nan)
    else:
        delta = (w * diffs).sum(axis=1) if w is not None else diffs.mean(axis=1)
    p_randomisation = randomisation_pvalues(diffs, weights=w, seed=seed, n_resamples=n_resamples)
    if w is not None:
        p_ttest = np.full(x.shape[0], math.nan)
    elif n < 2:
        p_ttest = np.ones(x.shape[0])  # nothing to test
    else:
        p_ttest = ttest_pvalues(x, y)
    return {"delta": delta, "p_randomisation": p_randomisation, "p_ttest": p_ttest}


def paired_tests(a: Values, b: Values, *, weights: Values | None = None,
                 seed: int = SEED, n_resamples: int = N_RESAMPLES) -> dict[str, float]:
    """Two-sided paired tests of ``a`` against ``b`` (one value per query, in the same order).

    ``{"n", "delta", "p_randomisation", "p_ttest"}``: ``delta`` is the difference of the (``weights``-weighted) means,
    ``p_randomisation`` scipy's permutation test of paired samples (:func:`randomisation_pvalues`: 1.0 when there is
    no difference), ``p_ttest`` scipy's ``ttest_rel`` (:func:`ttest_p`). With ``weights`` (a macro average over tasks:
    each query weighted by 1 / (its task's queries × tasks)) the randomisation statistic is the weighted mean
    difference, flips staying within each query, and no t-test is made here (NaN): a t-test of a macro average is one
    over the task means, which the caller makes. Many pairs on the same queries: :func:`paired_tests_rows`.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired tests need two equal-length vectors, got {x.shape} and {y.shape}")
    rows = paired_tests_rows(x, y, weights=None if weights is None else np.asarray(weights, dtype=np.float64),
                             seed=seed, n_resamples=n_resamples)
    return {"n": int(len(x)), **{k: float(v[0]) for k, v in rows.items()}}


@dataclass
class SystemsComparison:
    """:func:`compare_systems`' answer for S systems: ``means`` and ``ci95`` (S, 2) per system; per tested pair (in
    ``pairs``, (i, j) indices into the systems) its ``delta`` (mean of i minus mean of j), randomisation and t-test
    p-values, and both Holm-adjusted over the pairs tested here (the family)."""

    means: np.ndarray
    ci95: np.ndarray
    pairs: list[tuple[int, int]]
    delta: np.ndarray
    p_randomisation: np.ndarray
    p_ttest: np.ndarray
    p_randomisation_holm: np.ndarray
    p_ttest_holm: np.ndarray


def compare_systems(scores: np.ndarray, *, baseline: int | None = None, seed: int = SEED,
                    n_resamples: int = N_RESAMPLES, n_bootstrap: int = N_BOOTSTRAP,
                    level: float = LEVEL) -> SystemsComparison:
    """Intervals and paired tests of many systems on one task and measure, from their per-query scores: ``scores`` is
    (systems, queries), every system on the same queries in the same order.

    Each system's mean and its ``level`` percentile interval (the paired bootstrap, one draw for all systems); every
    pair (i < j), or every system against ``baseline`` (i, baseline), tested with the paired randomisation test (one
    draw of sign flips for all pairs) and the paired t-test, each Holm-adjusted over the pairs."""
    values = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    n_systems, n = values.shape
    if baseline is not None and not 0 <= baseline < n_systems:
        raise ValueError(f"baseline {baseline} is not one of the {n_systems} systems")
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        system, query = bad[0].tolist()
        raise ValueError(f"system {system}, query {query}: score {float(values[system, query])!r} is not finite "
                         f"({len(bad)} such score(s)); every system needs a score on every query")
    if n == 0:
        means = np.full(n_systems, math.nan)
        ci95 = np.full((n_systems, 2), math.nan)
    else:
        means = values.mean(axis=1)
        ci95 = percentile_intervals(bootstrap_means(values, seed=seed, n_resamples=n_bootstrap), level)
    if baseline is None:
        pairs = [(i, j) for i in range(n_systems) for j in range(i + 1, n_systems)]
    else:
        pairs = [(i, baseline) for i in range(n_systems) if i != baseline]
    first = values[[i for i, _ in pairs]] if pairs else np.empty((0, n))
    second = values[[j for _, j in pairs]] if pairs else np.empty((0, n))
    tested = paired_tests_rows(first, second, seed=seed, n_resamples=n_resamples)
    return SystemsComparison(means, ci95, pairs, tested["delta"], tested["p_randomisation"], tested["p_ttest"],
                             np.asarray(holm(tested["p_randomisation"].tolist())),
                             np.asarray(holm(tested["p_ttest"].tolist())))


def ttest_p(a: Values, b: Values) -> float:
    """scipy's paired t-test p-value; 1.0 when there is no difference (or spread) to test, NaN under 2 pairs."""
    from scipy import stats

    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if len(x) < 2:
        return math.nan
    if np.array_equal(x, y):
        return 1.0
    p = float(stats.ttest_rel(x, y).pvalue)
    return p if math.isfinite(p) else 1.0


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest of m p-values becomes max over j <= i of (m - j + 1) p_(j),
    capped at 1. NaN (no test) stays NaN and is not counted in m."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(len(p), np.nan)
    present = np.flatnonzero(~np.isnan(p))
    m = len(present)
    order = present[np.argsort(p[present], kind="stable")]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out.tolist()


def adjust_family(tests: Sequence[dict]) -> None:
    """Holm's adjustment over one family of tests (each :func:`paired_tests` result; the t-tests and the
    randomisation tests each their own family), written into each test's ``p_ttest_holm`` and
    ``p_randomisation_holm``."""
    for kind in ("p_ttest", "p_randomisation"):
        for test, adjusted in zip(tests, holm([t[kind] for t in tests]), strict=True):
            test[f"{kind}_holm"] = adjusted
