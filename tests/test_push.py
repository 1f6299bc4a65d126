"""complexir push: dataset vs Space detection, the dry-run plan, and the real Hub calls (mocked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from complexir.cli.main import main
from complexir.push import plan_push, push

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def benchmark_folder() -> Path:
    demos = sorted(p for p in (REPO / "complexir" / "demo").glob("*") if (p / "README.md").is_file())
    if not demos:
        pytest.fail("no demo benchmark folder in complexir/demo")
    return demos[0]


@pytest.fixture
def metric_folder(tmp_path) -> Path:
    real = REPO / "metrics" / "alpha_ndcg"
    if (real / "app.py").is_file():
        return real
    folder = tmp_path / "toy_metric"
    folder.mkdir()
    (folder / "toy_metric.py").write_text("import evaluate\n")
    (folder / "app.py").write_text("from evaluate.utils import launch_gradio_widget\n")
    (folder / "README.md").write_text("---\ntitle: toy\nsdk: gradio\n---\n")
    (folder / "requirements.txt").write_text("evaluate\n")
    return folder


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


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


def test_dry_run_on_a_metric_is_a_gradio_space(metric_folder, capsys, tmp_path):
    (metric_folder / "__pycache__").mkdir(exist_ok=True)
    junk = metric_folder / "__pycache__" / "x.cpython-311.pyc"
    created = not junk.exists()
    junk.write_bytes(b"\0")
    try:
        assert main(["push", str(metric_folder), "--repo", "org/metric", "--dry-run"]) == 0
        plan = plan_push(metric_folder)
    finally:
        if created:
            junk.unlink()
    assert "to space (sdk gradio) repo org/metric" in capsys.readouterr().out
    assert (plan.repo_type, plan.space_sdk) == ("space", "gradio")
    names = {p for p, _ in plan.files}
    assert {"app.py", "README.md"} <= names and not any("__pycache__" in n for n in names)
    assert names == _files(metric_folder)


def test_other_folders_are_refused(tmp_path):
    (tmp_path / "README.md").write_text("# just a readme\n")
    with pytest.raises(ValueError, match="neither a benchmark folder"):
        plan_push(tmp_path)
    assert main(["push", str(tmp_path / "missing"), "--repo", "o/n", "--dry-run"]) == 1


def test_push_calls_the_hub_with_the_right_repo_type(metric_folder, monkeypatch):
    import huggingface_hub

    calls = []
    monkeypatch.setattr(huggingface_hub, "create_repo", lambda *a, **k: calls.append(("create", a, k)))
    monkeypatch.setattr(huggingface_hub, "upload_folder", lambda *a, **k: calls.append(("upload", a, k)))
    push(metric_folder, "org/metric", private=True)
    (_, args, create), (_, _, upload) = calls
    assert args == ("org/metric",)
    assert create == {"repo_type": "space", "private": True, "exist_ok": True, "space_sdk": "gradio"}
    assert upload["repo_id"] == "org/metric" and upload["repo_type"] == "space"
    assert Path(upload["folder_path"]) == metric_folder and "token" not in upload
