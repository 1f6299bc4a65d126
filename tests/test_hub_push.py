"""`complexir push` against a Hub (the local server of tests/hub_server.py): datasets and metric Spaces read
back byte-identical, `evaluate.load("<org>/<metric>")` from the pushed Space, visibility, "no changes", and
every Hub or network failure as one line without a traceback."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
import yaml
from hub_server import FOREIGN_NAMESPACE, TOKEN, client_env, run_cli, run_client

from complexir.hub.push import plan_push

# end to end through the local Hub server, the clients in subprocesses
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "complexir" / "demo"
METRICS = ("alpha_ndcg", "strecall", "retrieval")


def _tree(folder: Path) -> dict[str, bytes]:
    """What a push of ``folder`` uploads (its plan: every file but caches and the writer's marker), with bytes."""
    return {path: (folder / path).read_bytes() for path, _ in plan_push(folder).files}


def _one_line_error(result, *needles: str) -> str:
    """The run failed with exactly one stderr line, holding ``needles``, no traceback and never the token."""
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and TOKEN not in result.stderr + result.stdout
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_push_a_benchmark_reads_back_byte_identical(hub, tmp_path):
    folder = shutil.copytree(DEMO / "locov1", tmp_path / "locov1")
    env = client_env(hub, tmp_path / "hf")
    repo = "complexir-tester/locov1-pushed"

    first = run_cli(["push", str(folder), "--repo", repo], env)
    assert first.returncode == 0, first.stderr
    assert f"to dataset repo {repo} (commit " in first.stdout and "created public" in first.stdout
    uploaded = {p: b for p, b in hub.files("dataset", repo).items() if p != ".gitattributes"}
    assert uploaded == _tree(folder) and "README.md" in uploaded and len(uploaded) > 5
    assert any(stored.lfs for stored in hub.repo("dataset", repo).commits[-1].files.values())  # parquet via LFS

    # read back by a client, through the CDN redirect for the LFS files
    code = (f"import json\nfrom pathlib import Path\nfrom huggingface_hub import snapshot_download\n"
            f"root = Path(snapshot_download({repo!r}, repo_type='dataset'))\n"
            "print(json.dumps({p.relative_to(root).as_posix(): p.read_bytes().hex() for p in root.rglob('*') "
            "if p.is_file() and p.name != '.gitattributes'}))")
    result = run_client(code, env)
    assert result.returncode == 0, result.stderr
    assert {p: bytes.fromhex(h) for p, h in json.loads(result.stdout.splitlines()[-1]).items()} == _tree(folder)

    # the Hub Benchmark's eval.yaml arrives with the folder and reads back as mteb's HFEvalMeta
    from complexir.mteb.internals import hf_eval_meta

    code = (f"from huggingface_hub import hf_hub_download\n"
            f"print(open(hf_hub_download({repo!r}, 'eval.yaml', repo_type='dataset')).read())")
    result = run_client(code, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n") == (folder / "eval.yaml").read_text().rstrip("\n")
    assert hf_eval_meta().model_validate(yaml.safe_load(result.stdout)).name == "LoCoV1"

    commits = len(hub.repo("dataset", repo).commits)
    again = run_cli(["push", str(folder), "--repo", repo], env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"no changes: dataset repo {repo}")
    assert len(hub.repo("dataset", repo).commits) == commits  # the Hub made no empty commit

    assert not hub.repo("dataset", repo).private
    private = run_cli(["push", str(folder), "--repo", repo, "--private"], env)
    assert private.returncode == 0, private.stderr
    assert "made private" in private.stdout and hub.repo("dataset", repo).private
    # without --private the repo stays private: a push never publishes a private repo
    kept = run_cli(["push", str(folder), "--repo", repo], env)
    assert kept.returncode == 0 and "private:" in kept.stdout and hub.repo("dataset", repo).private
    for run in (first, again, private, kept):
        assert TOKEN not in run.stdout + run.stderr


def test_push_metric_spaces_and_load_them_with_evaluate(hub, tmp_path):
    env = client_env(hub, tmp_path / "hf")
    cases = {
        "alpha_ndcg": dict(predictions=[["d1", "d3", "d2"], ["d9"]],
                           references=[[{"doc_id": "d1", "nugget_id": "1", "label": 1},
                                        {"doc_id": "d2", "nugget_id": "2", "label": 1},
                                        {"doc_id": "d3", "nugget_id": "1", "label": 1}],
                                       [{"doc_id": "d8", "nugget_id": "1", "label": 1}]], k=[1, 3], alpha=0.5),
        "strecall": dict(predictions=[["d1", "d3", "d2"]],
                         references=[[{"doc_id": "d1", "nugget_id": "1", "label": 1},
                                      {"doc_id": "d2", "nugget_id": "2", "label": 1}]], k=[1, 3]),
        "retrieval": dict(predictions=[["b", "a"], []],
                          references=[[{"doc_id": "a", "label": 1}, {"doc_id": "c", "label": 0}],
                                      [{"doc_id": "x", "label": 2}]], k=[1, 2]),
    }
    for name in METRICS:
        repo = f"complexir-tester/{name}"
        result = run_cli(["push", str(REPO / "metrics" / name), "--repo", repo], env)
        assert result.returncode == 0, result.stderr
        plan = plan_push(REPO / "metrics" / name, repo, stage_dir=tmp_path / "staged" / name)
        staged = {path: (plan.upload_folder / path).read_bytes() for path, _ in plan.files}
        assert {p: b for p, b in hub.files("space", repo).items() if p != ".gitattributes"} == staged
        assert hub.repo("space", repo).sdk == "gradio"

    code = (f"import json, evaluate\ncases = {cases!r}\n"
            "print(json.dumps({name: evaluate.load(f'complexir-tester/{name}').compute(**call) "
            "for name, call in cases.items()}))")
    result = run_client(code, env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in METRICS:  # fetched from the Space: the script, then the sibling it imports
        for fetched in (f"{name}.py", "_complexir_metrics.py"):
            assert ("GET", f"/spaces/complexir-tester/{name}/resolve/main/{fetched}") in hub.state.requests
    from_hub = json.loads(result.stdout.splitlines()[-1])

    import evaluate

    for name, call in cases.items():
        local = evaluate.load(str(REPO / "metrics" / name)).compute(**call)
        assert from_hub[name] == pytest.approx(local, abs=1e-12), name
        assert from_hub[name]  # each case scored something


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_hub_and_network_failures_are_one_line(hub, tmp_path):
    folder = DEMO / "irsc"
    home = tmp_path / "hf"
    no_token = run_cli(["push", str(folder), "--repo", "complexir-tester/irsc-x"], client_env(hub, home, token=False))
    _one_line_error(no_token, "complexir push: error:", "complexir-tester/irsc-x", "401", "HF_TOKEN")
    assert hub.repo("dataset", "complexir-tester/irsc-x") is None

    foreign = run_cli(["push", str(folder), "--repo", f"{FOREIGN_NAMESPACE}/irsc"], client_env(hub, home))
    _one_line_error(foreign, f"{FOREIGN_NAMESPACE}/irsc", "403", "write")

    offline = run_cli(["push", str(folder), "--repo", "complexir-tester/irsc-x"],
                      client_env(hub, home, offline=True))
    _one_line_error(offline, "complexir-tester/irsc-x", "HF_HUB_OFFLINE")

    env = client_env(hub, home)
    env["HF_ENDPOINT"] = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    unreachable = run_cli(["push", str(folder), "--repo", "complexir-tester/irsc-x"], env)
    _one_line_error(unreachable, "complexir-tester/irsc-x", "cannot reach the Hub", "HF_ENDPOINT")


@pytest.mark.parametrize("dry_run", [True, False])
def test_push_checks_the_folder_and_repo_id_first(hub, tmp_path, dry_run):
    env = client_env(hub, tmp_path / "hf")
    flags = ["--dry-run"] if dry_run else []
    bad_id = run_cli(["push", str(DEMO / "irsc"), "--repo", "org/bad..name", *flags], env)
    _one_line_error(bad_id, "org/bad..name", "not a valid Hub repo id")
    no_namespace = run_cli(["push", str(DEMO / "irsc"), "--repo", "irsc", *flags], env)
    _one_line_error(no_namespace, "ORG/NAME")

    folder = shutil.copytree(DEMO / "irsc", tmp_path / "irsc")
    shard = next(folder.glob("data/*/corpus-*.parquet"))
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])  # truncated
    seen = len(hub.state.requests)
    truncated = run_cli(["push", str(folder), "--repo", "complexir-tester/irsc-truncated", *flags], env)
    _one_line_error(truncated, shard.name, "not a readable parquet file")
    assert hub.state.requests[seen:] == []  # refused before any request


# -- results to model repos, and the Benchmark's leaderboard ----------------------------------------------------


def _report_folder(out: Path, revision: str, score: float, *, tasks: list[str] | None = None,
                   demo: bool = False) -> Path:
    """A report folder as ``complexir report`` writes it (its ``.eval_results`` by the report's own writer) for
    LoCoV1 results of one model, every task at ``score`` (all twelve by default: a benchmark-level file too)."""
    from mteb.results import TaskResult

    from complexir.analysis.report import write_eval_results_folder
    from complexir.runs.results import ModelRun
    from complexir.tasks import benchmarks_by_name

    names = tasks or [t.metadata.name for t in benchmarks_by_name()["LoCoV1"].tasks]
    results = {name: TaskResult(dataset_revision=revision, task_name=name, mteb_version="2.26.0",
                                scores={"test": [{"hf_subset": "default", "languages": ["eng-Latn"],
                                                  "main_score": score, "ndcg_at_10": score}]},
                                evaluation_time=1.0) for name in names}
    out.mkdir(parents=True)
    (out / "README.md").write_text("---\ntags:\n- mteb\n---\n\n# a model\n", encoding="utf-8")
    write_eval_results_folder(ModelRun(model="m", revision="r", folder=out, task_results=results), out,
                              demo=set(names) if demo else set())
    return out


def test_results_reach_the_benchmark_leaderboard(hub, tmp_path):
    """A benchmark repo with its eval.yaml; one model publishes its report to its own repo (one commit), another's
    results are proposed to a repo of someone else as a pull request: the leaderboard of the benchmark ranks both
    (huggingface_hub's get_dataset_leaderboard), and model_info(expand=["evalResults"]) reads a model's entries."""
    env = client_env(hub, tmp_path / "hf")
    benchmark = "complexir/locov1"  # the dataset.id our .eval_results name: the spec's Hub repo
    commit = hub.put_folder("dataset", benchmark, DEMO / "locov1", skip=(".complexir-build",))
    strong = _report_folder(tmp_path / "strong", commit, 0.75)
    weak = _report_folder(tmp_path / "weak", commit, 0.25)
    hub.put_folder("model", f"{FOREIGN_NAMESPACE}/weak-model", tmp_path / "weak", skip=(".eval_results",))

    own = run_cli(["push", str(strong), "--repo", "complexir-tester/strong-model"], env)
    assert own.returncode == 0, own.stderr
    assert "to model repo complexir-tester/strong-model (commit " in own.stdout
    files = hub.files("model", "complexir-tester/strong-model")
    assert files[".eval_results/LoCoV1.yaml"] == (strong / ".eval_results" / "LoCoV1.yaml").read_bytes()

    main_before = hub.repo("model", f"{FOREIGN_NAMESPACE}/weak-model").commits[-1].sha
    proposed = run_cli(["push", str(weak), "--repo", f"{FOREIGN_NAMESPACE}/weak-model", "--create-pr"], env)
    assert proposed.returncode == 0, proposed.stderr
    assert f"opened pull request {hub.url}/{FOREIGN_NAMESPACE}/weak-model/discussions/1" in proposed.stdout
    repo = hub.repo("model", f"{FOREIGN_NAMESPACE}/weak-model")
    assert repo.commits[-1].sha == main_before  # main untouched: the files are in refs/pr/1
    assert ".eval_results/LoCoV1.yaml" in repo.pull_requests[1].files

    hub.put_folder("dataset", "complexir-tester/not-a-benchmark", DEMO / "locov1", skip=("eval.yaml",))
    tuned = _report_folder(tmp_path / "tuned", commit, 0.5)  # a fine-tune: off the default view
    (tuned / "README.md").write_text("---\nbase_model: complexir-tester/strong-model\n---\n# tuned\n")
    hub.put_folder("model", "complexir-tester/tuned-model", tuned)
    code = (f"import json\nfrom huggingface_hub import HfApi\nfrom huggingface_hub.errors import HfHubHTTPError\n"
            f"api = HfApi()\nboard = api.get_dataset_leaderboard({benchmark!r})\n"
            "info = api.model_info('complexir-tester/strong-model', expand=['evalResults'])\n"
            "try:\n    api.get_dataset_leaderboard('complexir-tester/not-a-benchmark')\n    status = None\n"
            "except HfHubHTTPError as error:\n    status = error.response.status_code\n"
            "print(json.dumps({'board': [[e.rank, e.model_id, e.value, e.pull_request, e.filename] for e in board],"
            " 'model': sorted((r.dataset_id, r.task_id, r.value, r.dataset_revision) for r in info.eval_results),"
            " 'no_eval_yaml': status, 'with_fine_tunes': [e.model_id for e in "
            f"api.get_dataset_leaderboard({benchmark!r}, base_model_only=False)]}}))")
    result = run_client(code, env)
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.splitlines()[-1])
    headline = ".eval_results/LoCoV1.yaml"  # the benchmark-level file: the first task of the eval.yaml
    assert answer["board"] == [[1, "complexir-tester/strong-model", pytest.approx(75.0), None, headline],
                               [2, f"{FOREIGN_NAMESPACE}/weak-model", pytest.approx(25.0), 1, headline]]
    assert answer["no_eval_yaml"] == 404  # a dataset without eval.yaml is no Benchmark: no leaderboard
    assert answer["with_fine_tunes"] == ["complexir-tester/strong-model", "complexir-tester/tuned-model",
                                         f"{FOREIGN_NAMESPACE}/weak-model"]
    model = answer["model"]
    assert all(dataset == benchmark and revision == commit for dataset, _, _, revision in model)
    assert {task for _, task, _, _ in model} >= {"LoCoV1", "LoCoV1GovReport", "LoCoV1GovReport_default_test"}


