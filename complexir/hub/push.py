"""Publish a built benchmark folder (dataset repo), a metric folder (Gradio Space), a report folder (model repo:
the model card and ``.eval_results``, directly or as a pull request) or a static site (a static Space, such as
``complexir leaderboard``'s) to the Hub.

A metric folder is not uploaded as is: its module imports the maths from ``complexir.metrics``, which a
Space cannot install (complexir is not on PyPI). ``stage_space`` therefore writes a copy in which the maths
modules are vendored as one generated sibling file, ``_complexir_metrics.py``, imported relatively.
Why one flattened file: ``evaluate.loading.get_imports`` scans only the metric script itself, and
``_download_additional_modules`` fetches each relative import of that script as a sibling ``<name>.py``
(next to the script on disk, or from the Space's ``resolve/<revision>/`` URL), without looking into the
fetched files. Sibling modules that import each other (``coverage`` → ``measures``) would only be fetched
if the script named each of them; one self-contained file needs one import line and nothing else.

The token comes from ``HF_TOKEN`` or the Hugging Face login, resolved by ``huggingface_hub`` itself;
it is never read, printed or logged here.
"""

from __future__ import annotations

import ast
import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from complexir.layout.errors import HubAccessError

logger = logging.getLogger(__name__)

#: Never uploaded: caches, local build leftovers, and the writer's marker (``.complexir-build``: it only tells a
#: later local build that it may replace this folder). A tuple: ``upload_folder`` extends the list it is given in
#: place, so each call gets its own copy (``list(IGNORE_PATTERNS)``).
IGNORE_PATTERNS = ("__pycache__/*", "**/__pycache__/*", "*.pyc", ".git/*", ".cache/*", "**/.cache/*", ".DS_Store",
                   ".complexir-build")

#: The generated file holding the vendored maths in a staged Space (leading underscore: never taken for the
#: metric script, and no clash with a PyPI package on the Space's ``sys.path``).
VENDORED_MODULE = "_complexir_metrics"

#: The package whose modules are vendored.
_MATHS_PACKAGE = "complexir.metrics"


@dataclass(frozen=True)
class PushPlan:
    """What ``push`` would do: the repo type (and Space SDK) and the files with their sizes.

    ``folder`` is the folder given; ``upload_folder`` is what is uploaded (the staged copy for a Space,
    ``None`` once a temporary staging folder is gone).
    """

    folder: Path
    repo_type: str  # "dataset", "space" or "model"
    space_sdk: str | None
    files: list[tuple[str, int]]
    upload_folder: Path | None = None


def _front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    try:
        data = yaml.safe_load(text.split("---", 2)[1])
    except (yaml.YAMLError, IndexError) as error:
        raise ValueError(f"{readme}: front matter is not valid YAML: {error}") from error
    return data if isinstance(data, dict) else {}


EVAL_RESULTS = ".eval_results"  # in a model repo: the result files the Hub's Benchmarks read


def detect_repo_type(folder: Path) -> tuple[str, str | None]:
    """``("dataset", None)`` for a benchmark folder (README YAML ``configs``), ``("space", "static")`` for a static
    site (README YAML ``sdk: static``), ``("space", "gradio")`` for a metric folder (``app.py`` and the metric's
    ``<name>.py``), ``("model", None)`` for a report folder (``complexir report``'s output: ``.eval_results/*.yaml``,
    beside the model card)."""
    readme = folder / "README.md"
    if readme.is_file() and _front_matter(readme).get("configs"):
        return "dataset", None
    if readme.is_file() and _front_matter(readme).get("sdk") == "static":  # a static Space: `complexir leaderboard`
        return "space", "static"
    if (folder / "app.py").is_file() and any(p.name != "app.py" for p in folder.glob("*.py")):
        return "space", "gradio"
    if any((folder / EVAL_RESULTS).glob("*.yaml")):
        return "model", None
    raise ValueError(
        f"{folder}: neither a benchmark folder (README.md with YAML `configs`), a metric folder "
        "(app.py + <metric>.py), a report folder (.eval_results/*.yaml, from complexir report) nor a static site "
        "(README.md with `sdk: static`, from complexir leaderboard)"
    )


