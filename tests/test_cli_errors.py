"""The CLI's one error policy: every expected failure is one line, ``complexir <cmd>: error: <what>``, with the
file and line where known, and a documented exit code (2 bad input, 1 other, 130 Ctrl-C, 143 SIGTERM); a
traceback only with ``--debug``."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from import_probe import modules_imported_by

from complexir.cli import validate_cmd
from complexir.cli.main import main
from complexir.layout.errors import LayoutError, Terminated

REPO = Path(__file__).resolve().parents[1]
TREC = REPO / "tests" / "fixtures" / "trec_eval"


def one_line(capsys, command: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith(f"complexir {command}: error: ")]
    assert len(errors) == 1 and "Traceback" not in "\n".join(err), err
    return errors[0].removeprefix(f"complexir {command}: error: ")


# -- every kind of failure, raised where a command does its work ------------------------------------------------------
@pytest.mark.parametrize(("error", "code", "shown"), [
    (PermissionError(errno.EACCES, "Permission denied", "/data/out"), 1, "Permission denied: /data/out"),
    (OSError(errno.EROFS, "Read-only file system", "/mnt/ro/x"), 1, "Read-only file system: /mnt/ro/x"),
    (OSError(errno.ENOSPC, "No space left on device", "/data/x.parquet"), 1, "No space left on device: /data/x"),
    (OSError(errno.EFBIG, "File too large", "/data/x.parquet"), 1, "File too large: /data/x.parquet"),
    (IsADirectoryError(errno.EISDIR, "Is a directory", "/data/qrels"), 2, "Is a directory: /data/qrels"),
    (NotADirectoryError(errno.ENOTDIR, "Not a directory", "/data/f/x"), 2, "Not a directory: /data/f/x"),
    (FileNotFoundError(errno.ENOENT, "No such file or directory", "/nope"), 2, "No such file or directory: /nope"),
    (OSError(errno.EXDEV, "Invalid cross-device link", "/a", None, "/b"), 1, "Invalid cross-device link: /a -> /b"),
    (LayoutError("x/README.md: no 'configs'"), 2, "x/README.md: no 'configs'"),
    (yaml.YAMLError("bad"), 2, "bad"),
    (KeyboardInterrupt(), 130, "interrupted (Ctrl-C)"),
    (Terminated(signal.SIGTERM), 143, "terminated by SIGTERM"),
    (RuntimeError("something\nunexpected"), 1, "RuntimeError: something unexpected (an unexpected error"),
])
def test_each_failure_is_one_line_and_its_exit_code(monkeypatch, capsys, tmp_path, error, code, shown):
    def fail(folder):
        raise error

    monkeypatch.setattr(validate_cmd, "validate_folder", fail)
    assert main(["validate", str(tmp_path)]) == code
    assert one_line(capsys, "validate").startswith(shown)


def test_huggingface_hub_errors_are_one_line(monkeypatch, capsys, tmp_path):
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

    for error in (OfflineModeIsEnabled("Cannot reach the Hub: offline mode is enabled."),
                  LocalEntryNotFoundError("Cannot find the requested files in the disk cache.")):
        monkeypatch.setattr(validate_cmd, "validate_folder", lambda folder, error=error: (_ for _ in ()).throw(error))
        assert main(["validate", str(tmp_path)]) in (1, 2)
        assert "Cannot" in one_line(capsys, "validate")


@pytest.mark.parametrize("where", [["--debug", "validate"], ["validate", "--debug"]])
def test_debug_adds_the_traceback(monkeypatch, capsys, tmp_path, where):
    monkeypatch.setattr(validate_cmd, "validate_folder", lambda folder: (_ for _ in ()).throw(LayoutError("broken")))
    assert main([*where, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().endswith("complexir validate: error: broken")


# -- real inputs -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "shown"), [
    (["evaluate", "--measure"], "argument -m/--measure: expected one argument"),
    (["evaluate", str(TREC / "qrels.test")], "the following arguments are required: run"),
    (["evaluate", str(TREC / "qrels.test"), str(TREC / "results.test"), "--digits", "-1"],
     "argument --digits: expected 0 to 17, got -1"),
    (["evaluate", str(TREC / "qrels.test"), str(TREC / "results.test"), "--digits", "x"],
     "argument --digits: expected a whole number"),
    (["run", "--max-seq-length", "0"], "argument --max-seq-length: expected at least 1, got 0"),
    (["run", "--batch-size", "-5"], "argument --batch-size: expected at least 1"),
    (["build", "nosuch"], "argument BENCHMARK: invalid choice"),
])
def test_argument_errors_are_one_line_exit_2(capsys, args, shown):
    with pytest.raises(SystemExit) as caught:
        main(args)
    assert caught.value.code == 2
    assert one_line(capsys, args[0]).startswith(shown)


def test_a_directory_where_a_file_was_expected(capsys):
    assert main(["evaluate", str(TREC), str(TREC / "results.test")]) == 2
    assert one_line(capsys, "evaluate") == f"Is a directory: {TREC}"


@pytest.mark.parametrize(("content", "line"), [(b"301 0 d1 1\n301 0 d\xff2 1\n", 2),
                                               (b"\xef\xbb\xbf301 0 d1 1\n301 0 d2 1\n\n\x80\n", 4)])
def test_invalid_utf8_names_file_and_line(tmp_path, capsys, content, line):
    qrels = tmp_path / "bad.qrels"
    qrels.write_bytes(content)
    assert main(["evaluate", str(qrels), str(TREC / "results.test")]) == 2
    shown = one_line(capsys, "evaluate")
    assert shown.startswith("not valid UTF-8 text") and shown.endswith(f"({qrels}:{line})")


def test_invalid_utf8_in_a_readme_names_it(tmp_path, capsys):
    (tmp_path / "README.md").write_bytes(b"---\nconfigs: []\n---\n\xff\n")
    assert main(["validate", str(tmp_path)]) == 2
    assert one_line(capsys, "validate").endswith(f"({tmp_path / 'README.md'}:4)")


def test_broken_pipe_is_silent():
    """``complexir evaluate ... | head``: the reader goes away; no traceback, no 'Exception ignored'."""
    proc = subprocess.Popen([sys.executable, "-m", "complexir.cli.main", "evaluate", str(TREC / "qrels.test"),
                             str(TREC / "results.test"), "--per-query", "-m", "P@5", "-m", "nDCG@10"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    proc.stdout.close()  # the reader left before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err, err


def test_sigterm_during_a_command_is_one_line_exit_143(tmp_path):
    """SIGTERM raises like Ctrl-C inside the CLI: clean-up runs, the exit code is 128 + 15."""
    script = tmp_path / "slow.py"
    script.write_text(
        "import os, signal, sys\n"
        "signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not ignored, even if this test's shell ignores it\n"
        "from complexir.cli import validate_cmd\n"
        "from complexir.cli.main import main\n"
        "def slow(folder):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    raise AssertionError('not interrupted')\n"
        "validate_cmd.validate_folder = slow\n"
        "sys.exit(main(['validate', '.']))\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert proc.returncode == 143, proc.stderr
    assert proc.stderr.strip() == "complexir validate: error: terminated by SIGTERM"


@pytest.mark.parametrize("command", ["run", "build", "validate", "evaluate", "report", "push", "cache"])
def test_help_imports_no_model_dataset_or_dataframe_library(command):
    # `--help` builds one subcommand's parser: it must not pay for what only the command's work needs
    heavy = ("mteb", "torch", "datasets", "pandas", "sentence_transformers", "transformers", "matplotlib")
    assert modules_imported_by([command, "--help"], heavy) == []
