"""The Python API: ``complexir.run``, ``compare`` and ``fuse`` give what the commands give (the commands are argv
parsed into the API's options, then printed), and ``import complexir`` stays cheap."""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from run_output import MODEL_DIR

import complexir
from complexir.cli.main import main

TASK = "LoCoV1GovReport"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_import_complexir_loads_no_api_until_asked():
    # mteb's .pth hook imports the package at every interpreter start: nothing heavy, no API module, until used
    probe = ("import sys, complexir; print(sorted(m for m in sys.modules if m.split('.')[0] in ('mteb', 'numpy', "
             "'torch') or m.startswith('complexir.api'))); print(complexir.__version__); "
             "print(complexir.run.__module__)")
    lines = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    assert lines[0] == "[]"
    from importlib.metadata import version

    assert lines[1] == version("complexir") == complexir.__version__
    assert lines[2] == "complexir.api.run"
    assert {"run", "compare", "fuse", "RunOptions", "__version__"} <= set(dir(complexir))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        complexir.nope  # noqa: B018


def _parsed(argv: list[str]) -> argparse.Namespace:
    from complexir.cli.main import build_parser

    return build_parser(argv).parse_args(argv)


def test_every_run_flag_reaches_its_option():
    # each option set away from its default on the command line arrives in RunOptions: none is dropped on the way
    from complexir.api.options import RunOptions
    from complexir.cli.run_cmd import run_options

    argv = ["run", "--model", "m", "--model-name", "n", "--backend", "onnx", "--max-seq-length", "7", "--benchmark",
            "IRSC", "--task", "IRSCQuery", "--data-dir", "d", "--split", "dev", "--output", "o", "--batch-size", "3",
            "--long-docs", "chunk", "--first-stage", "f", "--rerank-depth", "5", "--trust-remote-code", "--prompt",
            "query=q: ", "--engine", "ray", "--cache", "c", "--address", "a", "--workers", "2", "--gpus-per-worker",
            "0.5", "--batch-docs", "9", "--runs", "r", "--save-runs", "s", "--allow-other-data"]
    options = run_options(_parsed(argv))
    defaults = RunOptions()
    unchanged = [f.name for f in dataclasses.fields(RunOptions)
                 if getattr(options, f.name) == getattr(defaults, f.name)]
    assert unchanged == []
    assert options.prompts == (("query", "q: "),) and options.tasks == ("IRSCQuery",) and options.splits == ("dev",)
    search = options.search_options()
    assert (search.engine, search.workers, search.gpus_per_worker, search.model_name) == ("ray", 2, 0.5, "n")
    assert run_options(_parsed(["run"])) == defaults  # and the command line's defaults are the API's


def test_options_take_what_a_notebook_writes():
    from complexir.api.options import CompareOptions, FuseOptions, RunOptions

    options = RunOptions(tasks="IRSCQuery", splits=["dev"], prompts={"query": "q: "})
    assert (options.tasks, options.splits, options.prompts) == (("IRSCQuery",), ("dev",), (("query", "q: "),))
    assert CompareOptions(results="r", out="o").results == ("r",)
    assert FuseOptions(runs=["a", "b"], method="combsum", out="o").method is complexir.FusionMethod.COMBSUM
    with pytest.raises(ValueError, match="unknown fusion method 'x'; choose one of rrf, combsum, combmnz"):
        FuseOptions(runs=("a", "b"), method="x", out="o")


def test_build_flags_become_the_scripts_typed_options(tmp_path):
    from complexir.loading_scripts import coveragebench, locov1
    from complexir.upstream.options import BuildOptions

    args = _parsed(["build", "coveragebench", "--out", "o", "--subset", "cast2020", "--no-progress", "--docs",
                    "cast2020=trec:x", "--docs-language", "native", "--rerank-depth", "7"])
    options = coveragebench.OPTIONS.from_flags(vars(args))
    assert options == coveragebench.CoverageBenchOptions(
        out="o", source=coveragebench.HUB_ID, subsets=("cast2020",), progress=False, docs={"cast2020": "trec:x"},
        docs_language={"*": "native"}, rerank_depth=7)
    # the build cache's options for a release of two repos: typed, no argv made up
    commits = {locov1.DOCUMENTS_REPO: "a", locov1.QUERIES_REPO: "b"}
    pinned = locov1.LoCoV1Options(out="o", **locov1.pinned_source(commits))
    assert (pinned.documents_revision, pinned.queries_revision) == ("a", "b")
    assert isinstance(pinned, BuildOptions)


