"""The staged Hub Space of each metric loads with `evaluate` where complexir cannot be imported, and scores
exactly like the in-repo module (the maths is vendored by `complexir push`, not duplicated in the repo)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from conftest import diversity_evaluate_inputs

from complexir.hub.push import VENDORED_MODULE, stage_space

evaluate = pytest.importorskip("evaluate")

REPO = Path(__file__).resolve().parents[1]
METRICS = ("alpha_ndcg", "strecall", "retrieval")

# Runs in a fresh interpreter, away from the checkout: a meta-path finder placed first refuses every
# `complexir` import (whatever would otherwise find it: the editable finder, a path entry, a Space's cwd),
# modules a .pth already imported are forgotten, then the staged
# folder is loaded with evaluate and each case computed.
_CHILD = r"""
import importlib.abc, json, sys

class _NoComplexir(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "complexir" or name.startswith("complexir."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked for this test)")
        return None

sys.meta_path.insert(0, _NoComplexir())
# this venv's complexir_mteb.pth imports complexir.mteb.hook at start-up: forget it, so the import fails
for loaded in [m for m in sys.modules if m == "complexir" or m.startswith("complexir.")]:
    del sys.modules[loaded]
try:
    import complexir  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("complexir is importable: the test would prove nothing")

import evaluate

cases = json.loads(open(sys.argv[1], encoding="utf-8").read())
results = {}
for name, (folder, calls) in cases.items():
    module = evaluate.load(folder)
    results[name] = [module.compute(**call) for call in calls]
assert not [m for m in sys.modules if m == "complexir" or m.startswith("complexir.")]
print(json.dumps(results))
"""


def _cases(reference_fixtures: Path) -> dict[str, list[dict]]:
    preds, nuggets = diversity_evaluate_inputs(reference_fixtures / "diversity")
    adhoc_refs = [[{"doc_id": "a", "label": 1}, {"doc_id": "c", "label": 0}], [{"doc_id": "x", "label": 2}]]
    return {
        "alpha_ndcg": [dict(predictions=preds, references=nuggets, k=[5, 20]),
                       dict(predictions=preds, references=nuggets, alpha=0.9)],
        "strecall": [dict(predictions=preds, references=nuggets, k=[5, 20]),
                     dict(predictions=preds, references=nuggets, k=20, denominator="all")],
        "retrieval": [dict(predictions=[["b", "a", "a"], []], references=adhoc_refs),
                      dict(predictions=[["b", "a", "a"], []], references=adhoc_refs, k=[1, 2])],
    }


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("spaces")
    return {name: stage_space(REPO / "metrics" / name, root / name, f"org/{name}") for name in METRICS}


def test_staged_script_imports_only_what_a_space_has(staged):
    from evaluate.loading import get_imports

    for name, folder in staged.items():
        imports = get_imports(str(folder / f"{name}.py"))
        assert ("internal", VENDORED_MODULE, VENDORED_MODULE, None) in imports
        libraries = {imp[1] for imp in imports if imp[0] == "library"}
        assert "complexir" not in libraries and libraries <= {"datasets", "evaluate"}, libraries
        # evaluate does not scan the vendored file: it must need nothing but numpy, pyarrow (the modules' inputs
        # on columns) and the standard library; pyarrow comes with datasets, which requirements.txt pins
        tree = ast.parse((folder / f"{VENDORED_MODULE}.py").read_text(encoding="utf-8"))
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree))
        assert imported - set(sys.stdlib_module_names) == {"numpy", "pyarrow"}, imported
        assert any(r.split(">")[0].split("=")[0].strip() == "pyarrow" for r in metadata.requires("datasets"))
        reqs = [line.split("#")[0].strip() for line in (folder / "requirements.txt").read_text().splitlines()]
        reqs = [r for r in reqs if r]
        # pinned: the versions benchmarks/check_space_app.py started the app with
        assert {r.split("==")[0] for r in reqs} == {"numpy", "datasets", "evaluate"} and all("==" in r for r in reqs)
        assert f'with_name("{name}.py")' in (folder / "app.py").read_text()


def test_staged_spaces_load_without_complexir(staged, reference_fixtures, tmp_path):
    cases = _cases(reference_fixtures)
    spec = tmp_path / "cases.json"
    spec.write_text(json.dumps({name: [str(staged[name]), cases[name]] for name in METRICS}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env.update(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1", HF_MODULES_CACHE=str(tmp_path / "modules"),
               PYTHONNOUSERSITE="1")
    child = subprocess.run([sys.executable, "-c", _CHILD, str(spec)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    results = json.loads(child.stdout.strip().splitlines()[-1])

    assert results["alpha_ndcg"][0]["alpha_nDCG@20"] == pytest.approx(0.7282847261876347, abs=1e-12)
    assert results["alpha_ndcg"][1] == {"alpha_nDCG@20": pytest.approx(0.7398853219815282, abs=1e-12)}
    for name in METRICS:  # the in-repo module, importing complexir.metrics, gives the same numbers
        module = evaluate.load(str(REPO / "metrics" / name))
        for got, call in zip(results[name], cases[name], strict=True):
            assert got == pytest.approx(module.compute(**call), abs=1e-12)


def test_staging_renames_the_script_for_the_space_name(tmp_path):
    folder = stage_space(REPO / "metrics" / "alpha_ndcg", tmp_path / "s", "org/alpha-ndcg")
    assert {p.name for p in folder.iterdir()} == {"alpha-ndcg.py", "app.py", "README.md", "requirements.txt",
                                                   f"{VENDORED_MODULE}.py"}
    assert 'with_name("alpha-ndcg.py")' in (folder / "app.py").read_text()
    module = evaluate.load(str(folder / "alpha-ndcg.py"))
    refs = [[{"doc_id": "a", "nugget_id": "1", "label": 1}, {"doc_id": "b", "nugget_id": "2", "label": 1}]]
    assert module.compute(predictions=[["a", "b"]], references=refs, k=5) == {"alpha_nDCG@5": 1.0}
    with pytest.raises(FileExistsError, match="not empty"):
        stage_space(REPO / "metrics" / "alpha_ndcg", folder, "org/alpha-ndcg")
    with pytest.raises(ValueError, match="ORG/NAME"):
        stage_space(REPO / "metrics" / "alpha_ndcg", tmp_path / "t", "no-slash")


def test_hub_loading_fetches_the_script_and_its_vendored_sibling(staged, monkeypatch):
    """`evaluate.load("ORG/NAME")`'s Hub path, with the Space's URLs answered from the staged folder: evaluate
    asks for NAME.py, then for each sibling its script imports relatively, and nothing else."""
    import evaluate.loading as loading

    space = "org/alpha_ndcg"
    prefix = loading.hf_hub_url(path=space, name="", revision="main").rsplit("main", 1)[0]
    asked: list[str] = []

    def fake_cached_path(url, download_config=None, **kwargs):
        assert url.startswith(prefix), url
        name = url.rsplit("/", 1)[1]
        asked.append(name)
        if not (staged["alpha_ndcg"] / name).is_file():
            raise FileNotFoundError(url)
        return str(staged["alpha_ndcg"] / name)

    monkeypatch.setattr(loading, "cached_path", fake_cached_path)
    monkeypatch.setattr(loading, "increase_load_count", lambda *a, **k: None)
    found = loading.HubEvaluationModuleFactory(space, revision="main").get_module()
    assert asked == ["alpha_ndcg.py", "_complexir_metrics.py"]
    metric = loading.import_main_class(found.module_path)(hash=found.hash)
    refs = [[{"doc_id": "a", "nugget_id": "1", "label": 1}, {"doc_id": "b", "nugget_id": "2", "label": 1}]]
    assert metric.compute(predictions=[["b", "a"]], references=refs, k=2) == {"alpha_nDCG@2": 1.0}