def check_report_folder(folder: Path) -> None:
    """A report folder may be published to a model repo: every ``.eval_results/*.yaml`` is a list of entries
    huggingface_hub reads (``dataset.id``, ``dataset.task_id``, ``value``), and no file carries results labelled as
    demo data (``complexir report --allow-demo``). ``ValueError`` naming the file (and entry) otherwise."""
    from huggingface_hub import parse_eval_result_entries

    from complexir.hub.provenance import DEMO_RESULTS_MARK

    for path in sorted((folder / EVAL_RESULTS).glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        try:
            entries = yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            raise ValueError(f"{path}{f':{mark.line + 1}' if mark else ''}: invalid YAML") from None
        if not isinstance(entries, list) or not entries:
            raise ValueError(f"{path}: expected a list of evaluation results (dataset: {{id, task_id}}, value)")
        for i, entry in enumerate(entries, 1):
            try:
                parse_eval_result_entries([entry])
            except (KeyError, TypeError, AttributeError, ValueError) as error:
                raise ValueError(f"{path}: entry {i} is not an evaluation result huggingface_hub reads "
                                 f"({type(error).__name__}: {error})") from None
    for path in [folder / "README.md", *sorted((folder / EVAL_RESULTS).glob("*.yaml"))]:
        if path.is_file() and DEMO_RESULTS_MARK in path.read_text(encoding="utf-8"):
            raise ValueError(f"{path}: holds results labelled {DEMO_RESULTS_MARK}: a model repo never gets demo "
                             "results; report a run on real data (complexir report without --allow-demo)")


def _listing(folder: Path) -> list[tuple[str, int]]:
    from huggingface_hub.utils import filter_repo_objects

    paths = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    kept = filter_repo_objects(paths, ignore_patterns=list(IGNORE_PATTERNS))
    return [(p, (folder / p).stat().st_size) for p in kept]


# --------------------------------------------------------------------------------------------------------
# Staging a metric folder as a self-contained Space
# --------------------------------------------------------------------------------------------------------


def metric_script(folder: Path) -> Path:
    """The metric module of a metric folder: ``<folder name>.py``, else its only public ``*.py`` besides app.py."""
    named = folder / f"{folder.name}.py"
    if named.is_file():
        return named
    candidates = [p for p in sorted(folder.glob("*.py")) if p.name != "app.py" and not p.name.startswith("_")]
    if len(candidates) != 1:
        raise ValueError(f"{folder}: expected one metric script <name>.py next to app.py, found "
                         f"{[p.name for p in candidates]}")
    return candidates[0]


def _space_name(repo_id: str | None, script: Path) -> str:
    """The Space's name, which is also the script's file stem: ``evaluate.load("ORG/NAME")`` fetches ``NAME.py``."""
    if repo_id is None:
        return script.stem
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"--repo must be ORG/NAME, got {repo_id!r}")
    name = parts[1]
    if not name.replace("-", "_").isidentifier():
        raise ValueError(f"{repo_id}: the Space name becomes the metric's module name ({name}.py); "
                         "use letters, digits, '_' or '-'")
    return name


def _maths_dir() -> Path:
    import complexir.metrics

    return Path(complexir.metrics.__file__).resolve().parent


def _relative_deps(tree: ast.Module, where: Path) -> list[str]:
    """Sibling modules a maths module imports relatively (``from .x import a, b``), in order."""
    deps = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level != 1 or not node.module:
                raise ValueError(f"{where}:{node.lineno}: only `from .module import name` can be vendored")
            if any(alias.asname for alias in node.names) or any(alias.name == "*" for alias in node.names):
                raise ValueError(f"{where}:{node.lineno}: aliased or star relative imports cannot be vendored")
            deps.append(node.module.split(".")[0])
    return deps


