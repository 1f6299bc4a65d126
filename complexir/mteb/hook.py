"""Make the plain ``mteb`` CLI and API know complexir's tasks and benchmarks.

mteb has no plugin mechanism: its task registry is built once, at import, in ``mteb.get_tasks``
(``TASK_LIST``, ``_TASKS_REGISTRY``, ``_SIMILAR_TASKS``), and its benchmark registry is an ``lru_cache``
(``mteb.benchmarks.get_benchmark._build_registry``) over the ``Benchmark`` objects found in the namespace
of ``mteb.benchmarks.benchmarks``. This module installs, from a ``.pth`` file, a tiny meta-path finder that
watches three module names and wraps their loaders:

* ``mteb`` — when the *package* has finished executing, our tasks are added to the ``mteb.get_tasks``
  registry. (Not right after ``mteb.get_tasks`` itself executes: at that moment ``mteb/__init__`` is
  half done, ``mteb.Benchmark`` does not exist yet, and our task modules need it. Nothing reads the
  registry before ``mteb/__init__`` finishes, so registering then is equivalent.)
* ``complexir.tasks`` — if a user imports it first, it imports ``mteb`` half-way through its own
  execution; registration then waits until ``complexir.tasks`` is complete.
* ``mteb.benchmarks.benchmarks`` — imported lazily by mteb (0.4 s); our ``Benchmark`` objects are put in
  its namespace when it loads, so ``mteb run -b CoverageBench`` and ``mteb available-benchmarks`` see them.

Start-up cost: the ``.pth`` line imports this module (standard library only) and puts the finder first on
``sys.meta_path``; the finder answers ``None`` to every other module name after one set lookup.
Nothing of mteb or complexir is imported until the user imports mteb.

What it patches is mteb's private registries, reached only through ``complexir.mteb.internals`` (the one
module that touches mteb's private names, checked against ``TESTED_MTEB_RANGE``).

The data source of the registered tasks is decided here, once, for the plain ``mteb`` CLI: ``COMPLEXIR_DATA_DIR``
when set (a folder holding one built folder per benchmark), else the Hub repos in the tasks' metadata.

Failure policy: a broken hook must never break ``import mteb`` for a user who installed complexir, but it
must never fail silently either. Outside the tested mteb range, or when an attribute this module patches is
missing or has changed type, it emits an :class:`MtebHookWarning` saying exactly what is wrong. Set
``COMPLEXIR_MTEB_HOOK=strict`` (or ``-W error::complexir.mteb.hook.MtebHookWarning``) to turn those into
errors, ``COMPLEXIR_MTEB_HOOK=0`` to disable the hook.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Callable
from types import ModuleType

from complexir.mteb import internals as mteb_internals
from complexir.mteb.internals import TESTED_MTEB_RANGE
from complexir.mteb.internals import MtebInternalsError as MtebHookError

# typing is no import of the start-up path: a type checker reads any name TYPE_CHECKING as true
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.abc import Loader as _LoaderBase
    from importlib.machinery import ModuleSpec

    from mteb import Benchmark
    from mteb.abstasks import AbsTask

    from complexir.registry.benchmarks import BenchmarkSpec
else:
    _LoaderBase = object

#: ``0``/``off`` disables the hook, ``strict`` raises :class:`MtebHookError` instead of warning.
ENV_SWITCH = "COMPLEXIR_MTEB_HOOK"
#: Comma-separated extra modules to register, each defining ``TASKS`` (task classes) and optionally
#: ``BENCHMARK`` (an ``mteb.Benchmark``) like ``complexir.tasks.<benchmark>`` modules: your own
#: ``LayoutRetrievalTask`` benchmarks become visible to the plain ``mteb`` CLI the same way.
EXTRA_MODULES_ENV = "COMPLEXIR_MTEB_TASK_MODULES"
#: Attribute prefix under which our benchmarks are placed in ``mteb.benchmarks.benchmarks``.
BENCHMARK_ATTR_PREFIX = "COMPLEXIR_BENCHMARK_"
#: Modules of this package are watched too, so that registration never runs while one of them is half made.
OWN_PACKAGE = "complexir."


class MtebHookWarning(RuntimeWarning):
    """complexir could not (fully) register its tasks with mteb."""


_registered = False  # our tasks are in mteb's registry
_benchmarks: list = []  # our Benchmark objects, once known
_executing: set[str] = set()  # watched modules whose code is running right now


def _mode() -> str:
    return os.environ.get(ENV_SWITCH, "on").strip().lower()


def _fail(message: str) -> None:
    """Report a hook problem loudly: a warning by default, an exception in strict mode."""
    _report(f"complexir: tasks not registered with mteb: {message}")


def _report(text: str) -> None:
    if _mode() == "strict":
        raise MtebHookError(text)
    warnings.warn(text, MtebHookWarning, stacklevel=3)


def _mteb_version() -> str:
    return mteb_internals.mteb_version()


def check_mteb_version() -> None:
    """Warn (or raise in strict mode) when the installed mteb is outside the tested range."""
    installed = _mteb_version()
    if not mteb_internals.in_tested_range(installed):
        _fail(f"mteb {installed} is outside the range this hook is tested with (mteb{TESTED_MTEB_RANGE})")


def _extra_modules() -> tuple[str, ...]:
    return tuple(filter(None, (m.strip() for m in os.environ.get(EXTRA_MODULES_ENV, "").split(","))))


def _providers() -> tuple[str, ...]:
    """The modules whose ``TASKS`` (and ``BENCHMARKS``/``BENCHMARK``) are registered."""
    return ("complexir.tasks", *_extra_modules())


def register() -> bool:
    """Add complexir's tasks and benchmarks to mteb's registries; idempotent. True when registered.

    Called by the import hook; call it yourself if the hook is disabled or complexir was imported from a
    source tree without installing it.
    """
    global _registered
    if _registered:
        return True
    modules = [importlib.import_module(name) for name in _providers()]
    if _registered:  # the imports above ran the hook's own registration
        return True
    _patch_tasks(modules)
    _set_data_source()
    from complexir.registry import benchmarks

    benchmarks.on_register(_register_spec)  # a benchmark registered later joins mteb's registry too
    _registered = True
    return True


def _register_spec(spec: BenchmarkSpec) -> None:
    """Add the tasks and benchmark of a spec registered after the hook ran."""
    _guarded(lambda module: add_to_mteb(list(module.TASKS), [module.BENCHMARK]))(
        importlib.import_module(spec.task_module))


def _set_data_source() -> None:
    """Tasks run by the plain ``mteb`` CLI (or any code that does not give them a source) read
    ``$COMPLEXIR_DATA_DIR`` when it is set, else the Hub; ``complexir run`` gives every task its own source."""
    from pathlib import Path

    from complexir.hub.data_source import DATA_DIR_ENV, DataSource, choose_source
    from complexir.tasks.layout_task import LayoutRetrievalTask

    try:
        source = choose_source(None, os.environ, None)
    except FileNotFoundError as error:
        # The tasks are registered; it is their data that cannot be read. Say so now, and keep the folder named, so
        # that a task fails when it loads (naming the folder) instead of silently reading the Hub.
        _report(f"complexir: {DATA_DIR_ENV}: {error}; complexir's tasks are registered with mteb but cannot load "
                f"until it names an existing data dir (or is unset: the Hub)")
        source = DataSource(Path(os.environ[DATA_DIR_ENV]).expanduser().absolute())
    LayoutRetrievalTask.default_source = source


def registered_benchmarks() -> list:
    """The ``Benchmark`` objects this hook added to mteb (ours and those of extra modules)."""
    return list(_benchmarks)


def _patch_tasks(modules: list[ModuleType]) -> None:
    ours, benchmarks = [], []
    for module in modules:
        ours.extend(mteb_internals.required(module, "TASKS", (list, tuple)))
        if hasattr(module, "BENCHMARKS"):
            benchmarks.extend(mteb_internals.required(module, "BENCHMARKS", (list, tuple)))
        elif hasattr(module, "BENCHMARK"):
            benchmarks.append(module.BENCHMARK)
    add_to_mteb(ours, benchmarks)


def add_to_mteb(ours: list[type[AbsTask]], benchmarks: list[Benchmark]) -> None:
    """Put task classes and ``Benchmark`` objects into mteb's registries (idempotent per class/object)."""
    global _benchmarks
    get_tasks, task_list, registry, similar = mteb_internals.task_registry()

    new = []
    for cls in ours:
        name = cls.metadata.name
        if name in registry and registry[name] is not cls:
            raise MtebHookError(f"task name {name!r} is already taken in mteb by {registry[name]!r}")
        if name not in registry:
            new.append(cls)
    get_tasks.TASK_LIST = task_list + tuple(new)
    registry.update({cls.metadata.name: cls for cls in new})
    for cls in new:  # keep mteb's "similar tasks" index as mteb builds it
        for parent in cls.metadata.adapted_from or ():
            similar.setdefault(parent, []).append(cls.metadata.name)

    mteb_internals.check_benchmark_caches()
    _benchmarks = [*_benchmarks, *(b for b in benchmarks if all(b is not known for known in _benchmarks))]
    if "mteb.benchmarks.benchmarks" in sys.modules:  # already imported: place ours now
        _place_benchmarks(sys.modules["mteb.benchmarks.benchmarks"])


