"""``--out`` is safe: a build replaces only a folder it made itself, never an input, never writes outside
``--out``, and its swap is atomic against Ctrl-C, SIGTERM and failed deletions."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from complexir.cli.main import main
from complexir.layout import atomic
from complexir.layout.card import CardInfo
from complexir.layout.errors import LayoutError, LeftoverError, OutputFolderError
from complexir.layout.validation import validate_folder
from complexir.layout.writer import BUILD_MARKER, BenchmarkWriter

REPO = Path(__file__).resolve().parents[1]
TINY_LOCOV1 = REPO / "tests" / "fixtures" / "locov1" / "tiny_upstream"
CARD = CardInfo("toy", "Toy benchmark", "apache-2.0", "@misc{toy, title={Toy}}", "hand-written", revision="r1")


def build(out: Path, n_docs: int = 3, subset: str = "drugs", **kwargs) -> Path:
    with BenchmarkWriter(out, CARD, progress=False, **kwargs) as writer:
        writer.write_corpus(subset, ({"id": f"d{i}", "text": f"document {i}"} for i in range(n_docs)))
        writer.write_split(subset, "test", queries=[{"id": "q1", "text": "document"}],
                           qrels=[{"query-id": "q1", "corpus-id": "d0", "score": 1}])
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def documents(folder: Path) -> int:
    return validate_folder(folder)["drugs"]["documents"]


# -- an input is never replaced, written into, or holding the output ------------------------------------------------
def _copy_release(tmp_path: Path) -> Path:
    release = tmp_path / "release"
    shutil.copytree(TINY_LOCOV1, release)
    return release


@pytest.mark.parametrize(("out", "relation"), [("release", "is"), ("release/built", "lies inside"),
                                               ("release/LoCoV1-Documents", "lies inside"), (".", "holds")])
@pytest.mark.parametrize("overwrite", [True, False])
def test_out_is_never_the_source_inside_it_or_holding_it(tmp_path, monkeypatch, capsys, out, relation, overwrite):
    release = _copy_release(tmp_path)
    before = snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = ["build", "locov1", "--source", "release", "--out", out, "--no-progress"]
    assert main(args + (["--overwrite"] if overwrite else [])) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("complexir build: error: --out") and relation in err and "release" in err
    assert snapshot(tmp_path) == before and release.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]


def test_out_inside_a_local_docs_file_folder_is_refused(tmp_path):
    docs = tmp_path / "corpus"
    docs.mkdir()
    (docs / "c.jsonl").write_text('{"id": "d0", "text": "x"}\n')
    with pytest.raises(OutputFolderError, match="holds the build's input"):
        build(tmp_path, inputs=[docs / "c.jsonl"])


# -- only a folder the builder made is replaced ----------------------------------------------------------------------
@pytest.mark.parametrize("content", [
    {"notes.txt": "my thesis"},
    {"README.md": "---\nconfigs:\n- config_name: default\n  data_files: data.csv\n---\n", "data.csv": "a\n1\n"},
    {BUILD_MARKER + "x": "", "README.md": "# near miss\n"},
])
def test_overwrite_replaces_only_a_folder_the_builder_made(tmp_path, content):
    out = tmp_path / "out"
    out.mkdir()
    for name, text in content.items():
        (out / name).write_text(text)
    with pytest.raises(FileExistsError, match=f"no {BUILD_MARKER} file"):
        build(out, overwrite=True)
    assert {p.name: p.read_text() for p in out.iterdir()} == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_marker_that_is_a_link_does_not_count(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere").write_text("")
    (out / BUILD_MARKER).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FileExistsError, match="not written by complexir build"):
        build(out, overwrite=True)


def test_a_built_folder_is_replaced(tmp_path):
    out = build(tmp_path / "out", n_docs=3)
    assert (out / BUILD_MARKER).is_file()
    build(out, n_docs=5, overwrite=True)
    assert documents(out) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# -- nothing is written outside --out --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["../../escaped", "../x", "a/b", "/abs", "", ".", "..", ".hidden", "a b", "x" * 101,
                                  "default"])
def test_subset_names_that_are_not_plain_names_are_refused(tmp_path, name):
    with pytest.raises(LayoutError, match="subset name"):
        build(tmp_path / "deep" / "out", subset=name)
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")] == ["deep"]


@pytest.mark.parametrize("split", ["../x", "", "a/b"])
def test_split_names_that_are_not_plain_names_are_refused(tmp_path, split):
    with pytest.raises(LayoutError, match="split name"), BenchmarkWriter(tmp_path / "out", CARD, progress=False) as w:
        w.write_corpus("drugs", [{"id": "d0", "text": "x"}])
        w.write_split("drugs", split, queries=[{"id": "q1", "text": "x"}],
                      qrels=[{"query-id": "q1", "corpus-id": "d0", "score": 1}])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("dataset", ["../../escaped", "", "gov report", "a/b"])
def test_locov1_dataset_values_that_are_not_names_stop_the_build(tmp_path, capsys, dataset):
    release = _copy_release(tmp_path / "in")
    for repo in ("LoCoV1-Documents", "LoCoV1-Queries"):
        path = release / repo / "documents" / "gov_report_test.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        path.write_text("".join(json.dumps({**row, "dataset": dataset}) + "\n" for row in rows))
    work = tmp_path / "work"
    work.mkdir()
    out = work / "a" / "out"
    assert main(["build", "locov1", "--source", str(release), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "gov_report_test.jsonl" in err and "line 1" in err and "subset name" in err
    assert list(work.iterdir()) == []
    assert not (tmp_path / "escaped").exists()


# -- failed renames and deletions ------------------------------------------------------------------------------------
def test_a_previous_folder_that_cannot_be_deleted_is_named(tmp_path, monkeypatch):
    out = build(tmp_path / "out", n_docs=3)
    monkeypatch.setattr(atomic, "remove_tree", lambda path: f"{path}/data: Permission denied")
    with pytest.raises(LeftoverError, match=r"\.out\.old-.*could not be deleted.*Permission denied") as caught:
        build(out, n_docs=5, overwrite=True)
    assert documents(out) == 5  # the new build is in place...
    assert Path(caught.value.path).is_dir() and caught.value.path.name.startswith(".out.old-")  # ...the old named


def test_a_restore_that_fails_too_names_where_the_previous_folder_is(tmp_path, monkeypatch):
    out = build(tmp_path / "out")
    real_replace = os.replace

    def replace(src, dst):
        if ".partial-" in str(src) or ".old-" in str(src):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match=r"nor put the previous folder back from .*\.out\.old-"):
        build(out, n_docs=5, overwrite=True)


def test_an_interrupt_between_the_two_renames_restores_the_previous_folder(tmp_path, monkeypatch):
    """A Ctrl-C the deferral cannot hold (raised inside the second rename) puts --out back before exiting."""
    out = build(tmp_path / "out")
    before = snapshot(out)
    real_replace = os.replace

    def replace(src, dst):
        if ".partial-" in str(src):
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        build(out, n_docs=5, overwrite=True)
    assert snapshot(out) == before  # the previous folder, in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing left aside


def test_a_race_into_a_new_out_names_the_cli_flag(tmp_path):
    out = tmp_path / "out"
    writer = BenchmarkWriter(out, CARD, progress=False)
    with pytest.raises(FileExistsError, match="pass --overwrite to replace it") as caught:
        with writer:
            writer.write_corpus("drugs", [{"id": "d0", "text": "document 0"}])
            writer.write_split("drugs", "test", queries=[{"id": "q1", "text": "document"}],
                               qrels=[{"query-id": "q1", "corpus-id": "d0", "score": 1}])
            build(out)  # the other build wins the race
    assert "overwrite=True" not in str(caught.value)


# -- signals: at chosen and at random points, the previous folder is intact or the new one complete ----------------
CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from complexir.layout.card import CardInfo
    from complexir.layout.writer import BenchmarkWriter

    # A child of a background job without job control (nohup, `cmd &` in a script) inherits SIGINT and
    # sometimes SIGTERM ignored, and Python keeps them so: restore what an interactive terminal gives.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    out, mode, sig, n_docs = Path(sys.argv[1]), sys.argv[2], getattr(signal, sys.argv[3]), int(sys.argv[4])
    if mode.startswith("after-replace-"):  # signal ourselves right after the k-th rename of the swap
        k, real, count = int(mode.rsplit("-", 1)[1]), os.replace, [0]
        def replace(src, dst):
            real(src, dst)
            count[0] += 1
            if count[0] == k:
                os.kill(os.getpid(), sig)
        os.replace = replace
    if mode == "in-rmtree":  # signal ourselves while the previous folder is being deleted
        import shutil
        real_rmtree = shutil.rmtree
        def rmtree(path, *args, **kwargs):
            os.kill(os.getpid(), sig)
            real_rmtree(path, *args, **kwargs)
        shutil.rmtree = rmtree
    card = CardInfo("toy", "Toy", "apache-2.0", "@misc{toy}", "hand-written", revision="r1")
    def docs():
        for i in range(n_docs):
            if mode == "in-corpus" and i == n_docs // 2:
                os.kill(os.getpid(), sig)
            yield {"id": f"d{i}", "text": f"document {i}"}
    print("ready", flush=True)
    with BenchmarkWriter(out, card, overwrite=True, progress=False, batch_rows=500, shard_rows=2000) as writer:
        writer.write_corpus("drugs", docs())
        writer.write_split("drugs", "test", queries=[{"id": "q1", "text": "document"}],
                           qrels=[{"query-id": "q1", "corpus-id": "d0", "score": 1}])
""")