def _module_order(roots: list[str], maths: Path) -> list[str]:
    """``roots`` plus every module they need, each after its dependencies (depth-first, deterministic)."""
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise ValueError(f"{maths}: circular relative imports through {name}.py cannot be flattened")
        path = maths / f"{name}.py"
        if not path.is_file():
            raise ValueError(f"{path}: imported by the metric but not found")
        visiting.add(name)
        for dep in _relative_deps(ast.parse(path.read_text(encoding="utf-8")), path):
            visit(dep)
        visiting.discard(name)
        order.append(name)

    for root in roots:
        visit(root)
    return order


def _defined_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def flatten_maths(modules: list[str], maths: Path | None = None) -> tuple[str, set[str]]:
    """One self-contained module from the maths ``modules`` (dependencies first): the source text and its
    top-level names.

    Absolute imports are hoisted and deduplicated, relative imports dropped (their names now live in the
    same namespace), ``__all__`` and module docstrings dropped. The same name defined twice is allowed only
    with identical code (``logger = logging.getLogger(__name__)``); anything else is an error, never a
    silent shadowing.
    """
    maths = maths or _maths_dir()
    plain_imports: list[str] = []  # `import x` statements
    from_imports: dict[str, list[str]] = {}  # module -> names (with `as`), merged across modules
    defined: dict[str, tuple[str, str]] = {}  # name -> (module, dumped ast)
    bodies: list[str] = []
    for name in modules:
        path = maths / f"{name}.py"
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines = source.splitlines(keepends=True)
        drop: set[int] = set()  # 0-based line numbers
        for index, node in enumerate(tree.body):
            first_line = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            span = range(first_line - 1, node.end_lineno or node.lineno)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if isinstance(node, ast.Import):
                    if (statement := ast.unparse(node)) not in plain_imports:
                        plain_imports.append(statement)
                elif not node.level and node.module is not None:  # an absolute import names its module
                    merged = from_imports.setdefault(node.module, [])
                    for alias in node.names:
                        spelled = alias.name + (f" as {alias.asname}" if alias.asname else "")
                        if spelled not in merged:
                            merged.append(spelled)
                drop.update(span)
                continue
            if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                drop.update(span)  # module docstring
                continue
            names = _defined_names(node)
            if names == ["__all__"]:
                drop.update(span)
                continue
            dumped = ast.dump(node)
            repeated = False
            for defined_name in names:
                if defined_name in defined:
                    first_module, first_dump = defined[defined_name]
                    if first_dump != dumped:
                        raise ValueError(f"{path}:{node.lineno}: {defined_name!r} is also defined differently in "
                                         f"{first_module}.py; rename one before vendoring")
                    repeated = True
                else:
                    defined[defined_name] = (name, dumped)
            if repeated:
                drop.update(span)
        body = "".join(line for number, line in enumerate(lines) if number not in drop).strip("\n")
        bodies.append(f"# ---- complexir.metrics.{name} " + "-" * max(4, 80 - len(name)) + "\n\n" + body + "\n")
    future_names = from_imports.pop("__future__", [])
    future = [f"from __future__ import {', '.join(future_names)}"] if future_names else []
    others = plain_imports + [f"from {module} import {', '.join(names)}" for module, names in from_imports.items()]
    header = (
        '"""complexir.metrics flattened into one module for this Space.\n\n'
        f"Sources, in order: {', '.join(m + '.py' for m in modules)}.\n"
        "Generated by `complexir push`: the Hub Space cannot pip-install complexir, and `evaluate` fetches only\n"
        "the files its metric script imports directly. Do not edit; edit complexir's metrics/*.py instead.\n"
        '"""\n\n'
    )
    text = header + "\n".join(future) + ("\n\n" if future else "") + "\n".join(others) + "\n\n\n"
    text += "\n\n".join(bodies)
    while "\n\n\n\n" in text:
        text = text.replace("\n\n\n\n", "\n\n\n")
    compile(text, f"{VENDORED_MODULE}.py", "exec")
    return text, set(defined)


