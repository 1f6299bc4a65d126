"""Coverage internals that the reference tests do not reach: scoring topics in several chunks."""

from __future__ import annotations

import random

import pytest

from complexir.metrics import coverage, coverage_per_query

NAMES = ["alpha_nDCG@10", "alpha_nDCG(alpha=0.9)@5", "StRecall@10", "nERR_IA@10", "AP_IA", "nNRBP"]


def _random_case(seed: int, topics: int = 12):
    rnd = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    judgments, rankings = {}, {}
    for t in range(topics):
        judgments[f"t{t}"] = {
            str(n): {rnd.choice(docs): rnd.randint(0, 2) for _ in range(rnd.randint(0, 8))}
            for n in range(rnd.randint(1, 6))
        }
        rankings[f"t{t}"] = rnd.sample(docs + ["x1", "x2"], rnd.randint(0, 25))
    return judgments, rankings


@pytest.mark.parametrize("seed", range(5))
def test_chunked_scoring_equals_one_chunk(seed, monkeypatch):
    judgments, rankings = _random_case(seed)
    whole = coverage_per_query(judgments, rankings, NAMES)
    monkeypatch.setattr(coverage, "_CHUNK_ELEMENTS", 50)  # forces several chunks of a few topics each
    chunked = coverage_per_query(judgments, rankings, NAMES)
    # equal up to the last bit of the final dot products, whose padded length follows the chunk
    for name, per_topic in whole.items():
        assert list(chunked[name]) == list(per_topic)
        for topic, value in per_topic.items():
            assert chunked[name][topic] == pytest.approx(value, abs=1e-12), (name, topic)
