"""MTEB tasks and benchmarks of every registered benchmark spec, one task module per benchmark.

Each task module (``BenchmarkSpec.task_module``) defines its task classes, ``TASKS`` (the classes, in order) and
``BENCHMARK`` (an ``mteb.Benchmark``). The functions below read the registry each time they are called, so a
benchmark registered after this package was imported is known to them; the module-level names are the
benchmarks registered at import (the four built in, and those declared through entry points).
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

import mteb

from complexir.registry.benchmarks import all_specs

from .layout_task import LayoutRetrievalTask


def task_modules() -> list[ModuleType]:
    """The task module of every registered benchmark, in registry (table) order."""
    return [import_module(spec.task_module) for spec in all_specs()]


def all_tasks() -> list[type[LayoutRetrievalTask]]:
    return [cls for module in task_modules() for cls in module.TASKS]


def all_benchmarks() -> list[mteb.Benchmark]:
    return [module.BENCHMARK for module in task_modules()]


def benchmark_of() -> dict[str, str]:
    """Task name → benchmark name; every task of a benchmark's module belongs to it, variants (full-document,
    rerank) included."""
    return {cls.metadata.name: module.BENCHMARK.name for module in task_modules() for cls in module.TASKS}


def tasks_by_name() -> dict[str, type[LayoutRetrievalTask]]:
    return {cls.metadata.name: cls for cls in all_tasks()}


def benchmarks_by_name() -> dict[str, mteb.Benchmark]:
    return {b.name: b for b in all_benchmarks()}


TASKS = all_tasks()
BENCHMARKS = all_benchmarks()
BENCHMARK_OF = benchmark_of()
TASKS_BY_NAME = tasks_by_name()
BENCHMARKS_BY_NAME = benchmarks_by_name()
globals().update({cls.__name__: cls for cls in TASKS})

__all__ = [
    "BENCHMARK_OF", "BENCHMARKS", "BENCHMARKS_BY_NAME", "TASKS", "TASKS_BY_NAME", "LayoutRetrievalTask",
    "all_benchmarks", "all_tasks", "benchmark_of", "benchmarks_by_name", "task_modules", "tasks_by_name",
]
