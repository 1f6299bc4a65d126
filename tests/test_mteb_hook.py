"""The .pth import hook: installed by both `pip install .` and `pip install -e .`, cheap at start-up, and the
real `mteb` console script then knows complexir's tasks and benchmarks (offline, model from a Hub cache)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "report"
PTH = "complexir_mteb.pth"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"  # mteb's ModelMeta for MODEL
SOURCES = ["pyproject.toml", "setup.py", "MANIFEST.in", PTH, "README.md",
           "complexir", "tasks", "metrics", "loading_scripts", "cards"]


def _make_venv(root: Path, *, editable: bool) -> Path:
    """A bare venv seeing this environment's packages (one path line), with the project installed."""
    src = root / "src"
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif (REPO / name).exists():
            shutil.copy2(REPO / name, src / name)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "zz_outer_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    cmd = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
           "--no-build-isolation", "--no-index"]
    subprocess.run([*cmd, *(["-e"] if editable else []), str(src)], check=True, capture_output=True)
    return venv


@pytest.fixture(scope="session")
def editable_venv(tmp_path_factory) -> Path:
    return _make_venv(tmp_path_factory.mktemp("editable"), editable=True)


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory) -> Path:
    return _make_venv(tmp_path_factory.mktemp("wheel"), editable=False)