def _rewrite_script(script: Path, maths: Path) -> tuple[str, list[str], set[str]]:
    """The script with each ``from complexir.metrics[.sub] import ...`` pointed at the vendored sibling: the
    new text, the maths modules it needs and the names it imports."""
    source = script.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    roots: list[str] = []
    wanted: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "complexir" for a in node.names):
            raise ValueError(f"{script}:{node.lineno}: use `from complexir.metrics import name` so it can be vendored")
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
            continue
        if node.module.split(".")[0] != "complexir":
            continue
        if node.module != _MATHS_PACKAGE and not node.module.startswith(_MATHS_PACKAGE + "."):
            raise ValueError(f"{script}:{node.lineno}: imports {node.module}; a Space can only vendor "
                             f"{_MATHS_PACKAGE} (numpy and the standard library)")
        if node not in tree.body:
            raise ValueError(f"{script}:{node.lineno}: complexir imports must be at module level")
        if any(a.name == "*" for a in node.names):
            raise ValueError(f"{script}:{node.lineno}: star imports cannot be vendored")
        if node.module == _MATHS_PACKAGE:
            init = maths / "__init__.py"
            roots.extend(_relative_deps(ast.parse(init.read_text(encoding="utf-8")), init))
        else:
            roots.append(node.module[len(_MATHS_PACKAGE) + 1:].split(".")[0])
        wanted.update(a.name for a in node.names)
        # One line, same names: evaluate's get_imports reads the line's module (`._complexir_metrics`).
        statement = f"from .{VENDORED_MODULE} import " + ", ".join(
            a.name + (f" as {a.asname}" if a.asname else "") for a in node.names) + "\n"
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        lines[first:last + 1] = [statement] + [""] * (last - first)
    if not roots:
        raise ValueError(f"{script}: does not import {_MATHS_PACKAGE}; nothing to vendor")
    return "".join(lines), roots, wanted


def _rewrite_app(app: Path, old: str, new: str) -> str:
    """app.py loading ``new`` instead of ``old`` (the script's file name, a string literal in app.py)."""
    source = app.read_text(encoding="utf-8")
    hits = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and n.value == old]
    if len(hits) != 1:
        raise ValueError(f"{app}: expected the script file name {old!r} once as a string, found {len(hits)}")
    return source.replace(f'"{old}"', f'"{new}"').replace(f"'{old}'", f"'{new}'")


def _space_requirements(requirements: Path) -> str:
    """requirements.txt without ``complexir`` (vendored instead; it is not on PyPI)."""
    kept = []
    for line in requirements.read_text(encoding="utf-8").splitlines():
        requirement = line.split("#", 1)[0].strip()
        name = requirement.split(";")[0]
        for sep in "<>=!~[ @":
            name = name.split(sep)[0]
        if name.strip().lower() == "complexir":
            continue
        kept.append(line)
    return "\n".join(kept).strip("\n") + "\n"


def stage_space(folder: str | Path, out_dir: str | Path, repo_id: str | None = None) -> Path:
    """Write a self-contained copy of the metric ``folder`` into ``out_dir`` (created; must be empty) and
    return it.

    The copy holds the folder's files with the script renamed ``<Space name>.py`` (``evaluate.load("ORG/NAME")``
    downloads ``NAME.py``), its ``complexir.metrics`` imports rewritten to ``from ._complexir_metrics import``,
    app.py pointed at the renamed script, ``complexir`` dropped from requirements.txt, and the generated
    ``_complexir_metrics.py``.
    """
    folder, out_dir = Path(folder), Path(out_dir)
    if detect_repo_type(folder)[0] != "space":
        raise ValueError(f"{folder}: not a metric folder")
    script = metric_script(folder)
    name = _space_name(repo_id, script)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir}: staging folder is not empty")
    maths = _maths_dir()
    script_text, roots, wanted = _rewrite_script(script, maths)
    modules = _module_order(roots, maths)
    vendored, names = flatten_maths(modules, maths)
    if missing := sorted(wanted - names):
        raise ValueError(f"{script}: imports {missing} which {', '.join(modules)} do not define")
    if (folder / f"{VENDORED_MODULE}.py").exists():
        raise ValueError(f"{folder}: {VENDORED_MODULE}.py is generated by staging; remove it from the folder")

    out_dir.mkdir(parents=True, exist_ok=True)
    for relative, _ in _listing(folder):
        source = folder / relative
        if source == script:
            continue
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if relative == "app.py":
            target.write_text(_rewrite_app(source, script.name, f"{name}.py"), encoding="utf-8")
        elif relative == "requirements.txt":
            target.write_text(_space_requirements(source), encoding="utf-8")
        else:
            shutil.copyfile(source, target)
    (out_dir / f"{name}.py").write_text(script_text, encoding="utf-8")
    (out_dir / f"{VENDORED_MODULE}.py").write_text(vendored, encoding="utf-8")
    logger.info("staged %s as Space module %s.py with %s vendored into %s.py", folder, name,
                ", ".join(modules), VENDORED_MODULE)
    return out_dir


