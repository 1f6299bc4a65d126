"""Day one without our repos: a Hub (the local server of tests/hub_server.py) holding the upstream releases in their
own format but no ``complexir/<benchmark>`` repo.

A task then builds its benchmark from the upstream release once into ``COMPLEXIR_CACHE`` (two racing processes
build it once), scores what a local build of the same release scores, reads the cache later without building,
offline too; a build killed before it finished leaves nothing that is read; IRSC, which has no release complexir can
read, says in one line how to build it. Plain ``mteb run`` (through the hook) and ``complexir run --data-dir hub`` both
work.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hub_server import NETWORK_GUARD, HubServer, client_env, run_cli, run_client

# end to end through the local Hub server, the clients in subprocesses
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
CRUMB_RELEASE = FIXTURES / "crumb" / "demo_upstream"
LOCOV1_RELEASE = FIXTURES / "locov1" / "demo_upstream"
COVERAGEBENCH_RELEASE = FIXTURES / "coveragebench" / "demo_upstream"
#: CoverageBench's CRUX subsets read their documents from this Hub dataset (SubsetSpec.documents)
CRUX_CORPUS = "DylanJHJ/crux-mds-corpus"
TASK = "CRUMBLegalQA"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"  # mteb's ModelMeta for MODEL

#: Put first in a client that must not build: a build raises (the loading script is never run).
NO_BUILD = """
from complexir.hub import build_cache as _bc
def _no_build(*args, **kwargs):
    raise AssertionError("built again")
_bc._build = _no_build
"""


@pytest.fixture(scope="module")
def bare_hub(tmp_path_factory):
    """A Hub of its own (the session one holds our repos): the CRUMB, LoCoV1 and CoverageBench releases and the
    CRUX document collection CoverageBench reads, none of complexir's repos; yields (server, repo id -> commit)."""
    server = HubServer().start()
    commits = {"jfkback/crumb": server.put_folder("dataset", "jfkback/crumb", CRUMB_RELEASE)}
    for part in ("LoCoV1-Documents", "LoCoV1-Queries"):
        commits[f"hazyresearch/{part}"] = server.put_folder("dataset", f"hazyresearch/{part}", LOCOV1_RELEASE / part)
    commits["hltcoe/coveragebench"] = server.put_folder("dataset", "hltcoe/coveragebench", COVERAGEBENCH_RELEASE,
                                                        skip=("corpus/",))  # the release holds no document text
    corpus = tmp_path_factory.mktemp("crux_corpus")
    (corpus / "corpus.jsonl").write_bytes((COVERAGEBENCH_RELEASE / "corpus" / "crux_duc04.jsonl").read_bytes())
    commits[CRUX_CORPUS] = server.put_folder("dataset", CRUX_CORPUS, corpus)
    yield server, commits
    server.stop()


def _env(server: HubServer, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**client_env(server, tmp_path / "hf"), "COMPLEXIR_CACHE": str(tmp_path / "cache"), **extra}


def _result(output: Path, task: str = TASK) -> dict:
    """The MTEB result JSON of ``task`` under a run's output folder."""
    (path,) = (output / "results").rglob(f"{task}.json")
    return json.loads(path.read_text())


def _scores(result: dict) -> dict[str, float]:
    return {k: v for k, v in result["scores"]["test"][0].items() if isinstance(v, float)}