def test_build_by_the_api_writes_what_the_command_writes(tmp_path):
    from complexir.loading_scripts import crumb
    from complexir.upstream.options import BuildOptions

    release = FIXTURES / "crumb" / "demo_upstream"
    assert main(["build", "crumb", "--source", str(release), "--out", str(tmp_path / "cli"), "--subset",
                 "legal_qa", "--no-progress"]) == 0
    assert crumb.build(BuildOptions(out=tmp_path / "api", source=str(release), subsets=("legal_qa",),
                                    progress=False)) == 0
    written = sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*.parquet"))
    assert written and written == sorted(p.relative_to(tmp_path / "api") for p in (tmp_path / "api").rglob("*.parquet"))
    for path in written:
        assert (tmp_path / "cli" / path).read_bytes() == (tmp_path / "api" / path).read_bytes(), path


def _scores(output: Path) -> dict:
    result = json.loads((output / "results" / MODEL_DIR / f"{TASK}.json").read_text())
    return {split: [{k: v for k, v in entry.items() if k != "evaluation_time"} for entry in entries]
            for split, entries in result["scores"].items()}


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory) -> tuple[Path, Path, complexir.RunResult]:
    """The packaged model on one demo task, by the command (``--save-runs``) and by the API."""
    base = tmp_path_factory.mktemp("api")
    assert main(["run", "--task", TASK, "--output", str(base / "cli"), "--save-runs"]) == 0
    result = complexir.run(tasks=(TASK,), output=base / "api", save_runs="")
    return base / "cli", base / "api", result


def test_run_by_the_api_scores_and_files_what_the_command_does(both_runs):
    cli, api, result = both_runs
    assert _scores(api) == _scores(cli)
    for folder in ("per_query", "runs"):  # per-query scores and the saved rankings, file for file
        files = sorted(p.relative_to(cli) for p in (cli / folder).rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(api) for p in (api / folder).rglob("*") if p.is_file())
        for path in files:
            if path.suffix == ".trec" or folder == "per_query":
                assert (cli / path).read_bytes() == (api / path).read_bytes(), path
    assert result.failed == [] and result.tasks == 1 and result.system.kind == complexir.SystemKind.DENSE
    assert result.score(TASK, "nDCG@10") == _scores(cli)["test"][0]["ndcg_at_10"]
    assert result.data["LoCoV1"].is_demo and result.saved_runs is not None and result.saved_runs.files == 1


def test_fuse_and_compare_by_the_api_write_what_the_commands_write(both_runs, tmp_path):
    cli, api, _ = both_runs
    runs = [str(next((folder / "runs").rglob("runs.json")).parent) for folder in (cli, api)]
    assert main(["fuse", *runs, "--method", "rrf", "--out", str(tmp_path / "fused_cli")]) == 0
    fused = complexir.fuse(runs=tuple(runs), method=complexir.FusionMethod.RRF, out=tmp_path / "fused_api")
    assert (fused.name, fused.run_files, fused.inputs) == ("fusion/rrf-k60", 1, 2)
    [trec] = [p.relative_to(tmp_path / "fused_cli") for p in (tmp_path / "fused_cli").rglob("*.trec")]
    assert (tmp_path / "fused_cli" / trec).read_bytes() == (tmp_path / "fused_api" / trec).read_bytes()

    fused_run = complexir.run(tasks=(TASK,), runs=str(tmp_path / "fused_api"), model_name="fusion/rrf-k60",
                              output=tmp_path / "fused_results")
    assert fused_run.fixed_runs is not None and fused_run.store_summary is None
    assert fused_run.score(TASK, "ndcg_at_10") == _scores(cli)["test"][0]["ndcg_at_10"]  # the same run twice

    results = [str(cli), str(tmp_path / "fused_results")]
    assert main(["compare", *results, "--allow-demo", "--out", str(tmp_path / "compare_cli")]) == 0
    page = complexir.compare(results=tuple(results), allow_demo=True, out=tmp_path / "compare_api")
    assert page == tmp_path / "compare_api" / "compare.md"
    ours, theirs = (json.loads((tmp_path / f"compare_{side}" / "compare.json").read_text()) for side in ("api", "cli"))
    assert ours == theirs
