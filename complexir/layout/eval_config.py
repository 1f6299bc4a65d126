"""Checking a benchmark folder's ``eval.yaml``: the file that makes its Hub dataset repo a Benchmark.

The format (huggingface_hub's ``_eval_results`` docs, mteb's ``HFEvalMeta``): a mapping with ``name``,
``description``, ``evaluation_framework`` and ``tasks``, a list of ``{id, config, split}`` where ``config`` and
``split`` may be left out (the task then spans every config, or every split). Checked here, against the folder's own
card: ids are unique, every ``config`` named is a config of the card and every ``split`` a split of that config.
What the Hub itself checks on upload (its allow-list of evaluation frameworks, anything further) cannot be checked
offline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from complexir.layout.errors import LayoutError
from complexir.layout.folder import BenchmarkFolder

EVAL_FILE = "eval.yaml"
REQUIRED_KEYS = ("name", "description", "evaluation_framework", "tasks")
TASK_KEYS = ("id", "config", "split")


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _composed(path: Path) -> tuple[Any, yaml.Node | None]:
    text = path.read_text(encoding="utf-8")
    try:
        return yaml.safe_load(text), yaml.compose(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise LayoutError(f"{where}: invalid YAML: {getattr(error, 'problem', None) or error}") from None


def check_eval_config(folder: str | Path, card: BenchmarkFolder | None = None) -> dict[str, Any] | None:
    """The folder's ``eval.yaml``, checked (``LayoutError`` naming the file and line otherwise); None when the
    folder has none."""
    folder = Path(folder)
    path = folder / EVAL_FILE
    if not path.is_file():
        return None
    data, root = _composed(path)
    if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
        raise LayoutError(f"{path}:1: expected a mapping with keys {list(REQUIRED_KEYS)}")
    nodes = {key.value: value for key, value in root.value}
    for key in REQUIRED_KEYS:
        if key not in data:
            raise LayoutError(f"{path}:1: missing key {key!r}")
    for key in data:
        if key not in REQUIRED_KEYS:
            raise LayoutError(f"{path}:{_line(nodes[key])}: unknown key {key!r} (allowed: {list(REQUIRED_KEYS)})")
    for key in ("name", "description", "evaluation_framework"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise LayoutError(f"{path}:{_line(nodes[key])}: {key!r} must be a non-empty string")
    tasks = data["tasks"]
    if not isinstance(tasks, list) or not tasks:
        raise LayoutError(f"{path}:{_line(nodes['tasks'])}: 'tasks' must be a non-empty list of {{id, config, split}}")
    card = card or BenchmarkFolder.open_local(folder)
    splits = {config.name: set(config.data_files) for config in card.configs.values()}
    seen: dict[str, int] = {}
    for entry, node in zip(tasks, nodes["tasks"].value, strict=True):
        line = _line(node)
        where = f"{path}:{line}"
        if not isinstance(entry, dict):
            raise LayoutError(f"{where}: a task must be a mapping with keys {list(TASK_KEYS)}")
        unknown = sorted(set(entry) - set(TASK_KEYS))
        if unknown:
            raise LayoutError(f"{where}: unknown task keys {unknown} (allowed: {list(TASK_KEYS)})")
        task_id = entry.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise LayoutError(f"{where}: a task needs a non-empty string 'id'")
        if task_id in seen:
            raise LayoutError(f"{where}: task id {task_id!r} already given on line {seen[task_id]}")
        seen[task_id] = line
        config, split = entry.get("config"), entry.get("split")
        if config is not None and config not in splits:
            raise LayoutError(f"{where}: task {task_id!r} names config {config!r}, which the card "
                              f"({folder / 'README.md'}) does not have")
        if split is not None:
            if config is None:
                raise LayoutError(f"{where}: task {task_id!r} names split {split!r} without a config")
            if split not in splits[config]:
                raise LayoutError(f"{where}: task {task_id!r}: config {config!r} has no split {split!r} "
                                  f"(it has {sorted(splits[config])})")
    return data
