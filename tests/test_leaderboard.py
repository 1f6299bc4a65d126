"""complexir leaderboard: its numbers are complexir compare's (benchmark means, intervals and significance groups,
from three result folders), ranks tie where no test separates systems, demo results are refused or labelled on
every row, the site works in a real browser (Debian's chromium driven by Playwright: no console error, the right
numbers, sorting, the measure switch), ``--hub`` shows the local Hub's leaderboard as its endpoint ranks it, and
``complexir push`` publishes the site as a static Space.

The browser test writes the docs' screenshot where ``COMPLEXIR_LEADERBOARD_SCREENSHOT`` says (refresh it with
``COMPLEXIR_LEADERBOARD_SCREENSHOT=docs/leaderboard.png python -m pytest tests/test_leaderboard.py -k browser``).
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from pathlib import Path

import pytest
import yaml
from test_compare import _fake_system, three_runs  # noqa: F401 (a fixture, used by name)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOT_ENV = "COMPLEXIR_LEADERBOARD_SCREENSHOT"
IRSC_TASKS = ("IRSCKeyword", "IRSCSummary")  # two tasks: IRSC's average over them is a benchmark view


@pytest.fixture(scope="module")
def irsc_runs(tmp_path_factory):
    """Three `complexir run` result folders on IRSC's packaged demo (two of its tasks): the packaged model reading
    4 tokens, 8 tokens and its full length. Demo data: refused unless --allow-demo."""
    from complexir.cli.main import main

    base = tmp_path_factory.mktemp("irsc")
    folders = []
    for label, length in (("tokens4", ["--max-seq-length", "4"]), ("tokens8", ["--max-seq-length", "8"]),
                          ("full", [])):
        out = base / label
        tasks = [a for t in IRSC_TASKS for a in ("--task", t)]
        assert main(["run", "--benchmark", "IRSC", *tasks, *length, "--model-name", f"tiny-{label}",
                     "--cache", str(base / "cache"), "--output", str(out)]) == 0
        folders.append(str(out))
    return folders


def _site(tmp_path: Path, *args: str) -> tuple[Path, dict]:
    from complexir.cli.main import main

    site = tmp_path / "site"
    assert main(["leaderboard", *args, "--out", str(site)]) == 0
    return site, json.loads((site / "leaderboard.json").read_text())


def _groups(compare_json: dict) -> dict[tuple, set[str]]:
    """From compare.json: (folder, benchmark, task, subset, split, measure) → the folders it significantly beats."""
    names = {s["folder"]: s["name"] for s in compare_json["systems"]}
    beats: dict[tuple, set[str]] = {}
    for c in compare_json["cells"]:
        beats[(c["folder"], c["benchmark"], c["task"], c["subset"], c["split"], c["measure"])] = set()
    for t in compare_json["tests"]:
        if t["p_randomisation_holm"] < compare_json["alpha"] and t["delta"] != 0:
            winner, loser = (t["a"], t["b"]) if t["delta"] > 0 else (t["b"], t["a"])
            beats[(winner, t["benchmark"], t["task"], t["subset"], t["split"], t["measure"])].add(names[loser])
    return beats


def test_means_intervals_and_groups_are_compares(irsc_runs, tmp_path):
    """From three result folders: every benchmark mean, task mean, interval and significance group on the site
    is the one `complexir compare` writes; every row of demo results says DEMO."""
    from complexir.cli.main import main

    assert main(["compare", *irsc_runs, "--out", str(tmp_path / "cmp"), "--allow-demo"]) == 0
    compared = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    _, board = _site(tmp_path, *irsc_runs, "--allow-demo")
    names = {s["name"]: s["folder"] for s in compared["systems"]}
    groups = _groups(compared)
    local = [r for r in board["rows"] if r["source"] == "local"]
    assert len(local) == len(compared["cells"])
    averages = [c for c in compared["cells"] if c["task"] == "average"]
    assert {c["benchmark"] for c in averages} == {"IRSC"} and len(averages) >= 3 * 2
    for cell in compared["cells"]:
        row = next(r for r in local if r["system"] == cell["system"] and (r["task"], r["subset"], r["split"],
                   r["measure"]) == (cell["task"], cell["subset"], cell["split"], cell["measure"]))
        assert row["mean"] == cell["mean"] and row["ci95"] == cell["ci95"] and row["n"] == cell["n"]
        key = (names[row["system"]], cell["benchmark"], cell["task"], cell["subset"], cell["split"], cell["measure"])
        assert set(row["beats"]) == groups[key]
        if cell["measure"] == "judged_at_10":  # shown beside the scores, neither tested nor ranked (as in compare)
            assert row["rank"] is None and row["note"].startswith("not ranked")
        else:
            assert row["rank"] == 1 + sum(row["system"] in won for k, won in groups.items() if k[1:] == key[1:])
        assert row["demo"] is True
    view = board["views"][0]
    assert view["kind"] == "benchmark" and view["tasks"] == sorted(IRSC_TASKS)
    assert {"recall_at_10", "ndcg_at_10"} <= set(view["measures"])


def test_help_imports_no_model_or_dataset_library():
    from import_probe import modules_imported_by

    heavy = ("mteb", "torch", "datasets", "pandas", "sentence_transformers", "matplotlib", "playwright")
    assert modules_imported_by(["leaderboard", "--help"], heavy) == []


def test_demo_results_are_refused_without_allow_demo(irsc_runs, tmp_path, capsys):
    from complexir.cli.main import main

    assert main(["leaderboard", *irsc_runs, "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert "demo" in err and "--allow-demo" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "site").exists()


@pytest.fixture(scope="module")
def fake_board():
    """compare's comparison of four systems on two LoCoV1 tasks (test_compare's fake systems, 30 queries each), as a
    leaderboard: A beats the others significantly; B, C and the released run D no test separates."""
    from complexir.analysis.compare import compare
    from complexir.analysis.leaderboard import from_comparison

    queries = [str(i) for i in range(30)]
    tasks = ("LoCoV1GovReport", "LoCoV1QMSum")
    a = _fake_system("A", "A", {t: {q: 0.9 for q in queries} for t in tasks})
    b = _fake_system("B", "B", {t: {q: (0.2, 0.4, 0.6)[int(q) % 3] for q in queries} for t in tasks})  # mean 0.4
    c = _fake_system("C", "C", {t: {q: (0.6, 0.1)[int(q) % 2] for q in queries} for t in tasks})  # mean 0.35
    released = _fake_system("release/bm25", "D", {t: {q: (0.6, 0.2, 0.4)[int(q) % 3] for q in queries} for t in tasks})
    return from_comparison(compare([a, b, c, released], measures=["ndcg_at_10"]))


def test_ranks_tie_where_no_test_separates_systems(fake_board):
    """Ranks from compare's Holm-adjusted tests: A beats the others significantly; B, C and D are not separated, so
    they share rank 2 (though their means differ)."""
    board = fake_board
    for view in ("LoCoV1/average/all/test", "LoCoV1/LoCoV1GovReport/default/test"):
        rows = {r["system"]: r for r in board.rows if r["view"] == view and r["source"] in ("local", "released")}
        assert {s: r["rank"] for s, r in rows.items()} == {"A": 1, "B": 2, "C": 2, "release/bm25": 2}
        assert rows["A"]["beats"] == ["B", "C", "release/bm25"] and rows["B"]["beats"] == rows["C"]["beats"] == []
        assert rows["B"]["mean"] != rows["C"]["mean"]
        assert rows["release/bm25"]["source"] == "released" and rows["release/bm25"]["model_url"] is None
        assert rows["A"]["source"] == "local"
    published = [r for r in board.rows if r["source"] == "published"]
    assert published and all(r["rank"] is None for r in published)
    assert any(r["view"] == "LoCoV1/average/all/test" and "the paper's average" in r["note"] for r in published)


def test_a_model_in_two_folders_is_told_apart_by_its_folder():
    from complexir.analysis.compare import compare
    from complexir.analysis.leaderboard import from_comparison

    values = {"LoCoV1GovReport": {"1": 0.5, "2": 0.7}, "LoCoV1QMSum": {"a": 0.1, "b": 0.3}}
    one, two = _fake_system("run1", "A", values), _fake_system("run2", "B", values)
    two.run.model = two.run.label = one.run.label
    board = from_comparison(compare([one, two], measures=["ndcg_at_10"]))
    assert {r["system"] for r in board.rows if r["source"] == "local"} == {"run1 (run1)", "run1 (run2)"}


def test_the_site_never_overwrites_a_folder_of_other_files(fake_board, tmp_path):
    from complexir.analysis.leaderboard import write_site

    other = tmp_path / "my-repo"
    other.mkdir()
    (other / "README.md").write_text("mine")
    with pytest.raises(ValueError, match="my-repo: holds other files"):
        write_site(fake_board, other)
    assert (other / "README.md").read_text() == "mine"
    site = tmp_path / "site"
    write_site(fake_board, site)
    write_site(fake_board, site)  # an earlier site is rebuilt in place
    assert "sdk: static" in (site / "README.md").read_text()


# ------------------------------------------------------------------------------------------ in a real browser


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (CI installs Debian's: apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


def _open(browser, index: Path):
    """A page on ``index`` and the console errors and uncaught exceptions it raised."""
    page = browser.new_page(viewport={"width": 1200, "height": 640})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(index.as_uri())
    page.wait_for_selector("#board tbody tr")
    return page, errors


def _table(page) -> list[tuple[str, str, str]]:
    """The table's rows as shown: (rank, system, score)."""
    return [(row.query_selector("td.rank").inner_text(), row.get_attribute("data-system"),
             row.query_selector("td.mean").inner_text()) for row in page.query_selector_all("#board tbody tr")]


