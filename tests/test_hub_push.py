"""`complexir push` against a Hub (the local server of tests/hub_server.py): datasets and metric Spaces read
back byte-identical, `evaluate.load("<org>/<metric>")` from the pushed Space, visibility, "no changes", and
every Hub or network failure as one line without a traceback."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
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
