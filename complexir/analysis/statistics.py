"""The statistics of a comparison, on per-query scores: intervals, paired tests and their correction.

* :func:`bootstrap_means`: the paired bootstrap over queries (the same resampled queries for every system), from
  which :func:`percentile_interval` takes a 95% interval of each system's mean;
* :func:`paired_tests`: a two-sided paired randomisation test (``scipy.stats.permutation_test``, sign flips of each
  query's pair, exact when there are few queries) and a paired t-test (``scipy.stats.ttest_rel``);
* :func:`holm`: Holm's step-down adjustment over a family of p-values (:func:`adjust_family`: over a family of
  tests).

Every resampling is seeded (:data:`SEED`): the same inputs give the same numbers. ``complexir compare`` and
``complexir report --baseline`` both use this module.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

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
    with replacement, the same resamples for every system (paired): (systems, n_resamples)."""
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
        out[:, start:stop] = values[:, idx].mean(axis=2)
    return out


def percentile_interval(resampled: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The percentile interval of one system's bootstrap means (``level`` coverage, two-sided)."""
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(resampled, [tail, 100.0 - tail])
    return float(low), float(high)


def paired_tests(a: Values, b: Values, *, weights: Values | None = None,
                 seed: int = SEED, n_resamples: int = N_RESAMPLES) -> dict[str, float]:
    """Two-sided paired tests of ``a`` against ``b`` (one value per query, in the same order).

    ``{"n", "delta", "p_randomisation", "p_ttest"}``: ``delta`` is the difference of the (``weights``-weighted) means,
    ``p_randomisation`` the share of sign flips of the per-query differences whose statistic is at least as far from
    0 (scipy's permutation test, paired samples), ``p_ttest`` scipy's ``ttest_rel``. With ``weights`` (a macro average
    over tasks: each query weighted by 1 / (its task's queries × tasks)) the randomisation statistic is the weighted
    mean difference, flips staying within each query, and no t-test is made here (NaN): a t-test of a macro average
    is one over the task means, which the caller makes.
    """
    from scipy import stats

    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired tests need two equal-length vectors, got {x.shape} and {y.shape}")
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    delta = float(np.sum(w * (x - y))) if w is not None else float(np.mean(x - y)) if len(x) else math.nan
    out = {"n": int(len(x)), "delta": delta}
    if len(x) < 2 or np.array_equal(x, y):  # nothing to test (scipy would warn of a degenerate statistic)
        out.update(p_randomisation=1.0, p_ttest=1.0 if w is None else math.nan)
        return out

    def statistic(u: np.ndarray, v: np.ndarray, axis: int) -> np.ndarray:
        diff = u - v
        return (diff * w).sum(axis=axis) if w is not None else diff.mean(axis=axis)

    perm = stats.permutation_test((x, y), statistic, permutation_type="samples", vectorized=True,
                                  n_resamples=n_resamples, alternative="two-sided", random_state=seed)
    out["p_randomisation"] = float(perm.pvalue)
    out["p_ttest"] = ttest_p(x, y) if w is None else math.nan
    return out


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