def _expected(board: dict, view: str, measure: str) -> dict[str, str]:
    return {r["system"]: f"{r['mean']:.4f}" for r in board["rows"] if r["view"] == view and r["measure"] == measure}


def test_browser_shows_the_numbers_sorts_and_switches_measure(browser, irsc_runs, tmp_path):
    site, board = _site(tmp_path, *irsc_runs, "--allow-demo")
    page, errors = _open(browser, site / "index.html")
    view = board["views"][0]
    assert page.input_value("#view") == view["id"] and view["kind"] == "benchmark"
    measure = page.input_value("#measure")
    assert measure == view["measures"][0]
    shown = _table(page)
    assert {system: score for _, system, score in shown} == _expected(board, view["id"], measure)
    assert [rank for rank, _, _ in shown] == sorted((rank for rank, _, _ in shown), key=int)  # by rank first
    assert page.locator("#demo-banner").is_visible()
    assert page.locator("#board tbody tr .badge.demo").count() == len(shown)  # every row says DEMO

    page.click("th[data-key=mean]")  # best first
    scores = [float(score) for _, _, score in _table(page)]
    assert scores == sorted(scores, reverse=True)
    page.click("th[data-key=mean]")
    assert [float(score) for _, _, score in _table(page)] == sorted(scores)
    assert page.get_attribute("th[data-key=mean]", "aria-sort") == "ascending"
    page.click("th[data-key=system]")
    assert [system for _, system, _ in _table(page)] == sorted(system for _, system, _ in shown)

    other = next(m for m in view["measures"] if _expected(board, view["id"], m) != _expected(board, view["id"],
                                                                                                  measure))
    page.select_option("#measure", other)
    assert {system: score for _, system, score in _table(page)} == _expected(board, view["id"], other)
    assert page.inner_text("th[data-key=mean]").startswith(board["measure_labels"][other])

    task_view = next(v for v in board["views"] if v["kind"] == "task")
    page.select_option("#view", task_view["id"])
    task_measure = page.input_value("#measure")
    assert {system: score for _, system, score in _table(page)} == _expected(board, task_view["id"], task_measure)
    linked = browser.new_page()  # the address keeps the view and measure: a link shows the same table
    linked.goto(page.url)
    assert (linked.input_value("#view"), linked.input_value("#measure")) == (task_view["id"], task_measure)
    assert sorted(_table(linked)) == sorted(_table(page))  # the same rows (sorted by rank there, by system here)
    linked.close()
    page.select_option("#view", view["id"])  # the screenshot: the benchmark's mean, a measure telling systems apart
    page.select_option("#measure", other)
    page.click("th[data-key=mean]")
    shot = tmp_path / "leaderboard.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes().startswith(b"\x89PNG")
    if os.environ.get(SCREENSHOT_ENV):
        shutil.copyfile(shot, os.environ[SCREENSHOT_ENV])
    assert errors == []


