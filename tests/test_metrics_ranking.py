"""rank_run: the tie rule, and ``depth`` giving exactly the head of the full ranking; the same for the array
functions of the columnar path (select_top, rank_codes)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from complexir.metrics import max_depth, rank_run
from complexir.metrics.ranking import index_within_runs, rank_codes, run_starts, select_top

DOC_IDS = st.text(alphabet="abcd0123", min_size=1, max_size=3)
# few distinct integer-valued scores, so most rankings have long tie blocks (also across a depth boundary)
TIED_SCORES = st.integers(-3, 3).map(float) | st.integers(-3, 3)
ANY_SCORES = TIED_SCORES | st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
RUNS = st.dictionaries(st.text(alphabet="q123", min_size=1, max_size=2),
                       st.dictionaries(DOC_IDS, ANY_SCORES, max_size=40), max_size=5)


def by_definition(scores: dict[str, float]) -> list[str]:
    """trec_eval's order spelt out: score descending, then doc id descending."""
    return [d for _, d in sorted(((float(s), d) for d, s in scores.items()), reverse=True)]


@settings(max_examples=300, deadline=None)
@given(RUNS, st.integers(0, 50))
def test_depth_is_the_head_of_the_full_ranking(run, depth):
    full = rank_run(run)
    assert full == {q: by_definition(s) for q, s in run.items()}
    assert rank_run(run, depth=depth) == {q: r[:depth] for q, r in full.items()}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(DOC_IDS, TIED_SCORES, min_size=2, max_size=60), st.data())
def test_depth_inside_a_tie_block(scores, data):
    # cut right inside the block of docs tied at some score: the doc-id tie-break must stay exact
    full = rank_run({"q": scores})["q"]
    depth = data.draw(st.integers(1, len(full)))
    assert rank_run({"q": scores}, depth=depth)["q"] == full[:depth]


def test_depth_edge_cases():
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 2.0}, "q2": {}}
    assert rank_run(run, depth=100) == rank_run(run) == {"q1": ["c", "b", "a"], "q2": []}
    assert rank_run(run, depth=2) == {"q1": ["c", "b"], "q2": []}
    assert rank_run(run, depth=0) == {"q1": [], "q2": []}
    assert rank_run({}, depth=5) == {}
    for bad in (-1, 2.5, True, "10"):
        with pytest.raises(ValueError, match="depth"):
            rank_run(run, depth=bad)


@pytest.mark.parametrize("depth", [None, 0, 1, 3])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_scores_name_query_and_doc_at_any_depth(depth, bad):
    # the bad score sits below the cut: it is still found and named
    run = {"ok": {"x": 1.0}, "q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": bad}}
    with pytest.raises(ValueError, match=r"query 'q', document 'e'.*not finite"):
        rank_run(run, depth=depth)


@pytest.mark.parametrize("depth", [None, 1])
def test_non_numeric_scores_name_query_and_doc(depth):
    with pytest.raises(ValueError, match=r"query 'q', document 'b'.*not a number"):
        rank_run({"q": {"a": 1.0, "b": "high", "c": 0.0}}, depth=depth)
    with pytest.raises(ValueError, match=r"query 'q', document 'c'.*not a number"):
        rank_run({"q": {"a": 1.0, "b": 2, "c": None}}, depth=depth)


def test_max_depth():
    assert max_depth(["nDCG@10", "R@100", "AP@10"]) == 100
    assert max_depth(["alpha_nDCG@20", "StRecall@20"]) == 20
    assert max_depth("P@5") == 5
    # measures without a cutoff read the whole ranking
    for names in (["AP", "nDCG@10"], ["AP_IA"], ["NRBP", "alpha_nDCG@20"], ["RR"], []):
        assert max_depth(names) is None
    with pytest.raises(ValueError, match="unknown measure"):
        max_depth(["foo@3"])


# Rows as arrays, the columnar path's input: (topic, doc code, score), topics in any layout (contiguous or
# interleaved, best first or not), lengths equal or ragged (one long topic among short ones takes the per-topic
# loop, not the matrix).
ROWS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6), TIED_SCORES.map(float)), max_size=120)


def _layouts(rows: list[tuple[int, int, float]], long_topic: bool) -> list[list[tuple[int, int, float]]]:
    if long_topic:
        rows = rows + [(6, d % 50, float(d % 7)) for d in range(300)]
    # as given (topics interleaved), topic by topic, and each topic best first (as TREC runs list them)
    return [rows, sorted(rows, key=lambda r: r[0]), sorted(rows, key=lambda r: (r[0], -r[2])),
            sorted(rows, key=lambda r: -r[2])]


@settings(max_examples=300, deadline=None)
@given(ROWS, st.integers(1, 8), st.booleans())
def test_select_top_keeps_every_row_that_can_reach_the_depth(rows, depth, long_topic):
    for layout in _layouts(rows, long_topic):
        topic = np.array([r[0] for r in layout], np.int64)
        score = np.array([r[2] for r in layout])
        kept = select_top(topic, score, 7, depth)
        expected = set()
        for t in set(topic.tolist()):
            mine = np.flatnonzero(topic == t)
            boundary = np.sort(score[mine])[::-1][min(depth, len(mine)) - 1]
            expected |= set(mine[score[mine] >= boundary].tolist())
        assert sorted(kept.tolist()) == sorted(expected)
        grouped = topic[kept]
        assert len(set(grouped.tolist())) == int(np.count_nonzero(np.diff(grouped))) + (len(grouped) > 0)


@settings(max_examples=300, deadline=None)
@given(ROWS, st.sampled_from([None, 1, 3, 10]), st.booleans())
def test_rank_codes_is_score_then_doc_descending_each_doc_once(rows, depth, long_topic):
    for layout in _layouts(rows, long_topic):
        topic = np.array([r[0] for r in layout], np.int64)
        doc = np.array([r[1] for r in layout], np.int64)
        score = np.array([r[2] for r in layout])
        ranked, repeated = rank_codes(topic, doc, score, depth)
        expected, repeats = [], 0
        for t in sorted(set(topic.tolist())):
            seen: dict[int, float] = {}
            for s, d in sorted(((score[i], doc[i]) for i in np.flatnonzero(topic == t)), reverse=True):
                if d in seen:
                    repeats += 1
                    continue
                seen[d] = s
            expected += [(t, d, s) for d, s in list(seen.items())[:depth]]
        assert [(topic[i], doc[i], score[i]) for i in ranked] == expected
        assert int(repeated.sum()) == repeats


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=30))
def test_run_starts_and_index_within_runs_follow_their_definitions(values):
    array = np.array(values, dtype=np.int64)
    starts = [i for i in range(len(values)) if i == 0 or values[i] != values[i - 1]]
    assert run_starts(array).tolist() == starts
    assert index_within_runs(array).tolist() == [i - max(s for s in starts if s <= i) for i in range(len(values))]
