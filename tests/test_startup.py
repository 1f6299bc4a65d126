"""A newcomer's first minutes: bad names and folders refused before mteb and torch are imported, an unreachable Hub
said as such at once, and default logs that show only what the user must act on.

How long the refusals take is measured by ``speed/bench_startup.py``, not here: these tests check instead that the
heavy libraries are never imported on those paths (which is what made them slow), and capture the commands'
stderr in fresh processes, as a user sees it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from import_probe import probe_command

from complexir.registry.benchmarks import all_specs, task_benchmarks

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("mteb", "torch", "sentence_transformers", "transformers", "datasets")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def _error_lines(stderr: str, command: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(f"complexir{command}: error:")]


# -- task names from the registry ---------------------------------------------------------------------------------
def test_the_registry_names_every_task_as_the_task_modules_do():
    from complexir.tasks import BENCHMARK_OF

    assert task_benchmarks() == BENCHMARK_OF  # same names, same order, same benchmark
    coverage = next(s for s in all_specs() if s.name == "CoverageBench")
    assert "CoverageBenchCAsT2020Rerank" in coverage.task_names()


def test_a_task_named_outside_the_registry_is_refused_where_it_is_defined():
    from complexir.registry.benchmarks import LOCOV1
    from complexir.tasks.layout_task import spec_metadata

    with pytest.raises(ValueError, match="spec.task_name"):
        spec_metadata(LOCOV1, name="LoCoV1SomethingElse", description="x", main_score="ndcg_at_10")


# -- refusals before the heavy imports ----------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "expected"), [
    (["run", "--task", "NoSuchTask"], "unknown task 'NoSuchTask'; known: CRUMBClinicalTrial"),
    (["run", "--task", "LoCoV1GovReprt"], "unknown task 'LoCoV1GovReprt' (did you mean 'LoCoV1GovReport'?)"),
    (["run", "--task", "IRSCQuery", "--benchmark", "LoCoV1"], "belong to IRSC, not to --benchmark LoCoV1"),
    (["run", "--benchmark", "Nope"], "unknown benchmark 'Nope'; known: CRUMB, IRSC, LoCoV1, CoverageBench"),
    (["run", "--benchmark", "locov"], "unknown benchmark 'locov' (did you mean 'LoCoV1'?)"),
    (["run", "--data-dir", "{missing}"], "--data-dir {missing}: no such folder"),
    (["run", "--data-dir", "{empty}"], "data dir {empty} holds no benchmark folder (crumb/, irsc/, locov1/"),
    (["run", "--data-dir", "{empty}", "--task", "LoCoV1GovReport"],
     "LoCoV1GovReport: no benchmark folder {empty}/locov1 (data dir {empty}); build it with `complexir build locov1"),
    (["run", "--runs", "{missing}", "--model-name", "x"], "--runs {missing}: no such runs folder or run file"),
    (["run", "--model", "{missing}"], "--model {missing}: no such folder (nor a valid Hub repo id)"),
    (["run", "--output", "{file}"], "--output {file}: not a folder"),
    (["report", "{missing}"], "results folder {missing}: no such folder"),
    (["compare", "{file}", "--out", "cmp"], "results folder {file}: not a folder"),
])
def test_bad_names_and_folders_are_refused_before_mteb_and_torch(tmp_path, args, expected):
    file = tmp_path / "a-file"
    file.write_text("x")
    (tmp_path / "empty").mkdir()
    fill = {"missing": str(tmp_path / "no-such"), "file": str(file), "empty": str(tmp_path / "empty")}
    code, stderr, heavy = probe_command([a.format(**fill) for a in args], HEAVY)
    lines = _error_lines(stderr, f" {args[0]}")
    assert code == 2 and len(lines) == 1, stderr
    assert expected.format(**fill) in lines[0]
    assert heavy == []


def test_a_missing_data_dir_from_the_environment_names_the_variable(tmp_path):
    missing = tmp_path / "gone"
    code, stderr, heavy = probe_command(["run"], HEAVY, env={**os.environ, "COMPLEXIR_DATA_DIR": str(missing)})
    assert code == 2 and f"$COMPLEXIR_DATA_DIR {missing}: no such folder" in stderr
    assert heavy == []


@pytest.mark.parametrize(("args", "expected"), [
    (["run", "--taks", "LoCoV1GovReport"], "unrecognized arguments: --taks LoCoV1GovReport (did you mean '--task'?)"),
    (["run", "--backend", "onx"], "invalid choice: 'onx' (choose from 'torch', 'onnx', 'openvino') "
                                  "(did you mean 'onnx'?)"),
    (["bulid", "irsc"], "invalid choice: 'bulid'"),
])
def test_a_mistyped_flag_or_choice_gets_a_did_you_mean(args, expected):
    code, stderr, heavy = probe_command(args, HEAVY)
    assert code == 2 and expected in stderr and heavy == []
    if args[0] == "bulid":
        assert "(did you mean 'build'?)" in stderr


# -- the Hub, unreachable -----------------------------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _hub_env(tmp_path: Path, endpoint: str, offline: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update({"HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1" if offline else "0",
                "HF_EVALUATE_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"})
    return env


@pytest.mark.parametrize(("model", "offline"), [
    ("no-such-org/no-such-model", False), ("no-such-org/no-such-model", True),
    ("BAAI/bge-small-en-v1.5", False),  # in mteb's registry: its kind is known, its weights are on the Hub
], ids=["mistyped-refused-connection", "mistyped-HF_HUB_OFFLINE", "registry-model-refused-connection"])
def test_a_hub_model_without_the_hub_says_the_hub_is_unreachable_and_how_to_work_offline(tmp_path, model, offline):
    from hub_server import run_cli

    env = _hub_env(tmp_path, f"http://127.0.0.1:{_closed_port()}", offline)
    proc = run_cli(["run", "--model", model, "--task", "LoCoV1GovReport", "--output", str(tmp_path / "out")], env,
                   timeout=300)
    lines = _error_lines(proc.stderr, " run")
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr  # a network failure (failures' exit codes)
    assert f"--model {model}: not a local folder, not in the Hugging Face cache" in lines[0]
    why = "HF_HUB_OFFLINE is set" if offline else "cannot be reached (ConnectError"
    assert why in lines[0] and "to work offline, pass a local model folder" in lines[0]
    assert "no model configuration found" not in lines[0]  # the repo was never asked: no claim about it
    assert "Retry" not in proc.stderr  # one short request, not huggingface_hub's retries (two minutes)


def test_a_reachable_hub_is_asked_and_a_missing_repo_is_said_as_such(hub, tmp_path):
    from hub_server import client_env, run_cli

    env = client_env(hub, tmp_path / "home")
    proc = run_cli(["run", "--model", "no-such-org/no-such-model", "--task", "LoCoV1GovReport",
                    "--output", str(tmp_path / "out")], env, timeout=300)
    lines = _error_lines(proc.stderr, " run")
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "no model configuration found in that Hub repo" in lines[0] and "unreachable" not in lines[0]


def test_hub_unreachable_answers_once_from_one_short_request(hub, tmp_path):
    from hub_server import client_env, run_client

    code = "from complexir.upstream.hub_access import hub_unreachable\nprint(hub_unreachable())"
    reached = run_client(code, client_env(hub, tmp_path / "home"))
    assert reached.returncode == 0 and reached.stdout.strip() == "None", reached.stderr
    closed = run_client(code, _hub_env(tmp_path, f"http://127.0.0.1:{_closed_port()}", offline=False))
    assert "cannot be reached" in closed.stdout
    offline = run_client(code, _hub_env(tmp_path, f"http://127.0.0.1:{_closed_port()}", offline=True))
    assert offline.stdout.strip() == "HF_HUB_OFFLINE is set"


# -- quiet logs ---------------------------------------------------------------------------------------------------
def _complexir(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "complexir.cli.main", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={**os.environ, **OFFLINE, "PYTHONPATH": str(REPO), **(env or {})})


def test_a_bm25_run_logs_no_library_debug_and_no_internal_class(tmp_path):
    args = ["run", "--model", "mteb/baseline-bm25s", "--task", "LoCoV1GovReport"]
    quiet = _complexir([*args, "--output", "quiet"], tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert "DEBUG" not in quiet.stderr and "TimedSearch" not in quiet.stderr
    assert "running 1 task(s)" in quiet.stderr  # our progress stays
    verbose = _complexir(["-v", *args, "--output", "verbose"], tmp_path)
    assert verbose.returncode == 0, verbose.stderr
    assert "DEBUG bm25s" in verbose.stderr and "doc_token_share_seen not recorded" in verbose.stderr


def test_a_dense_run_shows_no_library_future_warnings(tmp_path):
    run = _complexir(["run", "--task", "LoCoV1GovReport", "--output", "out"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "FutureWarning" not in run.stderr and "DeprecationWarning" not in run.stderr
    assert "loading mteb and the model" in run.stderr  # alive before the long imports


def test_library_deprecations_only_with_verbose_and_ours_always():
    code = ("import warnings\nfrom complexir.cli.main import configure_logging\n"
            "configure_logging(VERBOSE)\n"
            "warnings.warn_explicit('lib-future', FutureWarning, 'x.py', 1, module='mteb.models.model_meta')\n"
            "warnings.warn_explicit('ours-future', FutureWarning, 'y.py', 1, module='complexir.cli.run_cmd')\n")
    for verbose in (False, True):
        proc = subprocess.run([sys.executable, "-c", code.replace("VERBOSE", str(verbose))], capture_output=True,
                              text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.returncode == 0, proc.stderr
        assert ("lib-future" in proc.stderr) == verbose and "ours-future" in proc.stderr


def test_a_library_record_with_its_own_handler_is_printed_once():
    # huggingface_hub puts a stream handler on its logger: our root handler printed every retry warning again
    code = ("from complexir.cli.main import configure_logging\nconfigure_logging(False)\n"
            "from huggingface_hub.utils import logging as hub_logging\n"
            "hub_logging.get_logger('huggingface_hub.utils._http').warning('Retrying in 1s [Retry 1/5].')\n"
            "import logging\nlogging.getLogger('bm25s').setLevel(logging.DEBUG)\n"
            "logging.getLogger('bm25s').debug('Building index from IDs objects')\n"
            "logging.getLogger('complexir.x').info('our progress')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("Retrying in 1s") == 1
    assert "Building index" not in proc.stderr and "INFO complexir.x: our progress" in proc.stderr


def test_evaluate_without_nuggets_prints_only_the_scores(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d2 0\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.5 bm25\n")
    quiet = _complexir(["evaluate", "qrels.txt", "run.txt"], tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "" and "nDCG@10\tall\t1.000000" in quiet.stdout
    verbose = _complexir(["-v", "evaluate", "qrels.txt", "run.txt"], tmp_path)
    assert "coverage measures skipped" in verbose.stderr


def test_build_no_progress_draws_no_progress_bar_and_keeps_the_warnings(tmp_path):
    pairs = tmp_path / "pairs" / "keyword"
    pairs.mkdir(parents=True)
    (pairs / "en.jsonl").write_text('{"query": "moon landing 1969", "content": "Apollo 11 landed in 1969."}\n')
    build = _complexir(["build", "irsc", "--source", "pairs", "--out", "data/irsc", "--no-progress"], tmp_path)
    assert build.returncode == 0, build.stderr
    assert "\r" not in build.stderr and "it/s" not in build.stderr and "%|" not in build.stderr, build.stderr
    assert "has no pairs for 19 of 20 subsets" in build.stderr  # what the user must act on stays