def _place_benchmarks(module: ModuleType) -> None:
    """Put our Benchmark objects where mteb's benchmark registry looks, then drop its cached scan."""
    for bench in _benchmarks:
        attr = BENCHMARK_ATTR_PREFIX + "".join(c if c.isalnum() else "_" for c in bench.name)
        setattr(module, attr, bench)
    get_benchmark = sys.modules.get("mteb.benchmarks.get_benchmark")
    if get_benchmark is not None:
        mteb_internals.clear_benchmark_caches(get_benchmark)


# ---------------------------------------------------------------- callbacks run after a module executes


def _guarded(callback: Callable[[ModuleType], None]) -> Callable[[ModuleType], None]:
    def run(module: ModuleType) -> None:
        try:
            callback(module)
        except MtebHookError as error:
            if _mode() == "strict":
                raise
            warnings.warn(f"complexir: tasks not registered with mteb: {error}", MtebHookWarning, stacklevel=2)
        except Exception as error:  # never break `import mteb`, but say why loudly
            if _mode() == "strict":
                raise
            warnings.warn(
                f"complexir: tasks not registered with mteb: {type(error).__name__}: {error}",
                MtebHookWarning,
                stacklevel=2,
            )

    return run


def _ours_executing() -> bool:
    """Whether a provider or any complexir module is still running its code. Registering then would import the
    task modules while that module is half made: ``from complexir.systems.models import ...`` imports mteb before it
    defines what the task modules import from it. Registration waits for the outermost one to finish."""
    return any(name.startswith(OWN_PACKAGE) for name in _executing) or bool(_executing.intersection(_providers()))


