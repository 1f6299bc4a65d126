"""The house's rules, checked on the source: the package's modules import one another in one direction only (no
import cycle, deferred imports included; the foundation never imports the face), and mteb's private parts are
reached from one module only."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _modules() -> dict[str, Path]:
    """Every module of the installed package, by dotted name, from pyproject's package-dir mapping."""
    package_dirs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    modules = {}
    for package, folder in package_dirs.items():
        for file in (REPO / folder).rglob("*.py"):
            parts = file.relative_to(REPO / folder).with_suffix("").parts
            name = ".".join((package, *parts))
            modules[name.removesuffix(".__init__")] = file
    return modules


def _import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the package modules it imports anywhere in its body (a function-level import counts too:
    it is the same dependency, only later)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, file in modules.items():
        package = name if file.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycle_finder_sees_a_deferred_import_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_package_has_no_import_cycle():
    modules = _modules()
    assert "complexir.analysis.report" in modules and "complexir.tasks.locov1" in modules
    assert _cycles(_import_graph(modules)) == []


MTEB_INTERNALS = "complexir.mteb.internals"

#: The rooms of the house and the rooms each may import (its own always); docs/architecture.md shows this table.
#: One pair of rooms points both ways, between modules that never form a cycle (checked above): ``tasks`` use
#: ``mteb.internals``, and ``mteb.hook`` registers the tasks with mteb.
ROOMS: dict[str, set[str]] = {
    "metrics": set(),
    "layout": set(),
    "registry": set(),
    "runs": {"layout", "metrics"},
    "upstream": {"layout", "runs", "metrics"},
    "mteb": {"layout", "registry", "hub", "tasks"},
    "systems": {"layout", "upstream", "runs", "mteb"},
    "loading_scripts": {"layout", "registry", "upstream", "metrics"},
    "hub": {"layout", "registry", "metrics", "upstream", "loading_scripts"},
    "tasks": {"layout", "metrics", "registry", "runs", "systems", "hub", "mteb"},
    "analysis": {"layout", "metrics", "registry", "runs", "hub", "mteb", "tasks"},
    "api": {"layout", "metrics", "registry", "runs", "upstream", "systems", "hub", "mteb", "tasks", "loading_scripts",
            "analysis"},
    "cli": {"layout", "metrics", "registry", "runs", "upstream", "systems", "hub", "mteb", "tasks", "loading_scripts",
            "analysis", "api"},
}
#: Modules outside every room: the package itself (``__version__``, and the API's names imported lazily) and the
#: shim kept for code that imports the hook by its former name.
OUTSIDE_ROOMS = {"complexir": {"api"}, "complexir.mteb_hook": {"mteb"}}
#: Imports whose module name is computed (``import_module(spec.task_module)``): the rooms those names lie in.
DYNAMIC = {
    "complexir.hub.build_cache": {"loading_scripts"},  # spec.loading_script
    "complexir.cli.build_cmd": {"loading_scripts"},
    "complexir.cli.main": {"cli"},  # f"complexir.cli.{name}_cmd"
    "complexir.tasks": {"tasks"},  # spec.task_module
    "complexir.tasks.layout_task": {"tasks"},
    "complexir.tasks.hub_benchmark": {"tasks"},  # spec.task_module: the benchmark and its tasks
    "complexir.mteb.hook": {"tasks"},  # spec.task_module, and the providers (complexir.tasks, entry points)
    "complexir.systems.kinds": {"outside"},  # a model's own loader module, and mteb's model modules
}


def room_of(module: str) -> str:
    """The room a module of the package lives in: the first name under ``complexir``."""
    if module in OUTSIDE_ROOMS:
        return module
    room = module.split(".")[1]
    assert room in ROOMS or room == "cards", f"{module} lives in no room of the table (tests/test_architecture.py)"
    return room


def _allowed(module: str) -> set[str]:
    room = room_of(module)
    return {room, *(OUTSIDE_ROOMS.get(module) or ROOMS.get(room, set()))}


def test_every_module_lives_in_a_room_and_imports_only_the_rooms_it_may() -> None:
    graph = _import_graph(_modules())
    wrong = [f"{name} ({room_of(name)}) imports {target} ({room_of(target)})"
             for name, targets in graph.items() for target in sorted(targets)
             if room_of(target) not in _allowed(name)]
    assert not wrong, "imports against the room table:\n" + "\n".join(wrong)


def test_the_room_table_is_the_one_the_docs_show() -> None:
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    shown = {line.split("`")[1]: line.split("|")[2] for line in page.splitlines() if line.startswith("| `")}
    assert set(shown) == set(ROOMS), "docs/architecture.md's room table lists other rooms than ROOMS"
    for room, allowed in ROOMS.items():
        listed = {name for name in ROOMS if f"`{name}`" in shown[room]}
        assert listed == allowed, f"docs/architecture.md: the rooms {room} may import differ from ROOMS"


