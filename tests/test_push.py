"""complexir push: dataset vs Space detection, the dry-run plan, and the real Hub calls (mocked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from complexir.cli.main import main
from complexir.hub.push import plan_push, push

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def benchmark_folder() -> Path:
    demos = sorted(p for p in (REPO / "complexir" / "demo").glob("*") if (p / "README.md").is_file())
    if not demos:
        pytest.fail("no demo benchmark folder in complexir/demo")
    return demos[0]


@pytest.fixture
def metric_folder() -> Path:
    return REPO / "metrics" / "alpha_ndcg"


def _files(folder: Path) -> set[str]:
    """Every file a push uploads: all but caches and the writer's local build marker."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.name != ".complexir-build"}


def test_dry_run_on_a_benchmark_lists_every_file(benchmark_folder, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_never_printed")
    assert main(["push", str(benchmark_folder), "--repo", "org/bench", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "to dataset repo org/bench" in out and "hf_secret" not in out
    plan = plan_push(benchmark_folder)
    assert plan.repo_type == "dataset" and plan.space_sdk is None
    assert {p for p, _ in plan.files} == _files(benchmark_folder)
    for path, size in plan.files:
        assert size == (benchmark_folder / path).stat().st_size
        assert f"{size:>12,d}  {path}" in out


def test_dry_run_on_a_metric_lists_the_staged_space(metric_folder, capsys):
    (metric_folder / "__pycache__").mkdir(exist_ok=True)
    junk = metric_folder / "__pycache__" / "x.cpython-311.pyc"
    created = not junk.exists()
    junk.write_bytes(b"\0")
    try:
        assert main(["push", str(metric_folder), "--repo", "org/metric", "--dry-run"]) == 0
        plan = plan_push(metric_folder, "org/metric")
    finally:
        if created:
            junk.unlink()
    out = capsys.readouterr().out
    assert "to space (sdk gradio) repo org/metric" in out and "_complexir_metrics.py" in out
    assert (plan.repo_type, plan.space_sdk, plan.upload_folder) == ("space", "gradio", None)
    # the script is renamed for the Space (evaluate.load("org/metric") fetches metric.py), the maths vendored
    assert {p for p, _ in plan.files} == {"app.py", "README.md", "requirements.txt", "metric.py",
                                         "_complexir_metrics.py"}
    sizes = dict(plan.files)
    assert sizes["README.md"] == (metric_folder / "README.md").stat().st_size
    assert f"{sizes['metric.py']:>12,d}  metric.py" in out


def test_stage_dir_keeps_the_staged_copy(metric_folder, tmp_path, capsys):
    stage = tmp_path / "stage"
    assert main(["push", str(metric_folder), "--repo", "org/alpha_ndcg", "--dry-run", "--stage-dir", str(stage)]) == 0
    assert f"staged in {stage}" in capsys.readouterr().out
    plan = plan_push(metric_folder, "org/alpha_ndcg", stage_dir=tmp_path / "again")
    assert plan.upload_folder == tmp_path / "again"
    assert _files(stage) == _files(plan.upload_folder) == {p for p, _ in plan.files}
    staged = (stage / "alpha_ndcg.py").read_text()
    assert "from ._complexir_metrics import mean_scores" in staged
    assert "from ._complexir_metrics import as_cutoffs, coverage_per_input" in staged
    assert "complexir.metrics" not in staged.split("_DESCRIPTION")[0].split('"""', 2)[2]
    assert "complexir" not in (stage / "requirements.txt").read_text()
    assert (stage / "README.md").read_bytes() == (metric_folder / "README.md").read_bytes()
    # a non-empty staging folder is refused (bad input: exit 2), not overwritten
    assert main(["push", str(metric_folder), "--repo", "org/alpha_ndcg", "--dry-run", "--stage-dir", str(stage)]) == 2


def test_other_folders_are_refused(tmp_path):
    (tmp_path / "README.md").write_text("# just a readme\n")
    with pytest.raises(ValueError, match="neither a benchmark folder"):
        plan_push(tmp_path)
    assert main(["push", str(tmp_path / "missing"), "--repo", "o/n", "--dry-run"]) == 2  # bad input


def test_push_shares_no_mutable_default(benchmark_folder, monkeypatch):
    """``upload_folder`` extends the ignore list it is given, in place: each push must hand it a fresh one.
    (The real Hub calls are tested against a local Hub in test_hub_push.py.)"""
    import huggingface_hub

    from complexir.hub import push as push_module

    given = []

    class FakeApi:
        def repo_info(self, repo_id, repo_type):
            return type("Info", (), {"sha": "a" * 40, "private": False})()

        def upload_folder(self, *, ignore_patterns, **kwargs):
            given.append(ignore_patterns)
            ignore_patterns += [".git", ".cache/huggingface"]  # as huggingface_hub does
            return type("Commit", (), {"oid": "b" * 40, "pr_url": None})()

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    before = tuple(push_module.IGNORE_PATTERNS)
    for _ in range(3):
        result = push(benchmark_folder, "org/bench")
        assert result.changed and result.commit == "b" * 40
    assert push_module.IGNORE_PATTERNS == before
    assert [len(g) for g in given] == [len(before) + 2] * 3 and given[0] is not given[1]
