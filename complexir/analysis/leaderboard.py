"""``complexir leaderboard``: a static leaderboard site (a Space) from result folders and from the Hub.

From result folders (``complexir run`` output), every number is ``complexir compare``'s: the systems are read by
``compare.load_systems`` (demo results refused unless ``allow_demo``, then labelled), and ``compare.compare`` gives the
cells (a mean and its 95% interval per task, subset, split and measure, and per benchmark the average over its tasks)
and the Holm-adjusted paired tests. The leaderboard only arranges them:

* one **view** per benchmark (its average over its tasks, where ``compare`` makes one) and per task and subset;
* in a view and measure, a system's **rank** is 1 + the number of systems significantly better than it (Holm-adjusted
  randomisation p < ``compare.ALPHA``): systems no test separates share a rank (ties shown as ties); a system
  without per-query scores is in no test and gets no rank;
* the papers' published numbers (``compare``'s reference rows) and CoverageBench's released runs (systems named
  ``release/<run>`` by ``complexir run --release-runs``) are rows labelled as such; published rows have no rank.

With ``hub=True``, each registered benchmark's Hub repo adds a view of the Hub's own leaderboard
(``HfApi.get_dataset_leaderboard``: its ranks and values, as the Hub gives them) and the per-task values the ranked
models publish in their ``.eval_results`` (``HfApi.model_info(expand=["evalResults"])``): numbers only, no interval
or test, and labelled so.

The site (``write_site``): ``index.html``, ``leaderboard.css``, ``leaderboard.js``, the data as ``leaderboard.json``,
``leaderboard.csv`` and ``data.js`` (the same JSON for the page, which then works from a file too), and a README whose
front matter makes the folder a static Space that ``complexir push`` publishes.
"""

from __future__ import annotations

import csv
import importlib.resources
import io
import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from complexir.analysis import compare as comparing
from complexir.analysis.tables import JUDGED_KEY
from complexir.runs import RELEASED_SYSTEM_PREFIX

logger = logging.getLogger(__name__)

FORMAT = "complexir-leaderboard/1"
HUB_URL = "https://huggingface.co"
HUB_MEASURE = "hub_value"  # the measure of a Hub leaderboard view: the value the Hub ranks by
RELEASED_PREFIX = f"{RELEASED_SYSTEM_PREFIX}/"  # complexir run --release-runs names each released run so
#: What each row's ``source`` says, as the page shows it.
SOURCES = {
    "local": "result folder",
    "released": "released run (CoverageBench's release)",
    "published": "published (the paper's number, on its full data)",
    "hub": "Hub leaderboard (numbers only)",
}
CSV_COLUMNS = ("view", "benchmark", "task", "subset", "split", "measure", "rank", "system", "model", "model_url",
               "model_revision", "data_revision", "source", "demo", "mean", "ci_low", "ci_high", "n", "beats", "note",
               "citation")
SITE_FILES = ("index.html", "leaderboard.css", "leaderboard.js")


