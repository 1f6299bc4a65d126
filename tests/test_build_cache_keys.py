"""The build cache's key and provenance for benchmarks whose documents live outside their release (CoverageBench):
every external collection's version is in the key, so a change of any one of them is a new entry; the provenance
names each. (tests/test_hub_day_one.py builds such an entry from a local Hub.)"""

from __future__ import annotations

import pytest

from complexir.hub import build_cache
from complexir.hub.provenance import built_from_upstream
from complexir.loading_scripts import coveragebench
from complexir.registry.benchmarks import COVERAGEBENCH, CRUMB
from complexir.upstream.corpus import parse_corpus_source

RELEASE = {"hltcoe/coveragebench": "a" * 40}


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(build_cache.CACHE_ENV, str(tmp_path))
    return tmp_path


def test_the_collections_a_build_reads_are_those_of_its_subsets():
    assert build_cache.document_collections(COVERAGEBENCH, ["cast2020"]) == ("irds:trec-cast/v1/2020",)
    assert build_cache.document_collections(COVERAGEBENCH, ["crux_duc04", "crux_multinews"]) == (
        "hf:DylanJHJ/crux-mds-corpus",)  # one collection, two subsets: asked once
    every = build_cache.document_collections(COVERAGEBENCH, [])
    assert every == tuple(dict.fromkeys(s.documents for s in COVERAGEBENCH.subsets)) and len(every) == 6
    assert build_cache.document_collections(CRUMB, []) == ()


def test_ir_datasets_collections_are_keyed_by_the_ir_datasets_version_and_the_id(monkeypatch):
    monkeypatch.setattr(build_cache, "_ir_datasets_version", lambda: "0.5.11")
    old = build_cache.collection_versions(["irds:trec-cast/v1/2020"])
    assert old == {"irds:trec-cast/v1/2020": "0.5.11"}
    monkeypatch.setattr(build_cache, "_ir_datasets_version", lambda: "0.6.3")
    new = build_cache.collection_versions(["irds:trec-cast/v1/2020"])
    other_id = {"irds:trec-fair/2022": "0.6.3"}
    entries = {build_cache.entry_path(COVERAGEBENCH, RELEASE, ["cast2020"], documents)
               for documents in (old, new, other_id, {})}
    assert len(entries) == 4  # an ir_datasets upgrade, another collection, none: each its own entry
    assert build_cache.entry_path(COVERAGEBENCH, RELEASE, ["cast2020"], dict(new)) == \
        build_cache.entry_path(COVERAGEBENCH, RELEASE, ["cast2020"], new)  # the same versions: the same entry
    key = build_cache.entry_path(COVERAGEBENCH, RELEASE, ["cast2020"], new).parts[-3]
    assert key.startswith(f"hltcoe--coveragebench@{'a' * 40}+documents-") and len(key) < 255
    assert built_from_upstream(RELEASE, new) == (
        f"hltcoe/coveragebench@{'a' * 40}; documents: trec-cast/v1/2020 (ir_datasets 0.6.3)")


def cb_source(subset: str) -> str:
    return COVERAGEBENCH.subset(subset).documents


def test_hub_collections_are_keyed_by_commit_and_read_at_it(monkeypatch):
    import huggingface_hub

    class Api:
        def dataset_info(self, repo):
            return type("Info", (), {"sha": {"DylanJHJ/crux-mds-corpus": "c" * 40, "trec-ragtime/ragtime1": "d" * 40,
                                             "neuclir/neuclir1": "f" * 40}[repo]})()

    monkeypatch.setattr(huggingface_hub, "HfApi", Api)
    monkeypatch.setattr(build_cache, "_ir_datasets_version", lambda: "0.6.3")
    every = build_cache.collection_versions(build_cache.document_collections(COVERAGEBENCH, []))
    assert every["hf:DylanJHJ/crux-mds-corpus"] == "c" * 40 and every["irds:msmarco-segment-v2.1"] == "0.6.3"
    # the key of all seven subsets stays a valid folder name
    assert len(build_cache.entry_path(COVERAGEBENCH, RELEASE, [], every).parts[-3]) < 255
    assert build_cache.entry_path(COVERAGEBENCH, RELEASE, [], every) != build_cache.entry_path(
        COVERAGEBENCH, RELEASE, [], {**every, "hf:DylanJHJ/crux-mds-corpus": "e" * 40})
    # the build reads each Hub collection at the commit the key names
    pinned = coveragebench.pinned_documents(every)
    # NeuCLIR and RAGTIME: their English translations, the splits or files of the repo kept with the commit
    assert pinned == {"docs": {
        "neuclir_2024": f"hf:neuclir/neuclir1@{'f' * 40}?splits=fas_mt_eng,rus_mt_eng,zho_mt_eng",
        "ragtime_2025": f"hf:trec-ragtime/ragtime1@{'d' * 40}?files=eng-docs.jsonl,arb-trans.jsonl,"
                        "rus-trans.jsonl,zho-trans.jsonl",
        "crux_multinews": f"hf:DylanJHJ/crux-mds-corpus@{'c' * 40}",
        "crux_duc04": f"hf:DylanJHJ/crux-mds-corpus@{'c' * 40}"}}
    assert list(pinned["docs"]) == ["neuclir_2024", "ragtime_2025", "crux_multinews", "crux_duc04"]
    assert built_from_upstream(RELEASE, {cb_source("ragtime_2025"): "d" * 40}) == (
        f"hltcoe/coveragebench@{'a' * 40}; documents: trec-ragtime/ragtime1@{'d' * 40} (files eng-docs.jsonl, "
        "arb-trans.jsonl, rus-trans.jsonl, zho-trans.jsonl)")
    source = parse_corpus_source(pinned["docs"]["crux_duc04"])
    assert (source.kind, source.location, source.revision, source.config) == (
        "hf", "DylanJHJ/crux-mds-corpus", "c" * 40, None)
    assert str(parse_corpus_source("hf:org/docs@v2:en")) == "hf:org/docs@v2:en"
    assert built_from_upstream(RELEASE, {"hf:DylanJHJ/crux-mds-corpus": "c" * 40, "irds:trec-cast/v1/2020": "0.6.3"}
                               ) == (f"hltcoe/coveragebench@{'a' * 40}; documents: DylanJHJ/crux-mds-corpus@"
                                     f"{'c' * 40}, trec-cast/v1/2020 (ir_datasets 0.6.3)")


def test_a_hub_collection_is_streamed_at_its_revision(monkeypatch):
    import datasets

    from complexir.upstream.corpus import iter_documents

    calls = []

    def load_dataset(path, name=None, **kwargs):
        calls.append((path, name, kwargs))
        return {"train": [{"id": "d1", "text": "one"}]}

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    rows = list(iter_documents(parse_corpus_source(f"hf:DylanJHJ/crux-mds-corpus@{'c' * 40}")))
    assert rows == [{"id": "d1", "title": "", "text": "one"}]
    assert calls == [("DylanJHJ/crux-mds-corpus", None, {"revision": "c" * 40, "streaming": True})]
