"""Publish a built benchmark folder (dataset repo) or a metric folder (Gradio Space) to the Hub.

The token comes from ``HF_TOKEN`` or the Hugging Face login, resolved by ``huggingface_hub`` itself;
it is never read, printed or logged here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import yaml

logger = logging.getLogger(__name__)

#: Never uploaded: caches and local build leftovers.
IGNORE_PATTERNS = ["__pycache__/*", "**/__pycache__/*", "*.pyc", ".git/*", ".cache/*", "**/.cache/*", ".DS_Store"]


@dataclass(frozen=True)
class PushPlan:
    """What ``push`` would do: the repo type (and Space SDK) and the files with their sizes."""

    folder: Path
    repo_type: str  # "dataset" or "space"
    space_sdk: str | None
    files: list[tuple[str, int]]


def _front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    try:
        data = yaml.safe_load(text.split("---", 2)[1])
    except (yaml.YAMLError, IndexError) as error:
        raise ValueError(f"{readme}: front matter is not valid YAML: {error}") from error
    return data if isinstance(data, dict) else {}


def detect_repo_type(folder: Path) -> tuple[str, str | None]:
    """``("dataset", None)`` for a benchmark folder (README YAML ``configs``), ``("space", "gradio")`` for a
    metric folder (``app.py`` and the metric's ``<name>.py``)."""
    readme = folder / "README.md"
    if readme.is_file() and _front_matter(readme).get("configs"):
        return "dataset", None
    if (folder / "app.py").is_file() and any(p.name != "app.py" for p in folder.glob("*.py")):
        return "space", "gradio"
    raise ValueError(
        f"{folder}: neither a benchmark folder (README.md with YAML `configs`) nor a metric folder "
        "(app.py + <metric>.py)"
    )


def plan_push(folder: str | Path) -> PushPlan:
    """The upload plan for ``folder``, computed locally (no network)."""
    from huggingface_hub.utils import filter_repo_objects

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder")
    repo_type, sdk = detect_repo_type(folder)
    paths = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    kept = list(filter_repo_objects(paths, ignore_patterns=IGNORE_PATTERNS))
    return PushPlan(folder, repo_type, sdk, [(p, (folder / p).stat().st_size) for p in kept])


def push(folder: str | Path, repo_id: str, *, private: bool = False, dry_run: bool = False) -> PushPlan:
    """Create the repo if needed and upload the folder; with ``dry_run`` only return the plan."""
    plan = plan_push(folder)
    if dry_run:
        return plan
    from huggingface_hub import create_repo, upload_folder

    create_repo(repo_id, repo_type=plan.repo_type, private=private, exist_ok=True, space_sdk=plan.space_sdk)
    upload_folder(repo_id=repo_id, repo_type=plan.repo_type, folder_path=str(plan.folder),
                  ignore_patterns=IGNORE_PATTERNS, commit_message=f"Upload {plan.folder.name} with complexir push")
    logger.info("uploaded %d file(s) to %s %s", len(plan.files), plan.repo_type, repo_id)
    return plan