def test_results_of_real_data_carry_no_demo_label(browser, three_runs, tmp_path):  # noqa: F811
    site, board = _site(tmp_path, *(str(three_runs[k]) for k in ("full", "short8", "short16")))
    assert not board["demo"] and board["rows"] and not any(r["demo"] for r in board["rows"])
    page, errors = _open(browser, site / "index.html")
    assert not page.locator("#demo-banner").is_visible() and page.locator(".badge.demo").count() == 0
    assert errors == []
    rows = list((site / "leaderboard.csv").read_text().splitlines())
    assert rows[0].startswith("view,benchmark,task") and len(rows) == 1 + len(board["rows"])


def test_browser_labels_published_rows_and_released_runs(browser, fake_board, tmp_path):
    from complexir.analysis.leaderboard import SOURCES, write_site

    page, errors = _open(browser, write_site(fake_board, tmp_path / "site"))
    assert page.input_value("#view") == "LoCoV1/average/all/test"
    published = page.query_selector_all("#board tbody tr.published")
    paper = [r for r in fake_board.rows if r["view"] == "LoCoV1/average/all/test" and r["source"] == "published"]
    assert len(published) == len(paper) > 0
    assert all(row.query_selector("td.rank").inner_text() == "–" for row in published)
    assert {row.query_selector("td.source").inner_text() for row in published} == {SOURCES["published"]}
    released = page.query_selector("#board tbody tr.released")
    assert released.get_attribute("data-system") == "release/bm25"
    assert released.query_selector("td.source").inner_text() == SOURCES["released"]
    ranked = [rank for rank, _, _ in _table(page) if rank != "–"]
    assert ranked == ["1", "2", "2", "2"] and _table(page)[-1][0] == "–"  # ranked first; published rows last
    unranked = [float(score) for rank, _, score in _table(page) if rank == "–"]
    assert unranked == sorted(unranked, reverse=True)  # among equal ranks (none here), the higher mean first
    assert published[0].query_selector("td.note").get_attribute("title") == paper[0]["citation"]
    assert errors == []


