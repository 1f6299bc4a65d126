"""Reading our benchmark repos from a Hub (the local server of tests/hub_server.py): online, then offline from
the cache, with ``datasets`` and with our MTEB tasks.

Clients run in subprocesses: huggingface_hub, datasets and evaluate read HF_ENDPOINT and HF_HUB_OFFLINE when
imported, so one process cannot be pointed at the server, or taken offline, after the fact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hub_server import client_env, run_client

# end to end through the local Hub server, the clients in subprocesses
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "complexir" / "demo"
DEMOS = ("crumb", "irsc", "locov1", "coveragebench")


@pytest.fixture(scope="module")
def demo_repos(hub) -> dict[str, str]:
    """Every demo benchmark as the dataset repo ``complexir/<benchmark>`` (where the tasks look for it)."""
    return {name: hub.put_folder("dataset", f"complexir/{name}", DEMO / name) for name in DEMOS}


def _last_json(result) -> dict:
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


# Every config and split of every benchmark, named by the card; a content digest per split.
FINGERPRINTS = """
import hashlib, json
import datasets
from complexir.layout import reader

def digest(source, config, split):
    rows = datasets.load_dataset(source, config, split=split).to_list()
    return [len(rows), hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()]

out = {}
for name, source in SOURCES.items():
    out[name] = {"subsets": reader.list_subsets(source),
                 "splits": {c: digest(source, c, s) for c in reader.config_names(source)
                            for s in reader.config_splits(source, c)}}
print(json.dumps(out))
"""


def test_load_dataset_every_config_online_then_offline(hub, demo_repos, tmp_path):
    home = tmp_path / "hf"
    hub_sources = {name: f"complexir/{name}" for name in DEMOS}
    local_sources = {name: str(DEMO / name) for name in DEMOS}

    online = _last_json(run_client(f"SOURCES = {hub_sources!r}\n" + FINGERPRINTS, client_env(hub, home)))
    local = _last_json(run_client(f"SOURCES = {local_sources!r}\n" + FINGERPRINTS, client_env(hub, home)))
    seen = len(hub.state.requests)
    offline = _last_json(run_client(f"SOURCES = {hub_sources!r}\n" + FINGERPRINTS,
                                    client_env(hub, home, offline=True)))

    assert online == local  # the Hub copy reads exactly as the folder it was pushed from
    assert offline == online  # and so does the cache, with the Hub unreachable ...
    assert hub.state.requests[seen:] == []  # ... and not asked
    for name in DEMOS:  # configs and subsets as the card names them, not datasets' offline "default"
        assert "default" not in online[name]["subsets"], name
        assert len(online[name]["splits"]) >= 3 * len(online[name]["subsets"]), name
    assert any(c.endswith("-top_ranked") for c in online["coveragebench"]["splits"])


# Each task that the demo data holds, read from the Hub repo (no data dir) and from the local demo folder.
TASK_DATA = """
import hashlib, json
from complexir.tasks import TASKS

def digest(value):
    if value is None:
        return None
    if hasattr(value, "batches"):  # parquet shards (corpus_from_shards): their rows, batch by batch
        value = [row for table in value.batches(1000) for row in table.to_pylist()]
    if hasattr(value, "to_list"):
        value = value.to_list()
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()

out = {}
for cls in TASKS:
    task = cls()
    if not task.available_in(DEMO):
        continue
    if LOCAL:
        task.data_dir = DEMO
        task.restrict_to_present()
    task.corpus_from_shards = SHARDS
    task.load_data()
    out[cls.metadata.name] = {
        subset: {split: {key: digest(data.get(key)) for key in ("corpus", "queries", "relevant_docs", "top_ranked")}
                 for split, data in splits.items()}
        for subset, splits in task.dataset.items()}
print(json.dumps(out, sort_keys=True))
"""


def _task_data_local_online_offline(hub, home: Path, *, shards: bool) -> tuple[dict, dict, dict]:
    """TASK_DATA read from the demo folders, then from the Hub, then offline from the cache (asking the Hub
    nothing)."""
    head = f"from pathlib import Path\nDEMO = Path({str(DEMO)!r})\nSHARDS = {shards}\n"
    local = _last_json(run_client(head + "LOCAL = True\n" + TASK_DATA, client_env(hub, home)))
    code = head + "LOCAL = False\n" + TASK_DATA
    online = _last_json(run_client(code, client_env(hub, home)))
    seen = len(hub.state.requests)
    offline = _last_json(run_client(code, client_env(hub, home, offline=True)))
    assert hub.state.requests[seen:] == []
    return local, online, offline


def test_every_task_reads_the_hub_online_then_offline(hub, demo_repos, tmp_path):
    local, online, offline = _task_data_local_online_offline(hub, tmp_path / "hf", shards=False)
    reranks = [name for name in online if name.endswith("Rerank")]
    assert reranks and all(online[n][s][sp]["top_ranked"] for n in reranks for s in online[n] for sp in online[n][s])
    assert online == local
    assert offline == online


def test_complexir_run_from_the_hub_records_the_commit(hub, demo_repos, tmp_path):
    """``complexir run --data-dir hub`` names the data it scored by the commit the repo's ``main`` resolved to, in
    MTEB's result JSON (``dataset_revision``), the per-query files and the printed table; offline, from the cache,
    the same commit, with the Hub not asked."""
    from hub_server import run_cli

    home = tmp_path / "hf"
    commit = demo_repos["crumb"]
    assert len(commit) == 40 and commit == hub.repo("dataset", "complexir/crumb").commits[-1].sha
    tasks = ("CRUMBLegalQA", "CRUMBClinicalTrial")

    def run(output: Path, offline: bool) -> str:
        args = ["run", "--data-dir", "hub", "--output", str(output)]
        for task in tasks:
            args += ["--task", task]
        result = run_cli(args, client_env(hub, home, offline=offline))
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        return result.stdout

    online = run(tmp_path / "online", offline=False)
    seen = len(hub.state.requests)
    offline = run(tmp_path / "offline", offline=True)
    assert hub.state.requests[seen:] == []
    for output, printed in ((tmp_path / "online", online), (tmp_path / "offline", offline)):
        assert f"data: CRUMB: Hub dataset complexir/crumb at commit {commit}" in printed
        assert "DEMO DATA" not in printed
        for task in tasks:
            result = json.loads(next((output / "results").rglob(f"{task}.json")).read_text())
            per_query = json.loads(next((output / "per_query").rglob(f"{task}.json")).read_text())
            assert result["dataset_revision"] == commit, task
            assert per_query["data"] == {"kind": "hub", "name": "complexir/crumb", "version": commit,
                                         "revision": commit}, task


def test_every_task_streams_its_corpus_shards_from_the_hub_online_then_offline(hub, demo_repos, tmp_path):
    """``corpus_from_shards`` (the streaming engines): the corpus config's parquet files come from the Hub repo's
    snapshot (then from the cache, offline) and hold the rows of the local folder's."""
    local, online, offline = _task_data_local_online_offline(hub, tmp_path / "hf", shards=True)
    assert local and all(data["corpus"] for splits in local.values() for subset in splits.values()
                         for data in subset.values())
    assert online == local
    assert offline == online