@dataclass
class Leaderboard:
    views: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    alpha: float = comparing.ALPHA

    @property
    def demo(self) -> bool:
        return any(r["demo"] for r in self.rows)

    def view(self, view_id: str) -> dict[str, Any]:
        return next(v for v in self.views if v["id"] == view_id)

    def add_view(self, view: dict[str, Any]) -> dict[str, Any]:
        known = next((v for v in self.views if v["id"] == view["id"]), None)
        if known is None:
            self.views.append(view)
            return view
        known["measures"] += [m for m in view["measures"] if m not in known["measures"]]
        return known

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "alpha": self.alpha, "demo": self.demo, "sources": SOURCES,
                "measure_labels": {m: _measure_label(m) for v in self.views for m in v["measures"]},
                "views": self.views, "rows": self.rows}

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = csv.DictWriter(out, CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            writer.writerow({**row, "beats": " ".join(row["beats"]),
                             "ci_low": row["ci95"][0] if row["ci95"] else None,
                             "ci_high": row["ci95"][1] if row["ci95"] else None})
        return out.getvalue()


def _measure_label(measure: str) -> str:
    from complexir.analysis.tables import metric_label

    return "Hub value" if measure == HUB_MEASURE else metric_label(measure)


def view_id(benchmark: str, task: str, subset: str, split: str) -> str:
    return "/".join((benchmark, task, subset, split))


# ------------------------------------------------------------------------------------------ from result folders


def model_url(model: str) -> str | None:
    """The Hub page of a model named by its Hub id (``org/name``); None for a local path or a released run."""
    if model.startswith(RELEASED_PREFIX) or model.count("/") != 1 or model.startswith((".", "/", "~")):
        return None
    return f"{HUB_URL}/{model}"


def from_comparison(result: comparing.Comparison, board: Leaderboard | None = None) -> Leaderboard:
    """The views and rows of ``compare``'s cells and tests: means, intervals and significance exactly as compare
    computed them, ranks from its Holm-adjusted tests."""
    board = board or Leaderboard()
    by_folder = {s.folder: s for s in result.systems}
    names = [s.name for s in result.systems]  # a model run twice (two folders) is told apart by its folder
    shown = {s.folder: s.name if names.count(s.name) == 1 else f"{s.name} ({s.folder})" for s in result.systems}
    for bench, task, subset, split, measure in result.groups:
        average = task == comparing.AVERAGE
        cells = [c for c in result.cells if (c["benchmark"], c["task"], c["subset"], c["split"], c["measure"])
                 == (bench, task, subset, split, measure)]
        if not cells:
            continue
        tasks: list[str] = list(cells[0]["tasks"]) if average else [task]
        label = (f"{bench}: mean over {len(tasks)} tasks" if average
                 else f"{bench} / {task}" + ("" if subset == "default" else f" / {subset}"))
        view = board.add_view({"id": view_id(bench, task, subset, split), "benchmark": bench, "task": task,
                               "subset": subset, "split": split, "kind": "benchmark" if average else "task",
                               "label": label + ("" if split == "test" else f" ({split})"), "tasks": tasks,
                               "measures": [measure]})
        tests = result.tests_of(bench, task, subset, split, measure)
        tested = {t["a"] for t in tests} | {t["b"] for t in tests}
        better: dict[str, list[str]] = {c["folder"]: [] for c in cells}  # folder → the folders significantly above
        for t in tests:
            if t["p_randomisation_holm"] < comparing.ALPHA and t["delta"] != 0:
                winner, loser = (t["a"], t["b"]) if t["delta"] > 0 else (t["b"], t["a"])
                better[loser].append(winner)
        for cell in cells:
            system = by_folder[cell["folder"]]
            demo = [t for t in system.demo_tasks if t in tasks]
            beats = sorted(shown[f] for f, above in better.items() if cell["folder"] in above)
            board.rows.append({
                "view": view["id"], "benchmark": bench, "task": task, "subset": subset, "split": split,
                "measure": measure, "system": shown[system.folder], "model": system.run.model,
                "model_url": model_url(system.run.model), "model_revision": system.run.revision,
                "data_revision": " ".join(sorted({str(comparing.data_of(system, t)) for t in tasks})),
                "source": "released" if system.run.model.startswith(RELEASED_PREFIX) else "local",
                "demo": bool(demo), "mean": cell["mean"], "ci95": cell["ci95"], "n": cell["n"],
                "rank": 1 + len(better[cell["folder"]]) if cell["folder"] in tested else None,
                "beats": beats, "note": _untested(system, measure) if cell["folder"] not in tested else ""})
    _add_published(result, board)
    _order_views(board)
    return board


def _order_views(board: Leaderboard) -> None:
    """Benchmarks in the order first seen; in each, its average first, then the Hub's leaderboard, its tasks, and
    the tasks of the models' ``.eval_results``."""
    benchmarks = list(dict.fromkeys(v["benchmark"] for v in board.views))
    kinds = ("benchmark", "hub", "task", "hub-task")
    board.views.sort(key=lambda v: (benchmarks.index(v["benchmark"]), kinds.index(v["kind"])))


def _untested(system: comparing.System, measure: str) -> str:
    """Why a row has no rank."""
    if measure == JUDGED_KEY:
        return "not ranked: the judged share of the top 10 qualifies the other scores"
    if not system.run.per_query:
        return "no per-query scores (a plain mteb run folder?): not tested, not ranked"
    return "no other system to test against here: not ranked"


def _add_published(result: comparing.Comparison, board: Leaderboard) -> None:
    """The papers' numbers as reference rows of the views they belong to: a benchmark view gets the paper's average
    (over all its tasks, which may be more than the view's), a task view the paper's number for that task (tasks
    of one subset only: a paper prints one number per task)."""
    from complexir.analysis import published

    subsets: dict[tuple[str, str, str], set[str]] = {}
    for v in board.views:
        subsets.setdefault((v["benchmark"], v["task"], v["split"]), set()).add(v["subset"])
    for p in result.published:
        task = comparing.AVERAGE if p["task"] == published.AVERAGE else p["task"]
        for v in board.views:
            if (v["benchmark"], v["task"]) != (p["benchmark"], task) or p["measure"] not in v["measures"]:
                continue
            if len(subsets[(v["benchmark"], v["task"], v["split"])]) > 1:
                continue
            note = f"the paper's {p['table']}"  # the citation in full is the row's "citation"
            if task == comparing.AVERAGE:
                note = "the paper's average over all its tasks; " + note
            board.rows.append({
                "view": v["id"], "benchmark": v["benchmark"], "task": v["task"], "subset": v["subset"],
                "split": v["split"], "measure": p["measure"], "system": p["system"], "model": p["system"],
                "model_url": p["url"], "model_revision": None, "data_revision": "the paper's data",
                "source": "published", "demo": False, "mean": p["value"], "ci95": None, "n": None, "rank": None,
                "beats": [], "note": note, "citation": p["citation"]})


def from_results(results: list[str | Path], *, allow_demo: bool = False) -> Leaderboard:
    """The leaderboard of result folders, through ``complexir compare``'s own reading, checks and statistics."""
    from complexir.mteb import hook as mteb_hook

    mteb_hook.register()  # result files name tasks; mteb must know ours to read their metadata
    systems = comparing.load_systems(results, allow_demo=allow_demo)
    comparing.check_same_data(systems)
    return from_comparison(comparing.compare(systems))


# ------------------------------------------------------------------------------------------ from the Hub


def from_hub(board: Leaderboard | None = None, *, benchmarks: list[str] | None = None,
             api: Any = None) -> Leaderboard:
    """Each registered benchmark's Hub leaderboard (ranks and values as the Hub gives them) and the ranked models'
    ``.eval_results`` values on that repo's tasks; a benchmark repo without a leaderboard is left out (logged)."""
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import HfHubHTTPError

    from complexir.registry.benchmarks import all_specs

    if constants.HF_HUB_OFFLINE:
        raise ValueError("--hub reads the Hub's leaderboards, but HF_HUB_OFFLINE is set: unset it (or drop --hub)")
    api = api or HfApi()
    board = board or Leaderboard()
    for spec in all_specs():
        if benchmarks and spec.name not in benchmarks:
            continue
        try:
            entries = api.get_dataset_leaderboard(spec.hub_id)
        except HfHubHTTPError as error:  # RepositoryNotFoundError included
            logger.warning("%s: no Hub leaderboard for %s (%s)", spec.name, spec.hub_id,
                           " ".join(str(error).split())[:200])
            continue
        if not entries:
            logger.warning("%s: the Hub leaderboard of %s is empty", spec.name, spec.hub_id)
            continue
        view = board.add_view({"id": view_id(spec.name, "hub", spec.hub_id, "test"), "benchmark": spec.name,
                               "task": "hub", "subset": spec.hub_id, "split": "test", "kind": "hub",
                               "label": f"{spec.name}: the Hub's leaderboard ({spec.hub_id})", "tasks": [],
                               "measures": [HUB_MEASURE]})
        for entry in entries:
            per_task = _eval_results(api, entry.model_id, spec.hub_id)
            revisions = sorted({e.dataset_revision for e in per_task if e.dataset_revision})
            board.rows.append({
                "view": view["id"], "benchmark": spec.name, "task": "hub", "subset": spec.hub_id, "split": "test",
                "measure": HUB_MEASURE, "system": entry.model_id, "model": entry.model_id,
                "model_url": f"{HUB_URL}/{entry.model_id}", "model_revision": None,
                "data_revision": " ".join(revisions) or None, "source": "hub", "demo": False,
                "mean": float(entry.value), "ci95": None, "n": None, "rank": int(entry.rank), "beats": [],
                "note": "; ".join([*(f"{e.task_id}: {e.value}" for e in per_task),
                                   *(["verified"] if entry.verified else []),
                                   *([entry.notes] if entry.notes else [])])})
            for result in per_task:  # the model's own numbers per task: shown, not ranked (the Hub ranks above)
                task_view = board.add_view({
                    "id": view_id(spec.name, "hub", f"{spec.hub_id}:{result.task_id}", "test"),
                    "benchmark": spec.name, "task": result.task_id, "subset": spec.hub_id, "split": "test",
                    "kind": "hub-task", "label": f"{spec.name} / {result.task_id} (the models' .eval_results)",
                    "tasks": [result.task_id], "measures": [HUB_MEASURE]})
                board.rows.append({
                    "view": task_view["id"], "benchmark": spec.name, "task": result.task_id, "subset": spec.hub_id,
                    "split": "test", "measure": HUB_MEASURE, "system": entry.model_id, "model": entry.model_id,
                    "model_url": f"{HUB_URL}/{entry.model_id}", "model_revision": None,
                    "data_revision": result.dataset_revision, "source": "hub", "demo": False,
                    "mean": float(result.value), "ci95": None, "n": None, "rank": None, "beats": [],
                    "note": result.notes or ""})
    _order_views(board)
    return board


def _eval_results(api: Any, model_id: str, dataset_id: str) -> list[Any]:
    """The model's ``.eval_results`` entries on ``dataset_id`` (``model_info(expand=["evalResults"])``)."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        info = api.model_info(model_id, expand=["evalResults"])
    except HfHubHTTPError as error:
        logger.warning("%s: its eval results could not be read (%s)", model_id, " ".join(str(error).split())[:200])
        return []
    return [e for e in info.eval_results or [] if e.dataset_id == dataset_id]


# ------------------------------------------------------------------------------------------ the site


def _space_readme(board: Leaderboard) -> str:
    demo = "\n**DEMO**: these results scored the demo copies shipped in complexir; they are NOT benchmark scores.\n" \
        if board.demo else ""
    return ("---\ntitle: complexir leaderboard\nemoji: 🏆\ncolorFrom: blue\ncolorTo: green\nsdk: static\n"
            "app_file: index.html\npinned: false\ntags:\n- leaderboard\n- information-retrieval\n---\n\n"
            "# complexir leaderboard\n\nCRUMB, IRSC, LoCoV1 and CoverageBench: means with 95% intervals and ranks "
            "whose ties are the differences no Holm-adjusted paired test finds, built by `complexir leaderboard`. "
            "The data: `leaderboard.json`, `leaderboard.csv`.\n" + demo)


def write_site(board: Leaderboard, out_dir: str | Path) -> Path:
    """The static site in ``out_dir`` (created, or an earlier site's folder, whose files are replaced); returns
    index.html's path."""
    if not board.rows:
        raise ValueError("nothing to show: no results (give result folders, or --hub with results on the Hub)")
    out = Path(out_dir)
    if out.is_dir() and any(out.iterdir()) and not (out / "leaderboard.json").is_file():
        raise ValueError(f"{out}: holds other files and no earlier leaderboard (leaderboard.json); the site would "
                         "overwrite its README.md: choose a new or empty folder")
    out.mkdir(parents=True, exist_ok=True)
    assets = importlib.resources.files("complexir.analysis") / "leaderboard_site"
    for name in SITE_FILES:
        with importlib.resources.as_file(assets / name) as source:
            shutil.copyfile(source, out / name)
    payload = json.dumps(comparing.json_safe(board.to_json()), indent=1, allow_nan=False, ensure_ascii=False)
    (out / "leaderboard.json").write_text(payload + "\n", encoding="utf-8")
    # the page reads the data from a script (fetch() of a file:// page is refused); "</" never closes it early
    (out / "data.js").write_text("window.LEADERBOARD = " + payload.replace("</", "<\\/") + ";\n", encoding="utf-8")
    (out / "leaderboard.csv").write_text(board.to_csv(), encoding="utf-8")
    (out / "README.md").write_text(_space_readme(board), encoding="utf-8")
    return out / "index.html"


def make_leaderboard(results: list[str | Path], out_dir: str | Path, *, hub: bool = False,
                     allow_demo: bool = False) -> Path:
    """Build the site from ``results`` (result folders) and, with ``hub``, the Hub's leaderboards."""
    if not results and not hub:
        raise ValueError("give result folders, or --hub to read the Hub's leaderboards")
    board = from_results(results, allow_demo=allow_demo) if results else Leaderboard()
    if hub:
        from_hub(board)
    return write_site(board, out_dir)