# --------------------------------------------------------------------------------------------------------
# Plan and push
# --------------------------------------------------------------------------------------------------------


def check_repo_id(repo_id: str) -> None:
    """``ORG/NAME`` as the Hub accepts it; else a ``ValueError`` saying so (before anything is staged or sent)."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        raise ValueError(f"--repo {repo_id!r} is not a valid Hub repo id: {str(error).splitlines()[0]}") from None
    if repo_id.count("/") != 1:
        raise ValueError(f"--repo {repo_id!r}: give ORG/NAME (the namespace too)")


def plan_push(folder: str | Path, repo_id: str | None = None, *, stage_dir: str | Path | None = None) -> PushPlan:
    """The upload plan for ``folder``, computed locally (no network), after checking it: the repo id, and for a
    benchmark folder every file and row (``complexir validate``), so that nothing unreadable is published.

    A metric folder is staged (``stage_space``) into ``stage_dir``, or into a temporary folder that is
    removed once listed (then ``upload_folder`` is ``None``); the plan lists the staged files.
    """
    folder = Path(folder)
    if repo_id is not None:
        check_repo_id(repo_id)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder")
    repo_type, sdk = detect_repo_type(folder)
    if repo_type == "dataset":
        from complexir.layout.validation import validate_folder

        validate_folder(folder)  # its eval.yaml included, against its card
        return PushPlan(folder, repo_type, sdk, _listing(folder), folder)
    if repo_type == "model":
        check_report_folder(folder)
        return PushPlan(folder, repo_type, sdk, _listing(folder), folder)
    if sdk == "static":  # uploaded as it is: plain files, nothing to vendor
        return PushPlan(folder, repo_type, sdk, _listing(folder), folder)
    if stage_dir is not None:
        staged = stage_space(folder, stage_dir, repo_id)
        return PushPlan(folder, repo_type, sdk, _listing(staged), staged)
    with tempfile.TemporaryDirectory(prefix="complexir-space-") as tmp:
        return PushPlan(folder, repo_type, sdk, _listing(stage_space(folder, tmp, repo_id)), None)


@dataclass(frozen=True)
class PushResult:
    """What ``push`` did: the plan, the commit now at the head of ``main``, and whether anything changed."""

    plan: PushPlan
    repo_id: str
    commit: str | None = None  # None for a dry run
    changed: bool = False  # False: the Hub already held these exact files (no commit was made)
    created: bool = False
    private: bool | None = None  # the repo's visibility after the push
    visibility_changed: bool = False
    pull_request: str | None = None  # ``create_pr``: the URL of the pull request opened (``commit`` is its head)


def push(folder: str | Path, repo_id: str, *, private: bool = False, dry_run: bool = False,
         stage_dir: str | Path | None = None, create_pr: bool = False) -> PushResult:
    """Create the repo if needed and upload the folder (a metric folder: its staged copy); with ``dry_run``
    only check and plan. ``stage_dir`` keeps the staged Space copy there for inspection. ``create_pr`` opens a
    pull request with the files instead of committing to ``main`` (community results on someone else's model repo
    are pull requests on the Hub); the repo must exist then.

    ``private=True`` makes a new repo private and an existing public one private (its settings are updated);
    without it an existing repo keeps its visibility (a private repo is never made public by a push). Errors
    from the Hub or the network are raised as ``HubAccessError``, one line naming the repo and what to do.
    """
    with tempfile.TemporaryDirectory(prefix="complexir-space-") as tmp:
        plan = plan_push(folder, repo_id, stage_dir=stage_dir if stage_dir is not None else tmp)
        keep = stage_dir is not None or plan.upload_folder == plan.folder  # a folder uploaded as it is
        if dry_run:
            return PushResult(plan if keep else _forget_upload(plan), repo_id)
        result = _upload(plan, repo_id, private, create_pr)
        return result if keep else PushResult(**{**result.__dict__, "plan": _forget_upload(plan)})


def _upload(plan: PushPlan, repo_id: str, private: bool, create_pr: bool = False) -> PushResult:
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    api = HfApi()
    kind = plan.repo_type
    with hub_errors(repo_id, kind):
        try:
            existing = api.repo_info(repo_id, repo_type=kind)
        except RepositoryNotFoundError:
            if create_pr:
                raise
            existing = None
        created = existing is None
        changed_visibility = False
        if existing is None:
            api.create_repo(repo_id, repo_type=kind, private=private, space_sdk=plan.space_sdk)
            info = api.repo_info(repo_id, repo_type=kind)
        else:
            info = existing
        if not created and private and not info.private:
            api.update_repo_settings(repo_id, repo_type=kind, private=True)
            changed_visibility = True
            logger.info("%s %s is now private", kind, repo_id)
        before = info.sha
        what = "evaluation results" if kind == "model" else plan.folder.name
        commit = api.upload_folder(repo_id=repo_id, repo_type=kind, folder_path=str(plan.upload_folder),
                                   ignore_patterns=list(IGNORE_PATTERNS), create_pr=create_pr,
                                   commit_message=f"Upload {what} with complexir push")
    # upload_folder returns the current head, and opens no pull request, when the Hub had every file already
    changed = commit.oid != before or commit.pr_url is not None
    logger.info("%s %s: %s", kind, repo_id, f"pull request {commit.pr_url}" if commit.pr_url else
                f"commit {commit.oid}" if changed else "no changes")
    return PushResult(plan, repo_id, commit.oid, changed, created, bool(private or info.private), changed_visibility,
                      commit.pr_url)


@contextmanager
def hub_errors(repo_id: str, repo_type: str) -> Iterator[None]:
    """Turn what the Hub or the network raises into one ``HubAccessError`` line naming the repo and what to do."""
    try:
        yield
    except Exception as error:
        message = hub_error_message(error, repo_id, repo_type)
        if message is None:
            raise
        raise HubAccessError(message) from error


def hub_error_message(error: Exception, repo_id: str, repo_type: str) -> str | None:
    """One line for a Hub or network failure on ``repo_id``, or None for anything else (a bug: let it show)."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled, RepositoryNotFoundError
    from huggingface_hub.utils import httpx  # httpx2 in huggingface_hub 2.x, under its stable alias

    where = f"{repo_type} {repo_id}"
    if isinstance(error, OfflineModeIsEnabled):
        return f"{where}: offline mode is on (HF_HUB_OFFLINE=1); unset it to push"
    if isinstance(error, HfHubHTTPError):
        status = error.response.status_code if error.response is not None else None
        if status == 401 and not isinstance(error, RepositoryNotFoundError):
            return (f"{where}: the Hub refused the credentials (401); set HF_TOKEN to a write token or run "
                    "`hf auth login`")
        if isinstance(error, RepositoryNotFoundError) or status == 404:
            return (f"{where}: not found or not visible with this token ({status}); check the name, and that "
                    "HF_TOKEN (or `hf auth login`) may write to that namespace")
        if status == 403:
            return f"{where}: this token may not write there (403); use a token with write access to the namespace"
        return f"{where}: the Hub answered {status}: {str(error).strip().splitlines()[0]}"
    if isinstance(error, (httpx.TransportError, ConnectionError, TimeoutError)):
        return f"{where}: cannot reach the Hub ({type(error).__name__}: {error}); check the network or HF_ENDPOINT"
    return None


def _forget_upload(plan: PushPlan) -> PushPlan:
    """The plan without its temporary staging folder (removed on return)."""
    return PushPlan(plan.folder, plan.repo_type, plan.space_sdk, plan.files, None)