def _site(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


@pytest.mark.slow  # a fresh venv per install mode
@pytest.mark.parametrize("mode", ["wheel", "editable"])
def test_both_install_modes_put_the_pth_in_site_packages(mode, request):
    venv = request.getfixturevalue(f"{mode}_venv")
    site = _site(venv)
    assert (site / PTH).read_text() == (REPO / PTH).read_text()
    record = next(site.glob("complexir-*.dist-info")).joinpath("RECORD").read_text()
    assert f"{PTH}," in record  # so `pip uninstall complexir` removes it
    # start-up: the finder is installed, nothing of mteb or complexir's tasks is imported
    probe = ("import sys; print(type(sys.meta_path[0]).__name__, "
             "any(m == 'mteb' or m.startswith(('mteb.', 'torch', 'complexir.tasks')) for m in sys.modules))")
    out = subprocess.run([venv / "bin" / "python", "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["MtebHookFinder", "False"]
    # and importing mteb registers our tasks in that interpreter, whichever module imports it first (a complexir
    # module that imports mteb before defining what the task modules import from it must not lose the tasks)
    check = ("import mteb, complexir.tasks as t; print(all(mteb.get_task(c.metadata.name) for c in t.TASKS) "
             "and all(mteb.get_benchmark(b.name) is b for b in t.BENCHMARKS))")
    for first in ("pass", "import complexir.systems.models", "import complexir.systems.long_docs",
                  "import complexir.tasks.locov1"):
        out = subprocess.run([venv / "bin" / "python", "-W", "error::RuntimeWarning", "-c", f"{first}; {check}"],
                             capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout.strip() == "True", (first, out.stderr[-2000:])


@pytest.fixture(scope="session")
def hf_home(tmp_path_factory, model_path) -> Path:
    """A Hugging Face cache holding the packaged all-MiniLM-L6-v2 at mteb's revision (symlinked files)."""
    home = tmp_path_factory.mktemp("hf_home")
    repo = home / "hub" / ("models--" + MODEL.replace("/", "--"))
    snapshot = repo / "snapshots" / MODEL_REVISION
    for file in model_path.rglob("*"):
        if file.is_file():
            target = snapshot / file.relative_to(model_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(file)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(MODEL_REVISION)
    return home


def _mteb(venv: Path, args: list[str], env: dict[str, str]) -> subprocess.Popen:
    """The real `mteb` console script of this environment, run by the venv's interpreter."""
    script = Path(sys.executable).parent / "mteb"
    return subprocess.Popen([venv / "bin" / "python", script, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow  # a fresh venv, the mteb CLI in a subprocess
def test_plain_mteb_cli_knows_and_runs_our_tasks(editable_venv, hf_home, tmp_path):
    import mteb
    from mteb.results import TaskResult

    from complexir.tasks import TASKS

    sys.path.insert(0, str(FIXTURES))
    try:
        import complexir_tiny
    finally:
        sys.path.remove(str(FIXTURES))
    data = tmp_path / "data"
    complexir_tiny.build(data)
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "COMPLEXIR_DATA_DIR": str(data),
           "COMPLEXIR_MTEB_TASK_MODULES": "complexir_tiny", "PYTHONPATH": str(FIXTURES),
           "COMPLEXIR_MTEB_HOOK": "strict"}
    listing = _mteb(editable_venv, ["available-tasks"], env)
    out = tmp_path / "out"
    run = _mteb(editable_venv, ["run", "-m", MODEL, "-b", complexir_tiny.BENCHMARK_NAME, "--output-folder", str(out)],
                env)
    (tasks_out, tasks_err), (_, run_err) = (p.communicate(timeout=300) for p in (listing, run))
    assert listing.returncode == 0, tasks_err[-3000:]
    for name in [c.metadata.name for c in TASKS] + [complexir_tiny.TASK_NAME]:
        assert f"- {name}," in tasks_out, name
    assert run.returncode == 0, run_err[-3000:]
    result_file = out / "results" / MODEL.replace("/", "__") / MODEL_REVISION / f"{complexir_tiny.TASK_NAME}.json"
    result = TaskResult.from_disk(result_file)
    scores = result.scores["test"][0]
    assert result.task_name == complexir_tiny.TASK_NAME and scores["hf_subset"] == "default"
    assert scores["main_score"] == scores["ndcg_at_10"] > 0.8  # six easy questions over ten sentences
    # the same task evaluated in this process gives the same numbers
    from complexir.mteb import hook as mteb_hook
    from complexir.systems.models import load_model

    mteb_hook.add_to_mteb(complexir_tiny.TASKS, [complexir_tiny.BENCHMARK])
    task = complexir_tiny.ComplexIRTinyHealth()
    task.data_dir = data
    here = mteb.evaluate(load_model(), [task], cache=None).task_results[0].scores["test"][0]
    assert here["ndcg_at_10"] == pytest.approx(scores["ndcg_at_10"], abs=1e-4)


def test_missing_registry_fails_loudly(monkeypatch):
    import importlib

    from complexir.mteb import hook as mteb_hook

    # `mteb.get_tasks` the attribute is the function; the registry lives in the module of that name
    monkeypatch.delattr(importlib.import_module("mteb.get_tasks"), "_TASKS_REGISTRY")
    with pytest.raises(mteb_hook.MtebHookError, match=r"mteb\.get_tasks\._TASKS_REGISTRY does not exist"):
        mteb_hook.add_to_mteb([], [])
    monkeypatch.setenv(mteb_hook.ENV_SWITCH, "on")
    monkeypatch.setattr(mteb_hook, "_registered", False)  # the installed .pth registered us at start-up
    with pytest.warns(mteb_hook.MtebHookWarning, match="_TASKS_REGISTRY does not exist"):
        mteb_hook._after_provider(sys.modules["complexir.tasks"])  # the hook's own guarded callback


def test_untested_mteb_version_warns_or_raises(monkeypatch):
    from complexir.mteb import hook as mteb_hook

    monkeypatch.setattr(mteb_hook, "_mteb_version", lambda: "2.27.0")
    monkeypatch.setenv(mteb_hook.ENV_SWITCH, "on")
    with pytest.warns(mteb_hook.MtebHookWarning, match="outside the range"):
        mteb_hook.check_mteb_version()
    monkeypatch.setenv(mteb_hook.ENV_SWITCH, "strict")
    with pytest.raises(mteb_hook.MtebHookError, match="mteb 2.27.0"):
        mteb_hook.check_mteb_version()
    monkeypatch.setattr(mteb_hook, "_mteb_version", lambda: "2.26.24")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mteb_hook.check_mteb_version()


def test_a_wrong_data_dir_says_so_and_fails_when_a_task_loads(monkeypatch, tmp_path):
    """COMPLEXIR_DATA_DIR naming no folder: the warning says the tasks are registered and why they cannot load
    (not "tasks not registered"), and a task then fails naming the folder instead of reading the Hub."""
    from complexir.mteb import hook as mteb_hook
    from complexir.tasks import TASKS
    from complexir.tasks.layout_task import LayoutRetrievalTask

    missing = tmp_path / "no-such-dir"
    monkeypatch.setenv("COMPLEXIR_DATA_DIR", str(missing))
    monkeypatch.setenv(mteb_hook.ENV_SWITCH, "on")
    monkeypatch.setattr(LayoutRetrievalTask, "default_source", None)
    with pytest.warns(mteb_hook.MtebHookWarning) as caught:
        mteb_hook._set_data_source()
    (warning,) = caught
    assert "registered with mteb but cannot load" in str(warning.message)
    assert str(missing) in str(warning.message) and "not registered" not in str(warning.message)
    with pytest.raises(FileNotFoundError, match=f"no benchmark folder {missing}"):
        TASKS[0]().load_data()
    monkeypatch.setenv(mteb_hook.ENV_SWITCH, "strict")
    with pytest.raises(mteb_hook.MtebHookError, match="cannot load"):
        mteb_hook._set_data_source()


def test_a_missing_benchmark_folder_says_what_to_do(tmp_path):
    """Pointing a task at a benchmark folder instead of the folder holding it names the parent; a data dir inside the
    installed package is never where to build; any other data dir is where to build."""
    import complexir
    from complexir.hub.data_source import DataSource

    demo = Path(complexir.__file__).resolve().parent / "demo"
    with pytest.raises(FileNotFoundError, match=f"is a benchmark folder itself: the data dir is the folder that "
                                                f"holds the benchmark folders, here {demo}$"):
        DataSource.local(demo / "locov1").locate("locov1", "x/y", None, task="LoCoV1GovReport")
    with pytest.raises(FileNotFoundError, match=r"packaged demos hold coveragebench, crumb, irsc, locov1; build "
                                                r"fifth outside the installed package"):
        DataSource.local(demo).locate("fifth", "x/y", None)
    with pytest.raises(FileNotFoundError, match=f"build it with `complexir build locov1 --out {tmp_path}/locov1`"):
        DataSource.local(tmp_path).locate("locov1", "x/y", None)
