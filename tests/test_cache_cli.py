"""``complexir cache list|prune|clear`` on a cache of builds laid out as ``complexir.hub.build_cache`` writes them:
what is listed, what each rule deletes, that an entry whose build lock another process holds is never touched,
and that an entry leaves in one rename (no reader sees half of one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from import_probe import modules_imported_by

from complexir.cli.main import main
from complexir.hub import build_cache, cache_admin
from complexir.layout import atomic
from complexir.registry.benchmarks import CRUMB, LOCOV1

OLD, NEW = "1" * 40, "2" * 40
DAY = 86400.0


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(build_cache.CACHE_ENV, str(root))
    return root


def make_entry(spec, commits: dict[str, str], subsets: tuple[str, ...], *, size: int, built_days_ago: float,
               used_days_ago: float | None = None, documents: dict[str, str] | None = None) -> Path:
    """A finished entry as build_cache leaves one: the benchmark folder (``size`` bytes of data), the record and,
    when it was read since, the last-used stamp."""
    entry = build_cache.entry_path(spec, commits, subsets, documents)
    (entry / spec.folder).mkdir(parents=True)
    (entry / spec.folder / "data.parquet").write_bytes(b"x" * size)
    record = {"benchmark": spec.name, "upstream": commits, "documents": documents or {}, "subsets": list(subsets),
              "complexir": build_cache.complexir_version(), "built_at": time.time() - built_days_ago * DAY}
    (entry / "upstream-build.json").write_text(json.dumps(record))
    if used_days_ago is not None:
        stamp = time.time() - used_days_ago * DAY
        (entry / build_cache.LAST_USED).touch()
        os.utime(entry / build_cache.LAST_USED, (stamp, stamp))
    return entry


@pytest.fixture
def builds(cache):
    """Two CRUMB legal_qa builds (an old upstream commit, read 40 days ago; the current one, read today), a LoCoV1
    gov_report build read 20 days ago, and an unfinished build a killed process left."""
    old = make_entry(CRUMB, {"jfkback/crumb": OLD}, ("legal_qa",), size=3000, built_days_ago=60, used_days_ago=40)
    new = make_entry(CRUMB, {"jfkback/crumb": NEW}, ("legal_qa",), size=2000, built_days_ago=5, used_days_ago=0)
    loco = make_entry(LOCOV1, {"hazyresearch/LoCoV1-Documents": OLD, "hazyresearch/LoCoV1-Queries": NEW},
                      ("gov_report",), size=500, built_days_ago=30, used_days_ago=20)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    partial = new.parent / f".qmsum.partial-{dead.pid}-0123abcd"  # its builder died
    (partial / "crumb").mkdir(parents=True)
    (partial / "crumb" / "half.parquet").write_bytes(b"y" * 100)
    return {"old": old, "new": new, "loco": loco, "partial": partial}


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_list_shows_each_build_with_its_commits_size_and_last_use(builds, cache, capsys):
    assert main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["BENCHMARK", "BUILT", "FROM", "COMPLEXIR", "SUBSETS", "SIZE", "BUILT", "LAST",
                                "USED", "PATH"]
    row = next(line for line in lines if str(builds["old"]) in line)
    assert f"jfkback/crumb@{OLD[:12]} " in row and " legal_qa " in row  # commits cut to 12 characters
    assert "2 months ago  1 month ago" in row  # built 60 days ago, last read 40 days ago
    assert f" {cache_admin.format_size(_size(builds['old']))} " in row and _size(builds["old"]) > 3000
    assert "3 build(s)" in out and str(cache) in out
    assert "1 unfinished build(s) or removal(s) cut short" in out

    assert main(["cache", "list", "--json", "--benchmark", "CRUMB"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {b["path"] for b in listed["builds"]} == {str(builds["old"]), str(builds["new"])}
    old = next(b for b in listed["builds"] if b["path"] == str(builds["old"]))
    assert old["upstream"] == {"jfkback/crumb": OLD} and old["subsets"] == ["legal_qa"]
    assert old["size"] == _size(builds["old"]) and old["built_from"] == f"jfkback/crumb@{OLD}"
    assert time.time() - old["last_used"] == pytest.approx(40 * DAY, abs=60)
    assert [left["path"] for left in listed["leftovers"]] == [str(builds["partial"])]


def test_an_empty_cache_lists_nothing(cache, capsys):
    assert main(["cache", "list"]) == 0
    assert capsys.readouterr().out == f"no builds in {cache}\n"


def test_prune_needs_a_rule(builds, capsys):
    assert main(["cache", "prune"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("complexir cache: error: say which builds to prune")
    with pytest.raises(SystemExit) as exited:  # argparse's own exit, in the policy's one line
        main(["cache", "prune", "--older-than", "-1"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--older-than: expected a number of days >= 0, got '-1'" in err


def test_keep_latest_deletes_superseded_builds_and_leftovers(builds, cache, capsys):
    before = sorted(cache.rglob("*"))
    assert main(["cache", "prune", "--keep-latest", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"would remove: crumb (legal_qa) built from jfkback/crumb@{OLD}" in out and "unfinished build" in out
    assert sorted(cache.rglob("*")) == before  # a dry run deletes nothing and writes nothing

    assert main(["cache", "prune", "--keep-latest"]) == 0
    out = capsys.readouterr().out
    assert not builds["old"].exists() and not builds["partial"].exists()
    assert builds["new"].exists() and builds["loco"].exists()  # the latest of each benchmark and subsets
    assert "freed" in out
    assert not [p for p in builds["old"].parents[2].rglob("*") if ".removing-" in p.name]


def test_older_than_goes_by_last_use_and_with_keep_latest_spares_the_latest(builds, capsys):
    assert main(["cache", "prune", "--older-than", "30", "--keep-latest"]) == 0
    assert not builds["old"].exists() and builds["new"].exists() and builds["loco"].exists()  # loco: read 20 days ago
    assert main(["cache", "prune", "--older-than", "10"]) == 0
    assert not builds["loco"].exists() and builds["new"].exists()
    capsys.readouterr()


HOLD_LOCK = """
import sys
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("locked", flush=True)
sys.stdin.readline()
"""


def test_an_entry_whose_build_lock_another_process_holds_is_kept(builds, cache, capsys):
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(build_cache.lock_path(builds["new"]))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert main(["cache", "clear"]) == 0
        out = capsys.readouterr().out
        assert builds["new"].exists()
        assert not builds["old"].exists() and not builds["loco"].exists()
        assert f"in use: crumb (legal_qa) built from jfkback/crumb@{NEW}" in out
        assert "1 kept: another process holds its build lock" in out
    finally:
        holder.communicate("\n", timeout=60)
    assert main(["cache", "clear"]) == 0  # the lock released: now it goes
    assert not builds["new"].exists()
    left = sorted(p.name for p in cache.rglob("*") if p.is_file())
    assert all(name.endswith(".lock") for name in left), left  # only the (empty) lock files stay
    capsys.readouterr()


def test_an_entry_is_renamed_away_before_it_is_deleted(builds, monkeypatch, capsys):
    """What is deleted is always a hidden ``.<name>.removing-*`` sibling, whole when its deletion starts, and the
    entry's own name is already free then: a reader finds the whole entry or none."""
    seen = []
    remove_tree = atomic.remove_tree

    def spy(path):
        name = path.name[1:].split(".removing-")[0]
        seen.append((path.name, (path.parent / name).exists(), (path / "upstream-build.json").is_file()))
        return remove_tree(path)

    monkeypatch.setattr(atomic, "remove_tree", spy)
    assert main(["cache", "clear", "--benchmark", "crumb"]) == 0
    assert sorted(name.split(".removing-")[0] for name, _, _ in seen) == [".legal_qa", ".legal_qa", ".qmsum"]
    assert all(not still_there for _, still_there, _ in seen)
    assert [whole for name, _, whole in seen if name.startswith(".legal_qa")] == [True, True]
    assert not builds["old"].exists() and not builds["new"].exists() and not builds["partial"].exists()
    assert builds["loco"].exists()  # --benchmark crumb
    capsys.readouterr()


def test_a_failed_deletion_is_one_line_and_exit_1(builds, monkeypatch, capsys):
    monkeypatch.setattr(atomic, "remove_tree", lambda path: "Permission denied")
    assert main(["cache", "clear", "--benchmark", "locov1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("complexir cache: error: 1 build(s) could not be deleted")


def test_reading_an_entry_stamps_its_last_use(builds, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    stamp = builds["new"] / build_cache.LAST_USED
    os.utime(stamp, (0, 0))
    folder = build_cache.ensure_built(CRUMB, ["legal_qa"])  # offline: the newest finished build, read
    assert folder == builds["new"] / "crumb"
    assert time.time() - stamp.stat().st_mtime < 600


def test_the_cache_command_imports_no_model_or_dataset_library(builds):
    # it reads JSON records and walks folders: not even pyarrow or numpy
    heavy = ("mteb", "torch", "datasets", "sentence_transformers", "transformers", "ir_datasets", "pyarrow", "numpy")
    assert modules_imported_by(["cache", "list"], heavy) == []
