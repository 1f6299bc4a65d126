"""The opt-in long-document mode: window planning, MaxP search against brute force, honest token counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from datasets import Dataset

from complexir.systems.long_docs import MaxPSearchWrapper, plan_windows, wrap_long_docs


# -- plan_windows: pure ---------------------------------------------------------------------------------
def _check_plan(word_ids: list[int], capacity: int, overlap: int) -> list[tuple[int, int]]:
    spans = plan_windows(word_ids, capacity, overlap)
    assert spans[0][0] == 0 and spans[-1][1] == len(word_ids)  # the whole text
    for (s1, e1), (s2, e2) in zip(spans, spans[1:], strict=False):
        assert s1 < s2 <= e1 < e2  # progress, no gap
    assert all(0 < e - s <= capacity for s, e in spans)
    return spans


def test_plan_windows_plain_words() -> None:
    assert _check_plan(list(range(10)), 4, 1) == [(0, 4), (3, 7), (6, 10)]
    assert _check_plan(list(range(10)), 4, 0) == [(0, 4), (4, 8), (8, 10)]
    assert _check_plan(list(range(3)), 4, 1) == [(0, 3)]
    assert plan_windows([], 4, 1) == [(0, 0)]


def test_plan_windows_snap_to_word_starts() -> None:
    # words: 0 0 1 1 1 2 3 3 4 (tokens 0..8); word starts at 0, 2, 5, 6, 8
    word_ids = [0, 0, 1, 1, 1, 2, 3, 3, 4]
    spans = _check_plan(word_ids, 4, 1)
    assert spans == [(0, 2), (2, 6), (5, 9)]
    starts = {0, 2, 5, 6, 8}
    assert all(s in starts for s, _ in spans)
    assert all(e in starts or e == len(word_ids) for _, e in spans)
    # a word longer than a window is cut
    assert _check_plan([0] * 10, 4, 1) == [(0, 4), (4, 8), (8, 10)]  # no word start to overlap from


def test_plan_windows_cap() -> None:
    assert plan_windows(list(range(10)), 4, 1, max_windows=2) == [(0, 4), (3, 7)]


# -- with the real model --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def st_model(model_path: Path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model_path), device="cpu")


@pytest.fixture(scope="module")
def encoder(st_model):
    import mteb
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    model = SentenceTransformerEncoderWrapper(st_model)
    model.mteb_model_meta = mteb.get_model_meta("sentence-transformers/all-MiniLM-L6-v2")
    return model


SENTENCES = [
    "The Coast Guard operates two heavy polar icebreakers.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "The Treaty of Westphalia ended the Thirty Years' War in 1648.",
    "Unbelievably, tokenization splits rare words into several wordpieces.",
    "Plate tectonics explains earthquakes, volcanoes and the drift of continents.",
]


def _doc(i: int, n: int) -> str:
    return " ".join(SENTENCES[(i + j) % len(SENTENCES)] for j in range(n))


def test_windows_retokenize_within_capacity(encoder) -> None:
    wrapper = MaxPSearchWrapper(encoder, window_tokens=40, overlap_tokens=8)
    text = _doc(0, 30)
    windows, seen, total = wrapper.windows(text)
    assert seen == total == len(wrapper.budget.backend.encode(text, add_special_tokens=False))
    assert len(windows) > 1
    retokenized = [len(wrapper.budget.backend.encode(w, add_special_tokens=False)) for w in windows]
    assert max(retokenized) <= 40
    assert sum(retokenized) >= total  # every token is in some window (overlaps counted twice)
    assert windows[0] == text[: len(windows[0])] and text.endswith(windows[-1])


def test_default_window_is_the_model_length(encoder, st_model) -> None:
    wrapper = MaxPSearchWrapper(encoder)
    assert wrapper.window_tokens == st_model.max_seq_length - 2 == 254
    with pytest.raises(ValueError, match="window_tokens"):
        MaxPSearchWrapper(encoder, window_tokens=300)
    with pytest.raises(ValueError, match="overlap_tokens"):
        MaxPSearchWrapper(encoder, window_tokens=10, overlap_tokens=10)


def test_token_counts_reflect_what_is_encoded(encoder) -> None:
    capped = MaxPSearchWrapper(encoder, window_tokens=40, overlap_tokens=8, max_windows_per_doc=2)
    seen, total = capped.doc_token_counts([_doc(0, 30), "short text", ""])
    assert total[0] > 72 and seen[0] <= 80 and seen[0] < total[0]
    assert seen[1] == total[1] == 2 and seen[2] == total[2] == 0
    full = MaxPSearchWrapper(encoder, window_tokens=40, overlap_tokens=8)
    seen, total = full.doc_token_counts([_doc(0, 30)])
    assert seen[0] == total[0]


def test_meta_names_the_experiment(encoder) -> None:
    wrapper = wrap_long_docs(encoder, "chunk")
    assert wrapper.mteb_model_meta.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert wrapper.mteb_model_meta.experiment_kwargs == {"long_docs": "maxp", "window_tokens": 254,
                                                          "overlap_tokens": 32}
    assert wrap_long_docs(encoder, "none") is encoder
    with pytest.raises(ValueError, match="expected one of"):
        wrap_long_docs(encoder, "sliding")


def _task_metadata():
    from complexir.tasks.locov1 import LoCoV1GovReport

    return LoCoV1GovReport.metadata


def test_maxp_search_equals_brute_force(encoder, st_model) -> None:
    docs = [_doc(i, 4 + 3 * i) for i in range(7)]
    corpus = Dataset.from_dict({"id": [f"d{i}" for i in range(7)], "title": [""] * 7, "text": docs})
    queries = Dataset.from_dict({"id": ["q0", "q1"], "text": ["polar icebreakers", "the end of a European war"]})
    kwargs = dict(task_metadata=_task_metadata(), hf_split="test", hf_subset="default",
                  encode_kwargs={"batch_size": 16, "show_progress_bar": False})

    wrapper = MaxPSearchWrapper(encoder, window_tokens=30, overlap_tokens=5, doc_batch_size=3)  # 3 batches
    wrapper.index(corpus, **kwargs)
    got = wrapper.search(queries, top_k=4, **kwargs)

    q = st_model.encode(list(queries["text"]), convert_to_numpy=True)
    windows = [wrapper.windows(text)[0] for text in docs]
    flat = st_model.encode([w for ws in windows for w in ws], convert_to_numpy=True)
    sims = st_model.similarity(q, flat).numpy()
    bounds = np.cumsum([0] + [len(ws) for ws in windows])
    expected = {}
    for qi, qid in enumerate(queries["id"]):
        best = {f"d{i}": float(sims[qi, bounds[i]:bounds[i + 1]].max()) for i in range(len(docs))}
        expected[qid] = dict(sorted(best.items(), key=lambda kv: -kv[1])[:4])
    assert set(got) == {"q0", "q1"}
    for qid in expected:
        assert set(got[qid]) == set(expected[qid])
        for doc_id, score in expected[qid].items():
            assert got[qid][doc_id] == pytest.approx(score, abs=1e-5)

    # reranking: only each query's candidates are scored
    wrapper.index(corpus, **kwargs)
    reranked = wrapper.search(queries, top_k=4, top_ranked={"q0": ["d1", "d2"], "q1": ["d3"]}, **kwargs)
    assert set(reranked["q0"]) == {"d1", "d2"} and set(reranked["q1"]) == {"d3"}
    assert reranked["q1"]["d3"] == pytest.approx(got["q1"].get("d3", reranked["q1"]["d3"]), abs=1e-5)


def test_merge_top_k_keeps_best() -> None:
    from complexir.systems.long_docs import _merge_top_k

    rng = np.random.default_rng(0)
    all_scores = rng.random((3, 50)).astype(np.float32)
    best = np.full((3, 5), -np.inf, np.float32)
    ids = np.full((3, 5), -1)
    for start in range(0, 50, 7):
        best, ids = _merge_top_k(best, ids, all_scores[:, start:start + 7], np.arange(start, min(start + 7, 50)), 5)
    for qi in range(3):
        assert sorted(ids[qi].tolist()) == sorted(np.argsort(-all_scores[qi])[:5].tolist())


def test_plain_model_token_shares(encoder) -> None:
    """A truncating model reads min(1, 254 / length) of each text; counted with its own tokenizer."""
    from complexir.tasks.locov1 import query_share_scores, token_share_scores

    long_text, short_text = _doc(0, 80), "polar icebreakers"
    n_long = len(MaxPSearchWrapper(encoder).budget.backend.encode(long_text, add_special_tokens=False))
    assert n_long > 254
    corpus = Dataset.from_dict({"id": ["a", "b"], "title": ["", ""], "text": [long_text, short_text]})
    shares = token_share_scores(encoder, corpus, progress=False)
    assert shares["doc_token_share_seen"] == pytest.approx((254 / n_long + 1.0) / 2)
    assert shares["docs_truncated_share"] == 0.5
    assert shares["model_tokens_per_input"] == 254
    queries = Dataset.from_dict({"id": ["q"], "text": [long_text]})
    assert query_share_scores(encoder, queries) == {"query_token_share_seen": pytest.approx(254 / n_long),
                                                    "queries_truncated_share": 1.0}
    chunked = token_share_scores(wrap_long_docs(encoder, "chunk"), corpus, progress=False)
    assert chunked["doc_token_share_seen"] == 1.0 and chunked["docs_truncated_share"] == 0.0
    assert token_share_scores(object(), corpus) == {}  # no tokenizer to be found: nothing made up


def test_plain_model_really_reads_254_tokens(encoder, st_model) -> None:
    """The truncation the shares assume is the model's: its embedding of a long text is that of its first 254
    tokens, and differs from that of its first 253."""
    text = _doc(1, 80)
    offsets = MaxPSearchWrapper(encoder).budget.backend.encode(text, add_special_tokens=False).offsets
    full, first254, first253 = st_model.encode([text, text[:offsets[253][1]], text[:offsets[252][1]]])
    assert np.allclose(full, first254, atol=1e-5)
    assert not np.allclose(full, first253, atol=1e-5)
