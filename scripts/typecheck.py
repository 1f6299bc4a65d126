"""Type-check the installed package ``complexir`` with mypy (its settings: pyproject's ``[tool.mypy]``).

    python scripts/typecheck.py [MYPY OPTION ...]

The package is assembled from several folders (pyproject's ``[tool.setuptools.package-dir]``: ``metrics/`` is
``complexir.metrics``, ``tasks/`` is ``complexir.tasks``, ...), and an editable install maps them with an import hook
that mypy cannot follow. So this script lays out the package as it is installed, as a tree of symbolic links under
``.mypy_cache/package/`` (rebuilt on every call, so a new module is never missed), runs ``mypy -p complexir`` there,
and prints each error with the path of the file in the checkout. Exit status: mypy's.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".mypy_cache"
TREE = CACHE / "package"


def package_dirs() -> dict[str, str]:
    """Import name → folder in the checkout, from pyproject (``complexir`` itself included)."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return pyproject["tool"]["setuptools"]["package-dir"]


def build_tree(mapping: dict[str, str], tree: Path = TREE) -> dict[str, str]:
    """Link the package's folders into ``tree`` as installed; return tree prefix → checkout prefix for the output."""
    shutil.rmtree(tree, ignore_errors=True)
    root = tree / "complexir"
    root.mkdir(parents=True)
    mapped = {name.removeprefix("complexir."): folder for name, folder in mapping.items() if name != "complexir"}
    for entry in (REPO / mapping["complexir"]).iterdir():
        if entry.name not in mapped and entry.name != "__pycache__":
            (root / entry.name).symlink_to(entry)
    prefixes = {}
    for sub, folder in mapped.items():
        (root / sub).symlink_to(REPO / folder, target_is_directory=True)
        prefixes[f"complexir/{sub}/"] = f"{folder}/"
    prefixes["complexir/"] = f"{mapping['complexir']}/"
    return prefixes


def checkout_path(line: str, prefixes: dict[str, str]) -> str:
    for tree_prefix, folder in prefixes.items():  # the sub-packages first: they are longer
        if line.startswith(tree_prefix):
            return folder + line.removeprefix(tree_prefix)
    return line


def main(argv: list[str]) -> int:
    prefixes = build_tree(package_dirs())
    command = [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
               "--cache-dir", str(CACHE), *argv, "-p", "complexir"]
    done = subprocess.run(command, cwd=TREE, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        print(checkout_path(line, prefixes))
    sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
