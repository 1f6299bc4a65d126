"""A benchmark folder as a Hub Benchmark: its ``eval.yaml``, naming every result id ``complexir report`` writes.

The Hub makes a dataset repo with an ``eval.yaml`` at its root a Benchmark, and ranks the ``.eval_results/*.yaml``
entries of model repos whose ``dataset.id`` is that repo and whose ``dataset.task_id`` is one of its task ids
(huggingface_hub's ``_eval_results``; mteb's ``HFEvalMeta`` is the same format, ``evaluation_framework: mteb``).

The ids are exactly those mteb's ``.eval_results`` serialiser (``TaskResult._to_hf_benchmark_result``) and
``complexir report`` write: the benchmark's name (its headline score), each task's name (its main score over its
subsets and splits), and ``<task>_<hf_subset>_<split>``. Unlike mteb's own generator, which names the MTEB subset
(``default``, ``en``) as the config, a (task, subset, split) entry here names the config of *this* repo's card the
task reads its queries from (``legal_qa-queries``, ``query-en-queries``) and a split that config has: our repos
have no ``default`` or ``en`` config. The aggregate entries (benchmark, task) name no config or split, as mteb's.
Only the tasks, subsets and splits whose data the folder holds are listed (a demo or a partial build holds some).
"""

from __future__ import annotations

import logging
from importlib import import_module
from pathlib import Path
from typing import Any

import yaml

from complexir.layout.eval_config import EVAL_FILE, check_eval_config
from complexir.layout.folder import BenchmarkFolder
from complexir.layout.schema import QUERIES, config_name
from complexir.registry.benchmarks import BenchmarkSpec

logger = logging.getLogger(__name__)

EVALUATION_FRAMEWORK = "mteb"


def task_entry_id(task_name: str, hf_subset: str, split: str) -> str:
    """The task id mteb gives one subset and split of a task in ``.eval_results`` (``<task>_<subset>_<split>``)."""
    return f"{task_name}_{hf_subset}_{split}"


def eval_config(folder: str | Path, spec: BenchmarkSpec) -> dict[str, Any]:
    """The ``eval.yaml`` of the benchmark folder ``folder`` (built for ``spec``), as a mapping: ``name`` and
    ``description`` of the spec's ``mteb.Benchmark``, ``evaluation_framework: mteb``, and ``tasks``: the benchmark,
    then per task whose data the folder holds the task and each (subset, split) of it."""
    module = import_module(spec.task_module)
    benchmark = module.BENCHMARK
    card = BenchmarkFolder.open_local(folder)
    entries: list[dict[str, str]] = [{"id": benchmark.name}]
    for cls in module.TASKS:
        per_split = _subset_entries(cls, card)
        if per_split:
            entries.append({"id": cls.metadata.name})
            entries.extend(per_split)
    return {"name": benchmark.name, "description": " ".join((benchmark.description or spec.name).split()),
            "evaluation_framework": EVALUATION_FRAMEWORK, "tasks": entries}


def _subset_entries(cls: Any, card: BenchmarkFolder) -> list[dict[str, str]]:
    """One entry per (MTEB subset, split) of task ``cls`` whose queries config the card has: none when the card
    lacks a subset the task needs (a task that runs the subsets present, ``allow_missing_subsets``, lists those)."""
    entries = []
    missing = []
    for hf_subset, layout in cls.layout_subsets.items():
        config = card.configs.get((layout, QUERIES))
        if config is None:
            missing.append(layout)
            continue
        for split in cls.available_splits:
            if split in config.data_files:
                entries.append({"id": task_entry_id(cls.metadata.name, hf_subset, split),
                                "config": config_name(layout, QUERIES), "split": split})
    if missing and not cls.allow_missing_subsets:
        return []
    return entries


def render_eval_config(config: dict[str, Any]) -> str:
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=1000)


def write_eval_config(folder: str | Path, spec: BenchmarkSpec) -> Path:
    """Write ``eval.yaml`` into the benchmark folder ``folder``, check it against the folder's card and return its
    path."""
    path = Path(folder) / EVAL_FILE
    config = eval_config(folder, spec)
    path.write_text(render_eval_config(config), encoding="utf-8")
    check_eval_config(folder)  # every config and split it names is the card's
    logger.info("%s: %d task ids", path, len(config["tasks"]))
    return path
