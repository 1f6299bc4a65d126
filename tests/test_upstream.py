"""The shared upstream rooms: one release resolver and one set of build flags for every loading script."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from complexir.cli.main import main as complexir
from complexir.layout.errors import UpstreamFormatError
from complexir.layout.reader import list_subsets
from complexir.upstream.options import add_build_arguments
from complexir.upstream.release import resolve_release

LOADING_SCRIPTS = ("crumb", "irsc", "locov1", "coveragebench")


def test_local_folder_is_read_in_place(tmp_path: Path) -> None:
    (tmp_path / "release").mkdir()
    release = resolve_release(tmp_path / "release", "v2")
    assert release.local and release.root == (tmp_path / "release").resolve()
    assert release.requested_revision == "v2" and release.commit is None


def test_a_file_is_neither_a_folder_nor_a_hub_id(tmp_path: Path) -> None:
    (tmp_path / "pairs.jsonl").write_text("{}\n")
    with pytest.raises(UpstreamFormatError, match="expected a folder holding IRSC pair files, or a Hub dataset id"):
        resolve_release(tmp_path / "pairs.jsonl", expected="IRSC pair files")


def test_hub_id_is_a_snapshot_that_records_its_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def fake_snapshot_download(*, repo_id, repo_type, revision, cache_dir, allow_patterns):
        calls.append((repo_id, repo_type, revision, cache_dir, allow_patterns))
        folder = tmp_path / "hub" / "snapshots" / ("c" * 40)
        folder.mkdir(parents=True)
        return str(folder)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    release = resolve_release("org/bench", "v1", allow_patterns=("a/*",), cache_dir=tmp_path / "cache")
    assert calls == [("org/bench", "dataset", "v1", str(tmp_path / "cache"), ["a/*"])]
    assert not release.local and release.commit == "c" * 40 and release.hub_revision == "c" * 40


def test_hub_revision_without_a_snapshot_commit() -> None:
    from complexir.upstream.release import Release

    assert Release(Path("x"), "org/bench", local=False, requested_revision="v1").hub_revision == "v1"
    assert Release(Path("x"), "org/bench", local=False).hub_revision == "main"


def test_common_flags() -> None:
    parser = argparse.ArgumentParser()
    add_build_arguments(parser, default_source="org/bench", source_help="the release", subsets=("a", "b"))
    args = parser.parse_args(["--subset", "b", "a", "--revision", "v1", "--no-progress"])
    assert (args.source, args.revision, args.subset, args.no_progress) == ("org/bench", "v1", ["b", "a"], True)
    with pytest.raises(SystemExit):
        parser.parse_args(["--subset", "c"])  # not one of the benchmark's subsets

    required = argparse.ArgumentParser()
    add_build_arguments(required, default_source=None, source_help="pairs", subsets=("a",), only_known_subsets=False)
    with pytest.raises(SystemExit):
        required.parse_args([])  # no release to default to: --source is required
    assert required.parse_args(["--source", "x", "--subset", "later_task"]).subset == ["later_task"]


@pytest.mark.parametrize("benchmark", LOADING_SCRIPTS)
def test_every_loading_script_takes_the_common_flags(benchmark: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        complexir(["build", benchmark, "--help"])
    help_text = capsys.readouterr().out
    for flag in ("--source", "--revision", "--subset", "--no-progress", "--out", "--overwrite"):
        assert flag in help_text, f"complexir build {benchmark} lacks {flag}"


def test_irsc_release_from_the_hub_records_its_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """IRSC through the shared resolver: only pair files are fetched, and the card names the snapshot's commit."""
    calls = []

    def fake_snapshot_download(*, repo_id, repo_type, revision, cache_dir, allow_patterns):
        calls.append(sorted(allow_patterns))
        folder = tmp_path / "hub" / "snapshots" / ("d" * 40)
        folder.mkdir(parents=True)
        pair = {"task": "title", "query": "Eiffel Tower", "content": "The tower was completed in 1889.",
                "query_language": "en", "content_language": "en"}
        (folder / "pairs.jsonl").write_text(json.dumps(pair) + "\n", encoding="utf-8")
        return str(folder)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    out = tmp_path / "out"
    assert complexir(["build", "irsc", "--source", "org/irsc-pairs", "--revision", "v1", "--out", str(out),
                      "--no-progress"]) == 0
    assert calls == [["**/*.csv", "**/*.jsonl", "**/*.tsv", "*.csv", "*.jsonl", "*.tsv"]]
    assert list_subsets(out) == ["title-en"]
    assert "d" * 40 in (out / "README.md").read_text(encoding="utf-8")


def test_locov1_revision_applies_to_both_repos_unless_overridden(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from complexir.loading_scripts import locov1

    tiny = Path(__file__).parent / "fixtures" / "locov1" / "demo_upstream"
    calls = []

    def fake_snapshot_download(repo_id, *, repo_type, revision, cache_dir, allow_patterns):
        calls.append((repo_id, revision))
        folder = tmp_path / "hub" / repo_id.replace("/", "--") / "snapshots" / ("b" * 40)
        shutil.copytree(tiny / repo_id.split("/")[1], folder, dirs_exist_ok=True)
        return str(folder)

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    release = locov1.resolve_source(locov1.DEFAULT_SOURCE, revision="v2", queries_revision="v3")
    assert calls == [("hazyresearch/LoCoV1-Documents", "v2"), ("hazyresearch/LoCoV1-Queries", "v3")]
    assert release.revision == f"hazyresearch/LoCoV1-Documents@{'b' * 40}, hazyresearch/LoCoV1-Queries@{'b' * 40}"
