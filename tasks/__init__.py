"""MTEB tasks and benchmarks for the four complexir benchmarks, one module per benchmark.

Each benchmark module defines its task classes, ``TASKS`` (the classes, in order) and ``BENCHMARK``
(an ``mteb.Benchmark``).
"""

from __future__ import annotations

import mteb

from . import coveragebench, crumb, irsc, locov1
from .layout_task import DATA_DIR_ENV, LayoutRetrievalTask

BENCHMARK_MODULES = (crumb, irsc, locov1, coveragebench)  # in table order

TASKS: list[type[LayoutRetrievalTask]] = []
BENCHMARKS: list[mteb.Benchmark] = []
BENCHMARK_OF: dict[str, str] = {}  # task name → benchmark name
for _module in BENCHMARK_MODULES:
    TASKS.extend(_module.TASKS)
    BENCHMARKS.append(_module.BENCHMARK)
    # every task of a benchmark's module belongs to it, variants (full-document, rerank) included
    BENCHMARK_OF.update({cls.metadata.name: _module.BENCHMARK.name for cls in _module.TASKS})
    globals().update({cls.__name__: cls for cls in _module.TASKS})

TASKS_BY_NAME = {cls.metadata.name: cls for cls in TASKS}
BENCHMARKS_BY_NAME = {b.name: b for b in BENCHMARKS}

__all__ = [
    "BENCHMARK_OF", "BENCHMARKS", "BENCHMARKS_BY_NAME", "DATA_DIR_ENV", "TASKS", "TASKS_BY_NAME", "LayoutRetrievalTask",
]