def _dynamic_imports(file: Path) -> tuple[set[str], int]:
    """The literal module names a file imports through ``import_module``/``__import__``, and how many such calls
    compute their name instead."""
    literal, computed = set(), 0
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) == "import_module"
                                           or getattr(node.func, "id", None) in {"import_module", "__import__"}):
            argument = node.args[0] if node.args else None
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                literal.add(argument.value)
            else:
                computed += 1
    return literal, computed


def test_dynamic_imports_obey_the_room_table_too() -> None:
    wrong, undeclared = [], []
    for name, file in _modules().items():
        literal, computed = _dynamic_imports(file)
        wrong += [f"{name} imports {target}" for target in sorted(literal)
                  if target.startswith("complexir.") and room_of(target) not in _allowed(name)]
        if computed and name not in DYNAMIC:
            undeclared.append(name)
    assert not wrong, "dynamic imports against the room table:\n" + "\n".join(wrong)
    assert not undeclared, f"computed imports not declared in DYNAMIC: {undeclared}"
    for name, rooms in DYNAMIC.items():
        assert _dynamic_imports(_modules()[name])[1], f"{name} is in DYNAMIC but computes no import name"
        assert rooms <= _allowed(name) | {"outside"}, f"{name}: its computed imports reach rooms it may not import"


def test_the_registry_names_task_modules_and_loading_scripts_in_their_rooms() -> None:
    """The computed imports' names come from the registry: check the rooms they point into."""
    from complexir.registry.benchmarks import all_specs

    for spec in all_specs():
        assert room_of(spec.task_module) == "tasks", spec.task_module
        assert room_of(spec.loading_script) == "loading_scripts", spec.loading_script


def mteb_private_names() -> tuple[set[str], set[str]]:
    """Every ``_name`` (not ``_`` or a dunder) that mteb's own source defines (modules, functions, classes,
    attributes), and those of them that are methods of its classes."""
    import mteb

    root = Path(mteb.__file__).parent
    names, methods = set(), set()
    for path in root.rglob("*.py"):
        names.update(p for p in path.relative_to(root).with_suffix("").parts if p.startswith("_"))
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        names |= own_names(tree, arguments=False)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods.update(i.name for i in node.body if isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef)))
    private = {n for n in names if n.startswith("_") and not n.startswith("__") and n != "_"}
    return private, methods & private


def own_names(tree: ast.AST, *, arguments: bool = True) -> set[str]:
    """The names a module defines itself (functions, classes, assigned names and attributes, and with
    ``arguments`` its parameters): its own private attributes may coincide with mteb's."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif arguments and isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def test_only_one_module_touches_mteb_private_names() -> None:
    private, private_methods = mteb_private_names()
    assert {"_TASKS_REGISTRY", "_evaluate_subset", "_load_corpus", "_create_dataloaders", "_top_k"} <= private
    assert {"_evaluate_subset", "_load_corpus"} <= private_methods
    offences = []
    for name, path in _modules().items():
        if name == MTEB_INTERNALS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mine = own_names(tree)
        for node in ast.walk(tree):
            hits: list[str] = []
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mteb":
                hits += [p for p in node.module.split(".") if p.startswith("_")]
                hits += [a.name for a in node.names if a.name.startswith("_")]
            elif isinstance(node, ast.Import):
                hits += [p for a in node.names if a.name.split(".")[0] == "mteb"
                         for p in a.name.split(".") if p.startswith("_")]
            elif isinstance(node, ast.Attribute) and node.attr in private and node.attr not in mine:
                hits.append(node.attr)
            elif isinstance(node, ast.ClassDef) and node.bases:  # a subclass's method named like one of mteb's
                # private methods overrides it (a class of our own without bases cannot)
                hits += [f"def {item.name} (an override of mteb's)" for item in node.body
                         if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in private_methods]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in private \
                    and node.value not in mine:
                hits.append(repr(node.value))
            offences += [f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')}: {hit}" for hit in hits]
    assert not offences, "mteb private names outside complexir/mteb/internals.py:\n" + "\n".join(offences)


def test_the_internals_module_imports_no_mteb_at_import_time() -> None:
    """The mteb hook imports it at interpreter start-up: it must cost nothing there."""
    tree = ast.parse(_modules()[MTEB_INTERNALS].read_text(encoding="utf-8"))
    top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in top if isinstance(n, ast.ImportFrom)]
    assert all(n.split(".")[0] in sys.stdlib_module_names or n == "__future__" for n in names), names


def test_every_package_of_the_house_is_shipped() -> None:
    """A room missing from pyproject's package list imports from a checkout (an editable install finds it) but is
    absent from a wheel: every folder of ``complexir/`` with an ``__init__.py`` is listed."""
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "complexir").rglob("__init__.py")}
    assert found - listed == set()
