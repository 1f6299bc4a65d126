"""scripts/typecheck.py lays the package out as pyproject installs it, for mypy (which CI runs: .ci/run)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _typecheck():
    spec = importlib.util.spec_from_file_location("typecheck", REPO / "scripts" / "typecheck.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tree_is_the_installed_package(tmp_path: Path) -> None:
    typecheck = _typecheck()
    mapping = typecheck.package_dirs()
    prefixes = typecheck.build_tree(mapping, tmp_path)
    package = tmp_path / "complexir"
    for name, folder in mapping.items():  # every mapped folder under its import name, as setuptools maps it
        if name == "complexir":  # a folder of links: its own modules and rooms, and the mapped folders
            continue
        assert (tmp_path / name.replace(".", "/")).resolve() == (REPO / folder).resolve(), name
    assert (package / "metrics" / "measures.py").resolve() == REPO / "metrics" / "measures.py"
    assert (package / "cli" / "main.py").resolve() == REPO / "complexir" / "cli" / "main.py"
    assert not (package / "__pycache__").exists()
    line = "complexir/tasks/crumb.py:3: error: x  [misc]"
    assert typecheck.checkout_path(line, prefixes) == "tasks/crumb.py:3: error: x  [misc]"
    assert typecheck.checkout_path("complexir/cli/main.py:1: note", prefixes) == "complexir/cli/main.py:1: note"
    assert typecheck.checkout_path("Success: no issues found", prefixes) == "Success: no issues found"


def test_ci_runs_the_type_checker_and_prints_the_slowest_tests() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python scripts/typecheck.py" in ci
    assert "--durations=25" in ci and "the test suite took" in ci