def _cache_model(home: Path, model_path: Path) -> None:
    """Put the packaged all-MiniLM-L6-v2 into the Hugging Face cache at ``home`` at mteb's revision (symlinks), as
    a download would have: what `mteb run -m MODEL` loads offline."""
    repo = home / "hub" / ("models--" + MODEL.replace("/", "--"))
    for file in model_path.rglob("*"):
        if file.is_file():
            target = repo / "snapshots" / MODEL_REVISION / file.relative_to(model_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(file)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(MODEL_REVISION)


def _entries(cache: Path, folder: str) -> list[Path]:
    """The complete cache entries of a benchmark (a folder holding its record)."""
    return sorted(p.parent for p in (cache / folder).glob("*/complexir-*/*/upstream-build.json"))


def test_a_missing_repo_is_built_from_upstream_once_and_scores_like_a_local_build(bare_hub, tmp_path, model_path):
    server, commits = bare_hub
    env = _env(server, tmp_path)
    cache = tmp_path / "cache"

    # the reference: the same release built locally by `complexir build`, scored by `complexir run --data-dir`
    data = tmp_path / "data"
    local = run_client(
        "import sys\nfrom complexir.cli.main import main\n"
        f"sys.exit(main(['build', 'crumb', '--source', {str(CRUMB_RELEASE)!r}, '--subset', 'legal_qa', "
        f"'--out', {str(data / 'crumb')!r}, '--no-progress']) or main(['run', '--data-dir', {str(data)!r}, "
        f"'--task', {TASK!r}, '--output', {str(tmp_path / 'local')!r}]))", env)
    assert local.returncode == 0, local.stderr[-3000:]
    expected = _result(tmp_path / "local")
    assert expected["dataset_revision"].startswith("local-crumb-")

    # two `complexir run --data-dir hub` racing on an empty cache: one builds, the other waits and reads
    racers = [subprocess.Popen(
        [sys.executable, "-c", NETWORK_GUARD + "import sys\nfrom complexir.cli.main import main\nsys.exit(main("
         f"['run', '--data-dir', 'hub', '--task', {TASK!r}, '--output', {str(tmp_path / f'racer{i}')!r}]))"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outputs = [racer.communicate(timeout=900) for racer in racers]
    for racer, (_, err) in zip(racers, outputs, strict=True):
        assert racer.returncode == 0, err[-3000:]
    sha = commits["jfkback/crumb"]
    building = f"complexir/crumb is not on the Hub: building CRUMB (legal_qa) from jfkback/crumb@{sha}"
    assert sum(building in err for _, err in outputs) == 1, [err[-2000:] for _, err in outputs]

    (entry,) = _entries(cache, "crumb")
    assert entry.relative_to(cache).parts[:2] == ("crumb", f"jfkback--crumb@{commits['jfkback/crumb']}")
    assert entry.name == "legal_qa" and not [p for p in entry.parent.iterdir() if ".partial-" in p.name]
    # the same data as the local build (same content digest), so the same scores
    digest = expected["dataset_revision"].removeprefix("local-crumb-")
    built_from = f"built from jfkback/crumb@{commits['jfkback/crumb']} by complexir "
    for i, (out, _) in enumerate(outputs):
        result = _result(tmp_path / f"racer{i}")
        assert result["dataset_revision"] == f"upstream-build-crumb-{digest}"
        assert _scores(result) == _scores(expected)
        assert f"data: CRUMB: {built_from}" in out
        (per_query,) = (tmp_path / f"racer{i}" / "per_query").rglob(f"{TASK}.json")
        data = json.loads(per_query.read_text())["data"]
        assert data["kind"] == "upstream" and data["built_from"] == f"jfkback/crumb@{commits['jfkback/crumb']}"
        assert data["builder"].startswith("complexir ") and data["revision"] == result["dataset_revision"]

    # mteb's own API on our task as mteb's registry has it (the mteb hook): reads the cache, builds nothing
    api = run_client(NO_BUILD + "import mteb\nfrom complexir.systems.models import load_model\n"
                     f"mteb.evaluate(load_model(), [mteb.get_task({TASK!r})], "
                     f"cache=mteb.ResultCache({str(tmp_path / 'api')!r}))", env)
    assert api.returncode == 0, api.stderr[-3000:]
    result = _result(tmp_path / "api")
    assert result["dataset_revision"] == f"upstream-build-crumb-{digest}"
    assert _scores(result) == pytest.approx(_scores(expected), abs=1e-5, nan_ok=True)  # mteb rounds what it writes

    # offline, the plain `mteb run -m MODEL -t CRUMBLegalQA` (the model from the Hugging Face cache): the cached
    # build, without a request to the Hub and without building
    _cache_model(tmp_path / "hf", model_path)
    seen = len(server.state.requests)
    offline = run_client(NO_BUILD + "import sys\nfrom mteb.cli import main\nsys.argv = ['mteb', 'run', '-m', "
                         f"{MODEL!r}, '-t', {TASK!r}, '--output-folder', {str(tmp_path / 'offline')!r}]\nmain()",
                         {**env, "HF_HUB_OFFLINE": "1"})
    assert offline.returncode == 0, offline.stderr[-3000:]
    assert server.state.requests[seen:] == []
    result = _result(tmp_path / "offline")
    assert result["dataset_revision"] == f"upstream-build-crumb-{digest}"
    assert _scores(result) == pytest.approx(_scores(expected), abs=1e-5, nan_ok=True)


# One LoCoV1 task's data as read: where from, and the content digest of the folder read.
READ_LOCOV1 = """
import json
from complexir.tasks import TASKS_BY_NAME
task = TASKS_BY_NAME["LoCoV1GovReport"]()
task.load_data()
prov = task.data_provenance()
print(json.dumps({"source": task.data_source()[0], "describe": prov.describe(), "revision": prov.revision,
                  "queries": len(task.dataset["default"]["test"]["queries"])}))
"""

# The build hard-killed (SIGKILL) after the loading script wrote its folder, before the entry is put in place.
KILLED_BUILD = """
import os, signal
from complexir.hub import build_cache
_run = build_cache._run_loading_script
def _then_die(*args, **kwargs):
    _run(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
build_cache._run_loading_script = _then_die
"""


def test_an_interrupted_build_is_never_read_and_offline_needs_a_finished_one(bare_hub, tmp_path):
    server, commits = bare_hub
    env = _env(server, tmp_path)
    cache = tmp_path / "cache"

    nothing = run_client(READ_LOCOV1, {**env, "HF_HUB_OFFLINE": "1"})  # offline, nothing built yet: one line
    assert nothing.returncode != 0
    last = nothing.stderr.strip().splitlines()[-1]
    assert last.startswith("FileNotFoundError: complexir/locov1 is not in the Hugging Face cache and no build of "
                           "LoCoV1 (gov_report)"), last

    seen = len(server.state.requests)
    killed = run_client(KILLED_BUILD + READ_LOCOV1, env)
    assert killed.returncode == -9, killed.stderr[-3000:]
    # the task reads gov_report: of the releases' task files, only gov_report's were fetched (the Hub's real
    # documents/ is 382 MB for 12 tasks); the other two tasks' files are on this Hub and in neither snapshot
    fetched = {path.split("/resolve/", 1)[1].split("/", 1)[1] for method, path in server.state.requests[seen:]
               if method == "GET" and "/resolve/" in path and "/LoCoV1-" in path}
    assert {p for p in fetched if p.startswith("documents/")} == {"documents/gov_report_test.jsonl"}, fetched
    assert {"documents/qasper_abstract_test.jsonl", "documents/stackoverflow_test.jsonl"} <= set(
        server.files("dataset", "hazyresearch/LoCoV1-Documents"))
    snapshots = sorted((tmp_path / "hf" / "hub").glob("datasets--hazyresearch--LoCoV1-*/snapshots/*/documents/*"))
    assert [p.name for p in snapshots] == ["gov_report_test.jsonl"] * 2
    assert _entries(cache, "locov1") == []
    assert list((cache / "locov1").glob("*/complexir-*/.gov_report.partial-*"))  # what the kill left
    again = run_client(READ_LOCOV1, {**env, "HF_HUB_OFFLINE": "1"})
    assert again.returncode != 0 and "no build of LoCoV1 (gov_report)" in again.stderr

    # online: built (once), the leftover removed, the same data as `complexir build locov1` of the release
    local = run_cli(["build", "locov1", "--source", str(LOCOV1_RELEASE), "--subset", "gov_report",
                     "--out", str(tmp_path / "data" / "locov1"), "--no-progress"], env)
    assert local.returncode == 0, local.stderr[-3000:]
    built = run_client(READ_LOCOV1, env)
    assert built.returncode == 0, built.stderr[-3000:]
    assert built.stderr.count("is not on the Hub: building LoCoV1 (gov_report)") == 1
    read = json.loads(built.stdout.splitlines()[-1])
    (entry,) = _entries(cache, "locov1")
    documents, queries = commits["hazyresearch/LoCoV1-Documents"], commits["hazyresearch/LoCoV1-Queries"]
    assert entry.relative_to(cache).parts[1] == (f"hazyresearch--LoCoV1-Documents@{documents}"
                                                 f"+hazyresearch--LoCoV1-Queries@{queries}")
    assert not list((cache / "locov1").glob("*/complexir-*/.gov_report.partial-*"))
    assert read["source"] == str(entry / "locov1") and read["queries"] > 0
    assert read["describe"].startswith(f"built from hazyresearch/LoCoV1-Documents@{documents}, "
                                       f"hazyresearch/LoCoV1-Queries@{queries} by complexir ")
    from complexir.hub import provenance

    assert read["revision"] == f"upstream-build-locov1-{provenance.content_digest(tmp_path / 'data' / 'locov1')}"


# The CRUX DUC 2004 task's data as read: where from, and what it was built from.
READ_CRUX = """
import json
from complexir.tasks import TASKS_BY_NAME
task = TASKS_BY_NAME["CoverageBenchCRUXDUC04"]()
task.load_data()
print(json.dumps({"source": task.data_source()[0], "describe": task.data_provenance().describe()}))
"""


def _corpus_texts(folder: Path) -> dict[str, str]:
    import pyarrow.parquet as pq

    rows = [r for p in sorted((folder / "data" / "crux_duc04").glob("corpus-*.parquet"))
            for r in pq.read_table(p).to_pylist()]
    return {r["id"]: r["text"] for r in rows}


def test_a_new_commit_of_a_document_collection_is_a_new_build_that_names_it(bare_hub, tmp_path):
    """CoverageBench's documents live outside its release: the cache key and the provenance hold the collection's
    commit, and the build reads the collection at that commit."""
    server, commits = bare_hub
    env = _env(server, tmp_path)
    cache = tmp_path / "cache"
    release, first = commits["hltcoe/coveragebench"], commits[CRUX_CORPUS]

    read = run_client(READ_CRUX, env)
    assert read.returncode == 0, read.stderr[-3000:]
    assert read.stderr.count("is not on the Hub: building CoverageBench (crux_duc04)") == 1
    built_from = f"built from hltcoe/coveragebench@{release}; documents: {CRUX_CORPUS}@{first} by complexir "
    assert json.loads(read.stdout.splitlines()[-1])["describe"].startswith(built_from)
    (entry,) = _entries(cache, "coveragebench")
    record = json.loads((entry / "upstream-build.json").read_text())
    assert record["upstream"] == {"hltcoe/coveragebench": release}
    assert record["documents"] == {f"hf:{CRUX_CORPUS}": first}
    key = entry.relative_to(cache).parts[1]
    assert key.startswith(f"hltcoe--coveragebench@{release}+documents-")
    # the card names the collection at its commit; the text is the collection's
    assert f"hf:{CRUX_CORPUS}@{first}" in (entry / "coveragebench" / "README.md").read_text()
    original = _corpus_texts(entry / "coveragebench")
    changed_id = sorted(original)[0]

    # the collection gets a new commit (one document's text changes): a new build, keyed and named by it
    corpus = tmp_path / "crux_corpus_v2"
    corpus.mkdir()
    lines = (COVERAGEBENCH_RELEASE / "corpus" / "crux_duc04.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    for row in rows:
        if row["id"] == changed_id:
            row["contents"] = "A corrected text of this passage, published in the collection's second commit."
    (corpus / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    second = server.put_folder("dataset", CRUX_CORPUS, corpus)
    again = run_client(READ_CRUX, env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stderr.count("is not on the Hub: building CoverageBench (crux_duc04)") == 1
    assert json.loads(again.stdout.splitlines()[-1])["describe"].startswith(
        f"built from hltcoe/coveragebench@{release}; documents: {CRUX_CORPUS}@{second} by complexir ")
    entries = _entries(cache, "coveragebench")
    assert len(entries) == 2 and entry in entries
    (new,) = [e for e in entries if e != entry]
    assert new.relative_to(cache).parts[1] != key
    assert json.loads((new / "upstream-build.json").read_text())["documents"] == {f"hf:{CRUX_CORPUS}": second}
    texts = _corpus_texts(new / "coveragebench")
    assert texts[changed_id].startswith("A corrected text") and original[changed_id] != texts[changed_id]

    # a build pinned to the first commit reads the first commit's text, although main has moved on
    pinned = run_cli(["build", "coveragebench", "--subset", "crux_duc04", "--docs",
                      f"crux_duc04=hf:{CRUX_CORPUS}@{first}", "--out", str(tmp_path / "pinned"),
                      "--no-progress"], env)
    assert pinned.returncode == 0, pinned.stderr[-3000:]
    assert _corpus_texts(tmp_path / "pinned") == original

    # `complexir cache` lists both builds with what each was built from; --keep-latest keeps the newer one
    listed = run_cli(["cache", "list", "--json", "--benchmark", "CoverageBench"], env)
    assert listed.returncode == 0, listed.stderr[-3000:]
    builds = {b["path"]: b for b in json.loads(listed.stdout)["builds"]}
    assert set(builds) == {str(entry), str(new)}
    assert builds[str(entry)]["documents"] == {f"hf:{CRUX_CORPUS}": first}
    assert builds[str(new)]["built_from"] == f"hltcoe/coveragebench@{release}; documents: {CRUX_CORPUS}@{second}"
    assert builds[str(new)]["last_used"] >= builds[str(new)]["built_at"]
    pruned = run_cli(["cache", "prune", "--keep-latest"], env)
    assert pruned.returncode == 0, pruned.stderr[-3000:]
    assert _entries(cache, "coveragebench") == [new]


def test_a_missing_document_collection_is_named_in_one_line(tmp_path):
    """The release is on the Hub, the collection a subset reads is not (or not for this token): the error names the
    collection, not the release, and says how to build from a local copy."""
    server = HubServer().start()
    try:
        server.put_folder("dataset", "hltcoe/coveragebench", COVERAGEBENCH_RELEASE, skip=("corpus/",))
        result = run_client("from complexir.hub import build_cache\n"
                            "from complexir.registry.benchmarks import COVERAGEBENCH\n"
                            "build_cache.ensure_built(COVERAGEBENCH, ['crux_duc04'])", _env(server, tmp_path))
    finally:
        server.stop()
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"FileNotFoundError: the documents of CoverageBench (crux_duc04) come from the Hub dataset "
                           f"{CRUX_CORPUS}, which is not on the Hub for this token"), last
    assert "`complexir build coveragebench --docs SUBSET=FILE ... --out DATA/coveragebench`" in last
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("upstream-build.json"))


def test_irsc_without_a_repo_says_in_one_line_how_to_build_it(bare_hub, tmp_path):
    server, _ = bare_hub
    result = run_client("from complexir.tasks import TASKS_BY_NAME\nTASKS_BY_NAME['IRSCQuery']().load_data()",
                        _env(server, tmp_path))
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("FileNotFoundError: complexir/irsc is not on the Hub, and IRSC has no release complexir "
                           "knows how to read")
    assert "`complexir build irsc --source PAIRS --out DATA/irsc`" in last
    assert not (tmp_path / "cache").exists()
