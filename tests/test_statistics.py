"""The vectorised statistics against scipy's definitions: the sign-flip tests of many pairs at once equal scipy's
``permutation_test`` (enumerated and sampled, ties and weights included), the shared bootstrap scipy's ``bootstrap``,
``compare_systems`` the pair-by-pair tests with Holm's adjustment; compare shows progress unless told not to."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from complexir.analysis import statistics


def _scipy_p(x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None, seed: int = 0) -> float:
    def statistic(u, v, axis):
        return ((u - v) * weights).sum(axis=axis) if weights is not None else (u - v).mean(axis=axis)

    return float(stats.permutation_test((x, y), statistic, permutation_type="samples", vectorized=True,
                                        n_resamples=10_000, random_state=seed).pvalue)


@pytest.mark.parametrize("n", [2, 5, 13, 14, 40, 300])  # up to 13 queries every sign pattern is enumerated
def test_many_pairs_at_once_equal_scipy_permutation_test_one_by_one(n):
    rng = np.random.default_rng(n)
    # scores on a grid of tenths, as measures of one relevant document are: many ties between flip patterns
    x = np.round(rng.random((6, n)), 1)
    y = np.round(rng.random((6, n)), 1)
    y[1] = x[1]  # no difference at all: 1.0, as before
    y[2, 1:] = x[2, 1:]  # one query differs
    got = statistics.randomisation_pvalues(x - y)
    assert got[1] == 1.0
    for row in (0, 2, 3, 4, 5):
        assert got[row] == _scipy_p(x[row], y[row]), row


@pytest.mark.parametrize("n", [6, 60])
def test_weighted_tests_equal_scipy_with_the_weighted_statistic(n):
    rng = np.random.default_rng(1)
    x, y = rng.random((3, n)), rng.random((3, n))
    w = rng.random(n)
    w /= w.sum()
    got = statistics.paired_tests_rows(x, y, weights=w)
    for row in range(3):
        assert got["p_randomisation"][row] == _scipy_p(x[row], y[row], w)
        assert got["delta"][row] == pytest.approx(np.sum(w * (x[row] - y[row])), abs=1e-15)
    assert np.isnan(got["p_ttest"]).all()  # a macro average's t-test is the caller's, over task means


def test_rows_equal_the_single_pair_function_and_scipy_ttest():
    rng = np.random.default_rng(2)
    x, y = rng.random((4, 50)), rng.random((4, 50))
    y[3] = x[3]
    rows = statistics.paired_tests_rows(x, y, seed=3)
    for i in range(4):
        one = statistics.paired_tests(x[i], y[i], seed=3)
        assert one == {"n": 50, "delta": rows["delta"][i], "p_randomisation": rows["p_randomisation"][i],
                       "p_ttest": rows["p_ttest"][i]}
        expected = 1.0 if i == 3 else stats.ttest_rel(x[i], y[i]).pvalue
        assert rows["p_ttest"][i] == pytest.approx(expected, rel=1e-12)
        assert rows["p_randomisation"][i] == _scipy_p(x[i], y[i], seed=3)


def test_sampled_p_values_stay_within_monte_carlo_error_of_the_enumerated_ones():
    rng = np.random.default_rng(4)
    x, y = rng.random(13), rng.random(13)  # 8,192 patterns: enumerated with 10,000 resamples, sampled with 2,000
    exact = statistics.randomisation_pvalues(x - y)[0]
    sampled = statistics.randomisation_pvalues(x - y, n_resamples=2_000)[0]
    assert exact == _scipy_p(x, y)
    assert abs(sampled - exact) < 4 * np.sqrt(exact * (1 - exact) / 2_000) + 1e-3


def test_batches_do_not_change_the_draw(monkeypatch):
    rng = np.random.default_rng(5)
    d = rng.random((3, 500)) - 0.48
    whole = statistics.randomisation_pvalues(d)
    boot = statistics.bootstrap_means(d)
    monkeypatch.setattr(statistics, "_CELLS_PER_BATCH", 500 * 7)  # batches of 7 resamples
    assert np.array_equal(statistics.randomisation_pvalues(d), whole)
    assert np.allclose(statistics.bootstrap_means(d), boot, rtol=0, atol=1e-14)


def test_shared_bootstrap_equals_scipy_bootstrap_percentile_intervals():
    rng = np.random.default_rng(6)
    values = rng.random((3, 40))
    resampled = statistics.bootstrap_means(values)
    intervals = statistics.percentile_intervals(resampled)
    for row in range(3):
        ref = stats.bootstrap((values[row],), np.mean, n_resamples=10_000, method="percentile",
                              rng=np.random.default_rng(0), vectorized=True)
        assert resampled[row] == pytest.approx(ref.bootstrap_distribution, abs=1e-14)
        assert intervals[row] == pytest.approx(list(ref.confidence_interval), abs=1e-14)
        assert tuple(intervals[row]) == pytest.approx(statistics.percentile_interval(resampled[row]), abs=1e-15)


def test_compare_systems_is_every_pair_tested_then_holm_adjusted():
    rng = np.random.default_rng(7)
    scores = np.round(rng.random((4, 30)), 2)
    scores[3] += 0.3  # clearly better: its pairs should be significant
    result = statistics.compare_systems(scores)
    assert result.pairs == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    singles = [statistics.paired_tests(scores[i], scores[j]) for i, j in result.pairs]
    assert result.p_randomisation.tolist() == [t["p_randomisation"] for t in singles]
    assert result.p_ttest.tolist() == pytest.approx([t["p_ttest"] for t in singles], rel=1e-12)
    assert result.delta.tolist() == pytest.approx([t["delta"] for t in singles], abs=1e-15)
    assert result.p_randomisation_holm.tolist() == statistics.holm([t["p_randomisation"] for t in singles])
    assert result.p_ttest_holm.tolist() == pytest.approx(statistics.holm([t["p_ttest"] for t in singles]))
    assert all(result.p_randomisation_holm[k] < 0.05 for k, pair in enumerate(result.pairs) if 3 in pair)
    assert result.means == pytest.approx(scores.mean(axis=1))
    boot = statistics.bootstrap_means(scores)
    for i in range(4):
        assert tuple(result.ci95[i]) == pytest.approx(statistics.percentile_interval(boot[i]), abs=1e-15)
        assert result.ci95[i][0] <= result.means[i] <= result.ci95[i][1]
    against = statistics.compare_systems(scores, baseline=1)
    assert against.pairs == [(0, 1), (2, 1), (3, 1)]
    assert against.p_randomisation[2] == statistics.paired_tests(scores[3], scores[1])["p_randomisation"]
    with pytest.raises(ValueError, match="baseline 9 is not one of the 4 systems"):
        statistics.compare_systems(scores, baseline=9)
    scores[2, 7] = np.nan  # a query a system did not score: refused, not a NaN interval
    with pytest.raises(ValueError, match=r"system 2, query 7: score nan is not finite \(1 such score\(s\)\)"):
        statistics.compare_systems(scores)


def test_compare_shows_a_progress_bar_unless_told_not_to(capsys):
    from test_compare import _fake_system

    from complexir.analysis.compare import compare

    values = {"LoCoV1GovReport": {"1": 1.0, "2": 0.5, "3": 0.9}, "LoCoV1QMSum": {"a": 0.2, "b": 0.4, "c": 0.1}}
    systems = [_fake_system("A", "A", values), _fake_system("B", "B", values)]
    compare(systems, measures=["ndcg_at_10"], progress=True)
    err = capsys.readouterr().err
    assert "comparing" in err and "3/3" in err  # two tasks and the benchmark's average
    compare(systems, measures=["ndcg_at_10"])
    assert "comparing" not in capsys.readouterr().err


def test_compare_of_many_pairs_and_tasks_equals_scipy_test_by_test():
    """compare's shared draws give each task test and each stratified average test scipy's own p-value."""
    from test_compare import _fake_system

    from complexir.analysis.compare import AVERAGE, compare

    rng = np.random.default_rng(8)
    tasks = {"LoCoV1GovReport": 20, "LoCoV1QMSum": 30}  # sampled: 2**20 and 2**50 sign patterns
    values = [{t: {f"q{i}": float(np.round(rng.random(), 1)) for i in range(n)} for t, n in tasks.items()}
              for _ in range(3)]
    systems = [_fake_system(f"S{k}", "ABC"[k], values[k]) for k in range(3)]
    result = compare(systems, measures=["ndcg_at_10"])
    by_folder = {f"S{k}": values[k] for k in range(3)}
    assert len(result.tests) == 3 * 3  # three pairs, on two tasks and their average
    for test in result.tests:
        a, b = by_folder[test["a"]], by_folder[test["b"]]
        if test["task"] == AVERAGE:
            x = np.array([a[t][q] for t in sorted(tasks) for q in sorted(a[t])])
            y = np.array([b[t][q] for t in sorted(tasks) for q in sorted(b[t])])
            w = np.concatenate([np.full(n, 1 / (len(tasks) * n)) for _t, n in sorted(tasks.items())])
            assert test["p_randomisation"] == _scipy_p(x, y, w)
        else:
            queries = sorted(a[test["task"]])
            x = np.array([a[test["task"]][q] for q in queries])
            y = np.array([b[test["task"]][q] for q in queries])
            assert test["p_randomisation"] == _scipy_p(x, y)
            assert test["p_ttest"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-12)
