"""What a ``complexir`` command imports: the tests that keep a subcommand from paying for others' libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def modules_imported_by(args: list[str], names: tuple[str, ...]) -> list[str]:
    """The modules in ``names`` (a top-level name counts with its submodules) that ``complexir ARGS`` imports, run
    in a fresh interpreter with its output discarded; the command must succeed (``--help``'s exit 0 included)."""
    code, stderr, modules = probe_command(args, names)
    assert code == 0, stderr
    return modules


def probe_command(args: list[str], names: tuple[str, ...],
                  env: dict[str, str] | None = None) -> tuple[int, str, list[str]]:
    """``complexir ARGS`` in a fresh interpreter, its stdout discarded: (exit code, stderr, the modules in ``names``
    it imported, as for :func:`modules_imported_by`), whether it succeeded or failed."""
    probe = ("import contextlib, io, json, sys\n"
             "from complexir.cli.main import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    try:\n"
             f"        code = main({args!r})\n"
             "    except SystemExit as stop:\n"
             "        code = stop.code\n"
             f"names = {names!r}\n"
             "print(json.dumps([code, sorted(m for m in sys.modules if m in names or m.split('.')[0] in names)]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                         env={**(os.environ if env is None else env), "PYTHONPATH": str(REPO)})
    assert out.returncode == 0 and out.stdout.strip(), out.stderr
    code, modules = json.loads(out.stdout.splitlines()[-1])
    return int(code or 0), out.stderr, modules