@_guarded
def _after_mteb(module: ModuleType) -> None:
    check_mteb_version()
    if _ours_executing():
        return  # e.g. `import complexir.tasks` imported mteb: registration runs once that module is done
    register()


@_guarded
def _after_provider(module: ModuleType) -> None:
    if "mteb" not in sys.modules or "mteb" in _executing or _ours_executing():
        return  # mteb's own completion, or the outermost provider's or complexir module's, triggers registration
    register()


@_guarded
def _after_mteb_benchmarks(module: ModuleType) -> None:
    if _benchmarks:
        _place_benchmarks(module)


_WATCHED: dict[str, Callable[[ModuleType], None]] = {
    "mteb": _after_mteb,
    "mteb.benchmarks.benchmarks": _after_mteb_benchmarks,
}


class _NotifyingLoader(_LoaderBase):  # importlib.abc.Loader to type checkers only: importing it costs ~15 ms
    """Delegates everything to the real loader; calls back once the module has executed."""

    def __init__(self, loader: _LoaderBase, name: str) -> None:
        self._loader = loader
        self._name = name

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        _executing.add(self._name)
        try:
            self._loader.exec_module(module)
        finally:
            _executing.discard(self._name)
        # The real loader is what tools inspecting the module (inspect, importlib.resources) expect.
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        _WATCHED.get(self._name, _after_provider)(module)

    def __getattr__(self, attr: str) -> object:
        return getattr(self._loader, attr)


class MtebHookFinder:  # the meta-path finder protocol; see _NotifyingLoader on importlib.abc
    """Finds nothing itself: for the watched names it wraps the loader the other finders return."""

    def __init__(self) -> None:
        self.providers = frozenset(_providers())

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in _WATCHED and fullname not in self.providers and not fullname.startswith(OWN_PACKAGE):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _NotifyingLoader(spec.loader, fullname)
                return spec
        return None


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once). Called by the ``.pth`` file at start-up."""
    if _mode() in {"0", "off", "false", "no"}:
        return
    if any(isinstance(f, MtebHookFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, MtebHookFinder())
    if "mteb" in sys.modules:  # installed late (e.g. by hand): register now
        _after_mteb(sys.modules["mteb"])