def test_pushing_results_refuses_demo_and_needs_the_repo_for_a_pull_request(hub, tmp_path):
    env = client_env(hub, tmp_path / "hf")
    demo = _report_folder(tmp_path / "demo", "complexir-demo-locov1-0123456789abcdef", 0.5, tasks=["LoCoV1GovReport"],
                          demo=True)  # as complexir report --allow-demo labels them
    seen = len(hub.state.requests)
    refused = run_cli(["push", str(demo), "--repo", "complexir-tester/demo-model"], env)
    _one_line_error(refused, "LoCoV1GovReport.yaml", "DEMO data")
    assert hub.state.requests[seen:] == []  # refused before any request

    real = _report_folder(tmp_path / "real", "0" * 40, 0.5, tasks=["LoCoV1GovReport"])
    missing = run_cli(["push", str(real), "--repo", "complexir-tester/no-such-model", "--create-pr"], env)
    _one_line_error(missing, "complexir-tester/no-such-model", "not found")
    assert hub.repo("model", "complexir-tester/no-such-model") is None  # a pull request never creates the repo


def test_mtebs_own_push_lands_on_our_benchmark(hub, tmp_path):
    """mteb's own ``ModelResult.push_model_results(benchmark=...)`` works on our benchmarks now that they name their
    Hub repo (``benchmark_hf_repo``): its files land under ids of the repo's eval.yaml and the leaderboard ranks them.
    (mteb writes the benchmark's value on the 0-1 scale and the tasks' x 100; complexir report writes both x 100.)"""
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "README.md").write_text("# a model\n", encoding="utf-8")
    hub.put_folder("model", "complexir-tester/mteb-pushed", tmp_path / "model")
    if hub.repo("dataset", "complexir/locov1") is None:  # the session's Hub may have it from another test
        hub.put_folder("dataset", "complexir/locov1", DEMO / "locov1", skip=(".complexir-build",))
    code = (
        "import json, mteb\nfrom mteb.results import ModelResult, TaskResult\nfrom huggingface_hub import HfApi\n"
        "bench = mteb.get_benchmark('LoCoV1')\n"
        "print(json.dumps(bench.benchmark_hf_repo))\n"
        "results = [TaskResult(dataset_revision='1', task_name=t.metadata.name, mteb_version='2.26.0', "
        "scores={'test': [{'hf_subset': 'default', 'languages': ['eng-Latn'], 'main_score': 0.5}]}, "
        "evaluation_time=1.0) for t in bench.tasks]\n"
        "ModelResult(model_name='complexir-tester/mteb-pushed', model_revision='r', task_results=results)"
        ".push_model_results(benchmark=bench)\n"
        "print(json.dumps({e.model_id: e.value for e in HfApi().get_dataset_leaderboard('complexir/locov1')}))\n")
    result = run_client(code, client_env(hub, tmp_path / "hf"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.splitlines()[0]) == "complexir/locov1"
    assert json.loads(result.stdout.splitlines()[-1])["complexir-tester/mteb-pushed"] == 0.5  # mteb's 0-1 scale
    files = hub.files("model", "complexir-tester/mteb-pushed")
    ids = {t["id"] for t in yaml.safe_load((DEMO / "locov1" / "eval.yaml").read_text())["tasks"]}
    pushed = {(e["dataset"]["id"], e["dataset"]["task_id"]) for name, data in files.items()
              if name.startswith(".eval_results/") for e in yaml.safe_load(data)}
    assert ("complexir/locov1", "LoCoV1") in pushed
    # the demo folder serves all twelve tasks: every id mteb pushed (the benchmark, each task, each task's
    # subset and split) is one of its eval.yaml's
    assert {t for _, t in pushed} <= ids and len(pushed) == 1 + 12 * 2
