"""Paired significance tests on per-query scores (scipy): is model A's mean different from model B's?

A two-sided paired randomisation (permutation) test (``scipy.stats.permutation_test``, exact when there
are few queries) and a paired t-test (``scipy.stats.ttest_rel``), over the queries both runs scored.
"""

from __future__ import annotations

import logging
import math

logger = logging.getLogger(__name__)

N_RESAMPLES = 10_000
SEED = 0


def paired_tests(scores: dict[str, float], baseline: dict[str, float]) -> dict[str, float] | None:
    """Two-sided paired randomisation test and paired t-test over the queries both runs scored.

    ``{"n", "p_randomisation", "p_ttest"}``, or None when fewer than two queries are shared.
    """
    from scipy import stats

    queries = sorted(set(scores) & set(baseline))
    if len(queries) < 2:
        return None
    if len(queries) != len(scores) or len(queries) != len(baseline):
        logger.warning("paired test on the %d queries both runs scored (%d vs %d)",
                       len(queries), len(scores), len(baseline))
    a = [float(scores[q]) for q in queries]
    b = [float(baseline[q]) for q in queries]
    if a == b:  # identical runs: no difference to test (scipy would warn about a degenerate t)
        return {"n": len(queries), "p_randomisation": 1.0, "p_ttest": 1.0}
    perm = stats.permutation_test(
        (a, b), lambda x, y, axis: (x - y).mean(axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=N_RESAMPLES, alternative="two-sided", random_state=SEED,
    )
    ttest = stats.ttest_rel(a, b)
    p_t = float(ttest.pvalue)
    return {"n": len(queries), "p_randomisation": float(perm.pvalue), "p_ttest": p_t if math.isfinite(p_t) else 1.0}
