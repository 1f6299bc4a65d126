"""The README and the documentation site cannot rot.

- Every fenced shell (bash, sh, shell, console) or python block in README.md and docs/**/*.md carries a marker on
  the line right before its fence: ``<!-- test: run -->`` (executed here) or ``<!-- test: skip <reason> -->``
  (reported skipped with that reason). An unmarked block fails, naming file:line.
- A run block is executed in a fresh temporary folder, offline (HF_HUB_OFFLINE=1), with this interpreter's
  installed ``complexir`` first on PATH and its packaged demos as the default data: bash/sh/shell as one bash
  script under ``set -euo pipefail`` (its lines in order), console as the ``$ `` lines of it, python as a script.
  A ``text`` block right after it, marked ``<!-- test: output -->``, is expected output: each of its non-empty
  lines must appear in the stdout (and for console blocks, the lines that are not commands likewise).
- The site builds with ``mkdocs build --strict`` (broken links, pages missing from the nav, unresolved API
  references fail it).
- Every ``complexir`` subcommand's options, as argparse has them, are the options its one docs page lists, both
  ways (``COMMAND_PAGES``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SHELLS = {"bash", "sh", "shell", "console"}
CHECKED = SHELLS | {"python"}
MARKER = re.compile(r"^\s*<!--\s*test:\s*(?P<kind>\S+)\s*(?P<rest>.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
BLOCK_TIMEOUT_S = 300


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    body: str
    end: int  # 1-based line of the closing fence
    marker: tuple[str, str] | None  # (kind, rest) of the marker on the line right before the fence
    expected: list[str] | None = None  # the lines of a following `<!-- test: output -->` text block

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def parse(path: Path) -> tuple[list[Block], list[str]]:
    """The fenced blocks of a page (every language; output blocks attached to the run block they follow) and the
    marker problems found, each naming file:line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.relative_to(REPO)
    blocks: list[Block] = []
    problems: list[str] = []
    inside: set[int] = set()  # 0-based lines within a block, fences included
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        indent, fence = opened["indent"], opened["fence"]
        closing = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        if j == len(lines):
            problems.append(f"{rel}:{i + 1}: fence never closed")
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:j])
        previous = MARKER.match(lines[i - 1]) if i else None
        marker = (previous["kind"], previous["rest"]) if previous else None
        blocks.append(Block(path, i + 1, opened["info"].lower().strip("{}."), body, j + 1, marker))
        inside.update(range(i, j + 1))
        i = j + 1
    kept: list[Block] = []
    for block in blocks:
        kind = block.marker[0] if block.marker else None
        if block.lang in CHECKED:
            if kind not in ("run", "skip"):
                problems.append(f"{block.where}: a {block.lang} block needs `<!-- test: run -->` or "
                                f"`<!-- test: skip <reason> -->` on the line right before its fence"
                                + (f" (found `test: {kind}`)" if kind else ""))
            elif kind == "skip" and not block.marker[1]:
                problems.append(f"{block.where}: `test: skip` needs a reason")
            kept.append(block)
        elif kind == "output":
            before = kept[-1] if kept else None
            between = lines[before.end:block.line - 2] if before else []
            if block.lang != "text":
                problems.append(f"{block.where}: an output block is fenced as ```text")
            elif (before is None or before.marker is None or before.marker[0] != "run"
                  or any(s.strip() for s in between)):
                problems.append(f"{block.where}: `test: output` must follow a run block (only blank lines between)")
            else:
                before.expected = [s.strip() for s in block.body.splitlines() if s.strip()]
        elif kind is not None:
            problems.append(f"{block.where}: `test: {kind}` on a {block.lang or 'plain'} block (shell and python "
                            f"blocks take run or skip; text blocks after a run block take output)")
    # a marker that no fence follows is a mistake too (a typo, a blank line between it and its block)
    for n, line in enumerate(lines):
        if n not in inside and MARKER.match(line) and not (n + 1 < len(lines) and FENCE.match(lines[n + 1])):
            problems.append(f"{rel}:{n + 1}: a test marker must be on the line right before a fence")
    return kept, problems


def all_blocks() -> list[Block]:
    return [block for path in pages() for block in parse(path)[0]]


def test_every_shell_and_python_block_is_marked():
    problems = [problem for path in pages() for problem in parse(path)[1]]
    assert not problems, "\n".join(problems)