def _run_child(tmp_path: Path, out: Path, mode: str, sig: str, n_docs: int,
               delay: float | None = None) -> tuple[int, str, float]:
    """Run a build in a child process (signalled ``delay`` seconds after its imports, when given); return its exit
    code, its stderr and how long it ran after the imports."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(script), str(out), mode, sig, str(n_docs)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "ready"
    started = time.monotonic()
    if delay is not None:
        time.sleep(delay)
        proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err, time.monotonic() - started


def _assert_old_or_new(parent: Path, out: Path, old: dict[str, bytes], new_docs: int) -> str:
    """Only ``out`` is on disk, and it is the previous folder byte for byte or the new build, complete."""
    assert sorted(p.name for p in parent.iterdir() if p.name != "child.py") == [out.name]
    if snapshot(out) == old:
        return "old"
    assert documents(out) == new_docs and (out / BUILD_MARKER).is_file()
    return "new"


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize(("mode", "expected"), [("in-corpus", "old"), ("after-replace-1", "new"),
                                                ("after-replace-2", "new"), ("in-rmtree", "new")])
def test_a_signal_at_each_step_of_a_build_leaves_old_or_new(tmp_path, sig, mode, expected):
    parent = tmp_path / "data"
    out = build(parent / "out", n_docs=3)
    old = snapshot(out)
    rc, err, _ = _run_child(tmp_path, out, mode, sig, n_docs=3000)
    assert rc != 0, err  # interrupted: never reported as a success
    assert ("KeyboardInterrupt" if sig == "SIGINT" else "Terminated") in err
    assert _assert_old_or_new(parent, out, old, 3000) == expected


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_at_random_points_leaves_old_or_new(tmp_path, sig):
    """Signals at random instants over a whole build (its length measured first), swap included."""
    rc, err, duration = _run_child(tmp_path, tmp_path / "calibration" / "out", "random", sig, n_docs=10_000)
    assert rc == 0, err
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    parent = tmp_path / "data"
    out = build(parent / "out", n_docs=3)
    outcomes = []
    for round_ in range(6):
        old = snapshot(out)
        n_docs = 10_000 + round_  # each build differs from the previous one
        delay = rng.uniform(0.0, duration * 1.1)
        rc, err, _ = _run_child(tmp_path, out, "random", sig, n_docs=n_docs, delay=delay)
        context = f"seed {seed}, round {round_}, delay {delay:.3f} s of {duration:.3f} s: {err[-500:]}"
        outcome = _assert_old_or_new(parent, out, old, n_docs)
        assert rc != 0 or outcome == "new", context  # a success is never reported without the new folder
        outcomes.append((round(delay, 3), rc, outcome))
    print(f"seed {seed}, build {duration:.2f} s: {outcomes}")


def test_sigterm_handler_is_restored_after_a_build(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    build(tmp_path / "out")
    with pytest.raises(LayoutError):
        build(tmp_path / "out2", subset="../x")
    assert signal.getsignal(signal.SIGTERM) is before
