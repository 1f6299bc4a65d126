"""`complexir run --backend`: another sentence-transformers backend is an experiment of the model, filed apart from
the torch results and keyed apart in the embedding store; a backend this install cannot load is one line.

sentence-transformers' ONNX and OpenVINO backends need optimum, whose releases today require an older transformers
than this project pins (see the README), so these tests stand in for the backend: a SentenceTransformer that
accepts ``backend="onnx"`` and loads the torch weights. What they check is ours: the experiment name on the results
and the per-query files, the store key, the error line.
"""

from __future__ import annotations

import json

import pytest
import sentence_transformers
from run_output import MODEL_DIR, store_counts

from complexir.cli.main import main

TASK = ["--benchmark", "IRSC", "--task", "IRSCQuery"]


class _ExportStandIn(sentence_transformers.SentenceTransformer):
    """Accepts any backend and records it; the vectors are the torch model's."""

    backends: list[str] = []

    def __init__(self, *args, backend: str = "torch", **kwargs):
        type(self).backends.append(backend)
        super().__init__(*args, **kwargs)


class _MissingBackend(sentence_transformers.SentenceTransformer):
    """What sentence-transformers raises for a backend whose packages are absent."""

    def __init__(self, *args, backend: str = "torch", **kwargs):
        if backend != "torch":
            raise Exception("Using the ONNX backend requires installing Optimum and ONNX Runtime. You can install "
                            "them with pip: `pip install sentence-transformers[onnx]`")
        super().__init__(*args, **kwargs)


def test_a_backend_is_an_experiment_with_its_own_results_and_vectors(tmp_path, capsys, monkeypatch):
    common = [*TASK, "--cache", str(tmp_path / "store"), "--output", str(tmp_path / "out")]
    assert main(["run", *common]) == 0
    torch_out = capsys.readouterr().out
    torch_result = tmp_path / "out" / "results" / MODEL_DIR / "IRSCQuery.json"
    before = torch_result.read_bytes()

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", _ExportStandIn)
    _ExportStandIn.backends = []
    assert main(["run", *common, "--backend", "onnx"]) == 0
    onnx_out = capsys.readouterr().out
    assert _ExportStandIn.backends == ["onnx"]

    # filed under mteb's experiment folder, the torch result untouched
    result = tmp_path / "out" / "results" / MODEL_DIR / "experiments" / "backend_onnx" / "IRSCQuery.json"
    assert result.is_file() and torch_result.read_bytes() == before
    per_query = tmp_path / "out" / "per_query" / MODEL_DIR / "experiments" / "backend_onnx" / "IRSCQuery.json"
    assert per_query.is_file()
    assert json.loads(result.read_text())["task_name"] == "IRSCQuery"
    # the store never serves the torch vectors to another backend: everything is encoded again
    first, second = store_counts(torch_out), store_counts(onnx_out)
    assert second["encoded"] == first["encoded"] > 0

    # torch is the published model, not an experiment: an explicit --backend torch is the plain run, from the store
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", _ExportStandIn.__mro__[1])
    assert main(["run", *common, "--backend", "torch"]) == 0
    assert store_counts(capsys.readouterr().out)["encoded"] == 0


def test_a_backend_this_install_cannot_load_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", _MissingBackend)
    code = main(["run", *TASK, "--output", str(tmp_path / "out"), "--cache", str(tmp_path / "store"),
                 "--backend", "onnx"])
    err = capsys.readouterr().err
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("complexir run: error:")]
    assert len(lines) == 1 and "--backend onnx needs optimum, which is not installed" in lines[0]
    # the run page's advice, not the extra that would break the install (docs/commands/run.md, "CPU backends")
    assert "would downgrade them and break this install" in lines[0] and "use --backend torch" in lines[0]
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "results").exists()


def test_an_unknown_backend_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--backend", "tensorrt"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'tensorrt'" in capsys.readouterr().err