def test_the_marker_check_names_an_unmarked_block(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    page = tmp_path / "page.md"
    page.write_text("x\n\n```bash\ncomplexir --help\n```\n\n<!-- test: skip -->\n```python\n1\n```\n\n"
                    "<!-- test: run -->\n```bash\ntrue\n```\n<!-- test: output -->\n```text\nok\n```\n"
                    "<!-- test: output -->\n\n```text\nstray\n```\n")
    blocks, problems = parse(page)
    assert problems[0].startswith("page.md:3: a bash block needs")
    assert problems[1] == "page.md:8: `test: skip` needs a reason"
    assert blocks[2].expected == ["ok"]
    assert any(p.startswith("page.md:20: a test marker must be on the line right before a fence") for p in problems)


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPLEXIR_")}
    env.update(HF_HUB_OFFLINE="1", HF_EVALUATE_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_HUB_DISABLE_PROGRESS_BARS="1",
               TQDM_DISABLE="1", MPLBACKEND="Agg", COMPLEXIR_CACHE=str(home / ".complexir-cache"),
               HF_DATASETS_CACHE=str(home / ".hf-datasets"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    return env


def _console(body: str) -> tuple[str, list[str]]:
    """A console block: its ``$ `` lines are the script, the others expected output."""
    commands, shown = [], []
    for line in body.splitlines():
        (commands if line.startswith("$ ") else shown).append(line[2:] if line.startswith("$ ") else line.strip())
    return "\n".join(commands), [s for s in shown if s]


def run_block(block: Block, where: Path) -> subprocess.CompletedProcess:
    expected = list(block.expected or [])
    where.mkdir(parents=True, exist_ok=True)
    if block.lang == "python":
        script = where / "block.py"
        script.write_text(block.body + "\n", encoding="utf-8")
        command = [sys.executable, str(script)]
    else:
        body = block.body
        if block.lang == "console":
            body, shown = _console(body)
            expected += shown
        script = where / "block.sh"
        script.write_text("set -euo pipefail\n" + body + "\n", encoding="utf-8")
        command = [shutil.which("bash") or "/bin/bash", str(script)]
    work = where / "work"
    work.mkdir()
    done = subprocess.run(command, cwd=work, env=_environment(where), capture_output=True, text=True,
                          timeout=BLOCK_TIMEOUT_S)
    tail = f"\n--- stdout ---\n{done.stdout[-4000:]}\n--- stderr ---\n{done.stderr[-4000:]}"
    assert done.returncode == 0, f"{block.where}: exit code {done.returncode}{tail}"
    missing = [line for line in expected if line not in done.stdout]
    assert not missing, f"{block.where}: expected output not in stdout: {missing}{tail}"
    return done


@pytest.mark.parametrize("block", all_blocks(), ids=lambda b: b.where)
def test_block(block: Block, tmp_path):
    if block.marker is None or block.marker[0] not in ("run", "skip"):
        pytest.fail(f"{block.where}: unmarked (see test_every_shell_and_python_block_is_marked)")
    if block.marker[0] == "skip":
        pytest.skip(f"{block.where}: {block.marker[1]}")
    run_block(block, tmp_path)


def test_a_failing_block_or_a_missing_output_line_fails(tmp_path):
    failing = Block(REPO / "README.md", 1, "bash", "true\nfalse\ntrue", 3, ("run", ""))
    with pytest.raises(AssertionError, match="README.md:1: exit code 1"):
        run_block(failing, tmp_path / "a")
    shown = Block(REPO / "README.md", 1, "console", "$ echo hello\nhello\nbye", 3, ("run", ""))
    with pytest.raises(AssertionError, match=r"expected output not in stdout: \['bye'\]"):
        run_block(shown, tmp_path / "b")


# ---- the site ----------------------------------------------------------------------------------------------------

@pytest.mark.slow  # mkdocs builds the whole site
def test_the_site_builds_strictly(tmp_path):
    """``mkdocs build --strict`` (a second or two: the API pages are read statically, nothing imported); .ci/run
    runs it too."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-6000:]
    assert (tmp_path / "site" / "index.html").is_file()
    # what a reader sees: no table cell shows a literal `\|` (a code span in a table keeps its backslash on the site:
    # spell choices as argparse does, {a,b}); every expected-output block is tagged to look apart from commands
    # (scripts/mkdocs_hooks.py, styled by docs/stylesheets/extra.css); shell blocks carry their language for the CSS
    # that wraps them
    problems = []
    for page in sorted((tmp_path / "site").rglob("index.html")):
        html = page.read_text(encoding="utf-8")
        where = page.parent.relative_to(tmp_path / "site")
        problems += [f"{where}: a table cell shows \\|: {cell[:80]}" for cell in re.findall(r"<td>(.*?)</td>", html)
                     if "\\|" in cell]
        outputs = len(re.findall(r"<!--\s*test:\s*output\s*-->", html))
        tagged = len(re.findall(r'<!--\s*test:\s*output\s*-->\s*<div class="expected-output ', html))
        if outputs != tagged:
            problems.append(f"{where}: {outputs - tagged} expected-output block(s) not tagged")
    assert not problems, "\n".join(problems)
    assert '<div class="language-bash highlight">' in (tmp_path / "site" / "mteb" / "index.html").read_text()
    css = (REPO / "docs" / "stylesheets" / "extra.css").read_text()
    assert ".expected-output" in css and "pre-wrap" in css


def test_readme_is_short_and_opens_with_the_two_commands():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    shells = [b for b in parse(REPO / "README.md")[0] if b.lang in SHELLS]
    assert [b.body for b in shells[:2]] == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e . "
        "&& complexir run",
        ". .venv/bin/activate && pip install -e '.[test]' && python -m pytest -q",
    ]
    assert all(b.marker == ("skip", "installs; .ci/run does it") for b in shells[:2])


def test_ci_builds_the_site_and_runs_the_readme_test_command():
    """What the README's test command promises is what CI does: the test extra brings the docs tools (so this
    file's site build runs), and .ci/run installs both extras, builds the site strictly and runs pytest."""
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "complexir[docs]" in extras["test"]
    assert all("==" in pin for pin in extras["docs"]) and {p.split("==")[0] for p in extras["docs"]} >= {
        "mkdocs", "mkdocs-material", "mkdocstrings"}
    ci = (REPO / ".ci" / "run").read_text()
    assert "pip install --quiet -e '.[test,docs]'" in ci
    assert "mkdocs build --strict" in ci
    assert "python -m pytest -q" in ci


# ---- every subcommand's --help and its page say the same ---------------------------------------------------------

# One page per subcommand, default docs/commands/<name>.md; a subcommand added to complexir.cli.main.SUBCOMMANDS
# without a page fails here. On the page, each parser's options are listed under a marker naming its command path,
#     <!-- options: complexir build irsc -->          (or several: `complexir build crumb, complexir build irsc`)
# followed by a Markdown table whose first column holds the options (`--out DIR`, `-m`, `--measure`). The options
# of one parser may be spread over several such tables; together they must be exactly argparse's.
# Subcommands whose page lives elsewhere than docs/commands/<name>.md:
COMMAND_PAGES_OVERRIDE: dict[str, str] = {"fuse": "runs.md", "compare": "compare.md", "published": "compare.md",
                                          "leaderboard": "leaderboard.md"}
# Not listed per command: every parser has them (-h/--help from argparse, --debug added to every subcommand by
# complexir.cli.main._debug_everywhere); commands/index.md documents them once, for `complexir` itself.
EVERYWHERE = {"-h", "--help", "--debug"}
OPTIONS_MARKER = re.compile(r"^<!--\s*options:\s*(?P<paths>.+?)\s*-->\s*$")
OPTION = re.compile(r"`(-{1,2}[A-Za-z][\w-]*)")


def command_pages() -> dict[str, str]:
    from complexir.cli.main import SUBCOMMANDS

    return {"": "commands/index.md", **{n: f"commands/{n}.md" for n in SUBCOMMANDS}, **COMMAND_PAGES_OVERRIDE}


def parser_options() -> dict[str, set[str]]:
    """``"complexir build irsc"`` → its options, for every parser reached from ``complexir`` (aliases once; the
    build subcommands of benchmarks registered from outside complexir left out: their pages are their own)."""
    from complexir.cli.main import build_parser
    from complexir.registry.benchmarks import all_specs

    outside = {s.folder for s in all_specs() if not s.loading_script.startswith("complexir.")}
    found: dict[str, set[str]] = {}

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        found[path] = {s for a in parser._actions for s in a.option_strings}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                seen: set[int] = set()
                for name, child in action.choices.items():
                    if id(child) in seen or (path == "complexir build" and name in outside):
                        continue
                    seen.add(id(child))
                    walk(child, f"{path} {name}")

    walk(build_parser(), "complexir")
    return found


def documented_options(page: Path) -> dict[str, set[str]]:
    """Command path → the options the page's options tables list."""
    documented: dict[str, set[str]] = {}
    lines = page.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines):
        marked = OPTIONS_MARKER.match(line)
        if not marked:
            continue
        options: set[str] = set()
        for row in lines[n + 1:]:
            if not row.startswith("|"):
                if options or row.strip():
                    break
                continue
            first = row.strip("|").split("|")[0]
            options.update(OPTION.findall(first))
        for path in (p.strip() for p in marked["paths"].split(",")):
            documented.setdefault(path, set()).update(options)
    return documented


def test_every_subcommand_has_its_page():
    missing = [f"docs/{page}" for page in command_pages().values() if not (DOCS / page).is_file()]
    assert not missing, f"pages missing for subcommands: {missing}"


def test_help_and_docs_list_the_same_options():
    actual = parser_options()
    pages_of = command_pages()
    problems = []
    documented: dict[str, tuple[str, set[str]]] = {}
    for page in sorted(DOCS.rglob("*.md")):
        for path, options in documented_options(page).items():
            documented[path] = (str(page.relative_to(DOCS)), documented.get(path, ("", set()))[1] | options)
    for path, options in actual.items():
        top = path.split()[1] if len(path.split()) > 1 else ""
        want = options - (EVERYWHERE if top else {"-h", "--help"})
        page, listed = documented.get(path, (pages_of.get(top, "?"), set()))
        if page != pages_of.get(top):
            problems.append(f"`{path}`: its options are listed on docs/{page}, not on its page docs/{pages_of[top]}")
        if want - listed:
            problems.append(f"`{path}`: in --help, not on docs/{pages_of.get(top)}: {sorted(want - listed)}")
        if listed - want:
            problems.append(f"`{path}`: on docs/{pages_of.get(top)}, not in --help: {sorted(listed - want)}")
    problems += [f"docs/{page}: lists options of `{path}`, which is no command" for path, (page, _) in
                 documented.items() if path not in actual]
    assert not problems, "\n".join(problems)