# ------------------------------------------------------------------------------------------ the Hub


def _publish_results(hub, model: str, values: dict[str, float], dataset: str, tmp_path: Path) -> None:
    folder = tmp_path / model.replace("/", "__")
    (folder / ".eval_results").mkdir(parents=True)
    (folder / "README.md").write_text("---\nlibrary_name: sentence-transformers\n---\n")
    entries = [{"dataset": {"id": dataset, "task_id": task, "revision": "0" * 40}, "value": value}
               for task, value in values.items()]
    (folder / ".eval_results" / "irsc.yaml").write_text(yaml.safe_dump(entries))
    hub.put_folder("model", model, folder)


def test_hub_rows_are_ranked_as_the_hubs_leaderboard_ranks_them(hub, tmp_path, browser):
    from hub_server import client_env, run_cli

    import complexir
    from complexir.registry.benchmarks import get_spec

    dataset = get_spec("IRSC").hub_id
    # a Benchmark repo: the demo's card and eval.yaml (whose first task id, the benchmark's, the leaderboard ranks)
    (tmp_path / "irsc").mkdir()
    for name in ("README.md", "eval.yaml"):
        shutil.copy(Path(complexir.__file__).parent / "demo" / "irsc" / name, tmp_path / "irsc" / name)
    hub.put_folder("dataset", dataset, tmp_path / "irsc")
    _publish_results(hub, "lab-a/encoder-small", {"IRSC": 0.44, "IRSCQuery": 0.41, "IRSCTitle": 0.52}, dataset,
                     tmp_path)
    _publish_results(hub, "lab-b/encoder-large", {"IRSC": 0.63, "IRSCQuery": 0.63}, dataset, tmp_path)
    _publish_results(hub, "lab-c/encoder-base", {"IRSC": 0.45, "IRSCQuery": 0.57, "IRSCTitle": 0.33}, dataset,
                     tmp_path)
    with urllib.request.urlopen(f"{hub.url}/api/datasets/{dataset}/leaderboard") as answer:
        ranked = json.loads(answer.read())

    site = tmp_path / "site"
    done = run_cli(["leaderboard", "--hub", "--out", str(site)], client_env(hub, tmp_path / "home"))
    assert done.returncode == 0, done.stderr
    board = json.loads((site / "leaderboard.json").read_text())
    ranked_view = next(v for v in board["views"] if v["kind"] == "hub")
    assert board["views"][0] == ranked_view  # the first view the page shows
    rows = [r for r in board["rows"] if r["view"] == ranked_view["id"]]
    assert {r["source"] for r in board["rows"]} == {"hub"}
    assert [(r["rank"], r["model"], r["mean"]) for r in rows] == [(e["rank"], e["modelId"], e["value"])
                                                                 for e in ranked]
    assert [r["model"] for r in rows] == ["lab-b/encoder-large", "lab-c/encoder-base", "lab-a/encoder-small"]
    assert rows[0]["model_url"] == "https://huggingface.co/lab-b/encoder-large"
    assert "IRSCQuery: 0.57" in rows[1]["note"] and "IRSCTitle: 0.33" in rows[1]["note"]
    assert rows[0]["data_revision"] == "0" * 40 and all(r["ci95"] is None and r["beats"] == [] for r in rows)
    assert {v["benchmark"] for v in board["views"]} == {"IRSC"}  # the other benchmarks have no leaderboard here
    title = next(v for v in board["views"] if v["task"] == "IRSCTitle")
    assert {r["model"]: r["mean"] for r in board["rows"] if r["view"] == title["id"]} == {
        "lab-a/encoder-small": 0.52, "lab-c/encoder-base": 0.33}  # per task: each model's own .eval_results

    offline = run_cli(["leaderboard", "--hub", "--out", str(tmp_path / "no")],
                      client_env(hub, tmp_path / "home", offline=True))
    assert offline.returncode == 2 and "HF_HUB_OFFLINE is set" in offline.stderr

    page, errors = _open(browser, site / "index.html")
    assert [(int(rank), system) for rank, system, _ in _table(page)] == [(e["rank"], e["modelId"]) for e in ranked]
    assert page.get_attribute("#board tbody tr td.system a", "href") == rows[0]["model_url"]
    assert errors == []


def test_push_publishes_the_site_as_a_static_space(hub, tmp_path, three_runs):  # noqa: F811
    from hub_server import USER, client_env, run_cli

    from complexir.hub.push import detect_repo_type, plan_push

    site, _ = _site(tmp_path, *(str(three_runs[k]) for k in ("full", "short8")))
    assert detect_repo_type(site) == ("space", "static")
    assert {p for p, _ in plan_push(site).files} == {"README.md", "index.html", "leaderboard.css", "leaderboard.js",
                                                    "leaderboard.json", "leaderboard.csv", "data.js"}
    repo = f"{USER}/complexir-leaderboard"
    done = run_cli(["push", str(site), "--repo", repo], client_env(hub, tmp_path / "home"))
    assert done.returncode == 0, done.stderr
    assert "space (sdk static)" in done.stdout and "vendored" not in done.stdout
    assert hub.repo("space", repo).sdk == "static"
    assert hub.files("space", repo)["index.html"] == (site / "index.html").read_bytes()
