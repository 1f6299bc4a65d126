"""complexir compare and the statistics module: p-values against scipy on the per-query files, Holm against an
independent step-down, intervals around their means, seeded resampling, refusals; complexir published."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def three_runs(tiny, tmp_path_factory):
    """Result folders of the packaged model at its full length, at 8 and at 16 tokens: three systems."""
    import mteb

    from complexir.runs.results import per_query_path
    from complexir.systems.models import load_model

    base = tmp_path_factory.mktemp("compare")
    tiny.build(base / "data")
    outputs = {}
    for label, length in (("full", None), ("short8", 8), ("short16", 16)):
        task = tiny.ComplexIRTinyHealth()
        task.data_dir = base / "data"
        model = load_model(max_seq_length=length, model_name=f"tiny-{label}")
        out = base / label
        task.per_query_file = per_query_path(out, model.mteb_model_meta, task.metadata.name)
        mteb.evaluate(model, [task], cache=mteb.ResultCache(out), overwrite_strategy="always")
        outputs[label] = out
    return outputs


@pytest.fixture(scope="module")
def compared(three_runs, tmp_path_factory):
    from complexir.cli.main import main

    out = tmp_path_factory.mktemp("out") / "cmp"
    folders = [str(three_runs[k]) for k in ("full", "short8", "short16")]
    assert main(["compare", *folders, "--out", str(out)]) == 0
    return out, json.loads((out / "compare.json").read_text())


def _per_query(folder: str) -> dict:
    files = list(Path(folder).glob("per_query/*/*/*.json"))
    assert len(files) == 1
    return json.loads(files[0].read_text())["scores"]


def test_ttest_equals_scipy_on_the_per_query_files(compared):
    from scipy import stats

    _, result = compared
    task_tests = [t for t in result["tests"] if t["task"] != "average"]
    assert task_tests and len({(t["a"], t["b"]) for t in task_tests}) == 3  # every pair of three systems
    for t in task_tests:
        a = _per_query(t["a"])[t["subset"]][t["split"]][t["measure"]]
        b = _per_query(t["b"])[t["subset"]][t["split"]][t["measure"]]
        queries = sorted(a)
        assert sorted(b) == queries and t["n"] == len(queries)
        x, y = [a[q] for q in queries], [b[q] for q in queries]
        assert t["delta"] == pytest.approx(np.mean(x) - np.mean(y), abs=1e-12)
        if x == y:
            assert t["p_ttest"] == 1.0
        else:
            expected = stats.ttest_rel(x, y).pvalue
            assert t["p_ttest"] == pytest.approx(expected if np.isfinite(expected) else 1.0, rel=1e-12)
            exact = stats.permutation_test((x, y), lambda u, v, axis: (u - v).mean(axis=axis), vectorized=True,
                                           permutation_type="samples", n_resamples=10_000, random_state=0)
            assert t["p_randomisation"] == pytest.approx(exact.pvalue, rel=1e-12)


def _step_down(p: list[float]) -> list[float]:
    """Holm (1979) written out: compare the i-th smallest p with alpha / (m - i); adjusted p = running max."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    best = 0.0
    for i, index in enumerate(order):
        best = max(best, (m - i) * p[index])
        adjusted[index] = min(1.0, best)
    return adjusted


def test_holm_equals_an_independent_step_down_over_the_file(compared):
    _, result = compared
    for kind in ("p_ttest", "p_randomisation"):
        raw = [t[kind] for t in result["tests"]]
        assert [t[f"{kind}_holm"] for t in result["tests"]] == pytest.approx(_step_down(raw), abs=1e-15)


def test_holm_on_known_values():
    from complexir.analysis.statistics import holm

    # m = 4: 0.01*4, max(0.04, 0.02*3), max(0.06, 0.03*2), max(0.06, 0.5*1)
    assert holm([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.06, 0.5, 0.04, 0.06])
    assert np.isnan(holm([0.2, float("nan")])[1]) and holm([0.2, float("nan")])[0] == pytest.approx(0.2)


def test_intervals_hold_their_means_and_cells_have_every_field(compared):
    _, result = compared
    assert {s["folder"] for s in result["systems"]} == {t["a"] for t in result["tests"]} | {t["b"] for t in
                                                                                           result["tests"]}
    for cell in result["cells"]:
        assert {"system", "folder", "task", "subset", "split", "measure", "mean", "ci95", "n"} <= set(cell)
        low, high = cell["ci95"]
        assert low - 1e-12 <= cell["mean"] <= high + 1e-12, cell
        per_query = _per_query(cell["folder"])[cell["subset"]][cell["split"]][cell["measure"]]
        assert cell["n"] == len(per_query)
        assert cell["mean"] == pytest.approx(sum(per_query.values()) / len(per_query), abs=1e-12)
    assert any(c["measure"] == "judged_at_10" for c in result["cells"])


def test_randomisation_and_bootstrap_are_reproducible_with_their_seed():
    from complexir.analysis import statistics

    rng = np.random.default_rng(7)
    x, y = rng.random(40), rng.random(40)  # 2**40 sign patterns: sampled, so the seed matters
    first, again = statistics.paired_tests(x, y), statistics.paired_tests(x, y)
    assert first == again
    other = statistics.paired_tests(x, y, seed=1)
    assert other["p_randomisation"] != first["p_randomisation"]
    boot = statistics.bootstrap_means(np.vstack([x, y]))
    assert np.array_equal(boot, statistics.bootstrap_means(np.vstack([x, y])))
    low, high = statistics.percentile_interval(boot[0])
    assert low <= x.mean() <= high


def test_markdown_tex_and_chart_are_written(compared):
    out, result = compared
    text = (out / "compare.md").read_text()
    assert "| Task | Subset | A: " in text and "Holm" in text
    assert (out / "compare.tex").read_text().count(r"\toprule") >= 1
    assert list(out.glob("compare-*.png"))


def copy_with_data_revision(results: Path, copy: Path, revision: str) -> Path:
    """A copy of a result folder whose result and per-query files say they scored the data ``revision``."""
    shutil.copytree(results, copy)
    for file in [*copy.glob("results/*/*/*.json"), *copy.glob("per_query/*/*/*.json")]:
        payload = json.loads(file.read_text())
        if "dataset_revision" in payload:
            payload["dataset_revision"] = revision
        if "data" in payload:
            payload["data"]["revision"] = revision
        file.write_text(json.dumps(payload))
    return copy


def test_refuses_results_of_different_data(three_runs, tmp_path):
    from complexir.analysis.compare import make_compare

    copy = copy_with_data_revision(three_runs["short8"], tmp_path / "other", "local-complexir_tiny-0000000000000000")
    with pytest.raises(ValueError, match=r"ComplexIRTinyHealth: .* scored data .* cannot be compared"):
        make_compare([three_runs["full"], copy], tmp_path / "cmp")


def test_a_folder_without_per_query_scores_is_shown_but_not_tested(three_runs, tmp_path):
    from complexir.analysis.compare import make_compare

    plain = tmp_path / "plain"
    shutil.copytree(three_runs["short8"], plain)
    shutil.rmtree(plain / "per_query")
    md = make_compare([three_runs["full"], plain, three_runs["short16"]], tmp_path / "cmp", baseline=str(plain))
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert not result["tests"]  # the baseline has nothing to test against
    assert all(c["ci95"] is None for c in result["cells"] if c["folder"] == str(plain))
    assert "Not tested (no per-query scores" in md.read_text()


def test_baseline_tests_every_system_against_it_only(three_runs, tmp_path):
    from complexir.analysis.compare import make_compare

    folders = [three_runs[k] for k in ("full", "short8", "short16")]
    make_compare(folders, tmp_path / "cmp", baseline=str(folders[1]))
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert {(t["a"], t["b"]) for t in result["tests"]} == {(str(folders[0]), str(folders[1])),
                                                          (str(folders[2]), str(folders[1]))}


def test_benchmark_average_weights_tasks_equally():
    """The stratified randomisation statistic is the macro average: each task's mean difference counts once."""
    from complexir.analysis import statistics

    x = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 1.0])  # task 1: two queries, task 2: four queries
    y = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    w = np.array([1 / 4, 1 / 4, 1 / 8, 1 / 8, 1 / 8, 1 / 8])
    assert statistics.paired_tests(x, y, weights=w)["delta"] == pytest.approx((0.5 + 1.0) / 2)


def test_published_locov1_shows_the_table(capsys):
    from complexir.cli.main import main

    assert main(["published", "LoCoV1"]) == 0
    out = capsys.readouterr().out
    assert "Saad-Falcon" in out and "arXiv:2402.07440" in out
    assert "| M2-BERT 32768 | 98.0 | 98.7 | 70.4 |" in out and "91.1 / 94.7 |" in out  # both of the paper's averages
    assert "| BGE-Large zero-shot | 65.8 | 92.6 | 46.0 |" in out
    assert len([line for line in out.splitlines() if line.startswith("| ")]) == 1 + 17  # header + 16 systems + BM25


def test_published_data_is_consistent():
    from complexir.analysis import published

    assert set(published.benchmarks()) == {"CRUMB", "IRSC", "LoCoV1", "CoverageBench"}
    loco = published.load("locov1")
    assert {(g[0].system, g[0].task) for g in loco.inconsistencies()} == {("M2-BERT 128", "average"),
                                                                         ("M2-BERT 32768", "average")}
    from complexir.tasks import benchmarks_by_name

    tasks = {t.metadata.name for b in benchmarks_by_name().values() for t in b.tasks}
    for name in published.benchmarks():
        for v in published.load(name).values:
            assert v.task in tasks | {published.AVERAGE}, (name, v)
            assert 0 <= v.value <= 1
    # the appendix's averages are the means of its twelve tasks up to rounding, but for the three rows its notes name
    table = [v for v in loco.values if v.table.startswith("appendix")]
    off = []
    for system in dict.fromkeys(v.system for v in table):
        row = [v.printed for v in table if v.system == system and v.task != published.AVERAGE]
        average = next(v.printed for v in table if v.system == system and v.task == published.AVERAGE)
        assert len(row) == 12
        if abs(sum(row) / 12 - average) > 0.1:  # twelve values and the average, each rounded to 0.05
            off.append(system)
    assert off == ["BGE-Large fine-tuned", "BGE-Large fine-tuned, chunks", "Jina Embeddings"]
    assert all(system in " ".join(loco.notes) for system in off)


def test_published_unknown_benchmark_is_one_line(capsys):
    from complexir.cli.main import main

    assert main(["published", "NoSuch"]) == 2
    assert "known: CRUMB, CoverageBench, IRSC, LoCoV1" in capsys.readouterr().err


def test_pairs_are_all_combinations():
    from complexir.analysis.compare import _pairs

    assert _pairs([1, 2, 3], None) == list(itertools.combinations([1, 2, 3], 2))


def _fake_system(folder: str, letter: str, values: dict[str, dict[str, float]]):
    """A system whose results are ``values`` (task → query → nDCG@10), as ``results.load_runs`` would read them."""
    from types import SimpleNamespace

    from complexir.analysis.compare import System
    from complexir.runs.results import ModelRun

    run = ModelRun(model=folder, revision="r", folder=Path(folder))
    for task, per_query in values.items():
        mean = sum(per_query.values()) / len(per_query)
        run.task_results[task] = SimpleNamespace(
            scores={"test": [{"hf_subset": "default", "ndcg_at_10": mean, "main_score": mean}]},
            dataset_revision="local-locov1-0123456789abcdef")
        run.per_query[task] = {"default": {"test": {"ndcg_at_10": per_query}}}
    return System(folder, run, letter)


def test_benchmark_average_cell_and_its_tests():
    from scipy import stats

    from complexir.analysis.compare import AVERAGE, compare, render_markdown

    a_values = {"LoCoV1GovReport": {"1": 1.0, "2": 0.5, "3": 0.9}, "LoCoV1QMSum": {"a": 0.2, "b": 0.4, "c": 0.1}}
    b_values = {"LoCoV1GovReport": {"1": 0.3, "2": 0.5, "3": 0.4}, "LoCoV1QMSum": {"a": 0.1, "b": 0.0, "c": 0.1}}
    a, b = _fake_system("A-folder", "A", a_values), _fake_system("B-folder", "B", b_values)
    result = compare([a, b], measures=["ndcg_at_10"])
    average = {c["folder"]: c for c in result.cells if c["task"] == AVERAGE}
    task_means = {f: [np.mean(list(v[t].values())) for t in sorted(v)]
                  for f, v in (("A-folder", a_values), ("B-folder", b_values))}
    for folder, cell in average.items():
        assert cell["benchmark"] == "LoCoV1" and cell["n"] == 6
        assert cell["mean"] == pytest.approx(np.mean(task_means[folder]), abs=1e-12)  # each task counts once
        assert cell["ci95"][0] <= cell["mean"] <= cell["ci95"][1]
    test = next(t for t in result.tests if t["task"] == AVERAGE)
    assert test["p_ttest"] == pytest.approx(stats.ttest_rel(task_means["A-folder"], task_means["B-folder"]).pvalue)
    # stratified randomisation, enumerated: every sign flip of the six per-query differences, weighted 1/(2 x 3)
    diffs = [a_values[t][q] - b_values[t][q] for t in sorted(a_values) for q in sorted(a_values[t])]
    observed = abs(sum(diffs) / 6)
    flips = [abs(sum(s * d for s, d in zip(signs, diffs, strict=True)) / 6)
             for signs in itertools.product((1, -1), repeat=6)]
    assert test["p_randomisation"] == pytest.approx(np.mean([f >= observed - 1e-12 for f in flips]))
    assert test["delta"] == pytest.approx(np.mean(task_means["A-folder"]) - np.mean(task_means["B-folder"]))
    md = render_markdown(result, {})
    row = next(line for line in md.splitlines() if line.startswith("| **average**"))
    assert f"{average['A-folder']['mean']:.4f}" in row and f"{average['B-folder']['mean']:.4f}" in row
    assert row.startswith("| **average** of 2 tasks (GovReport, QMSum) | all |")  # which tasks, not only how many
    # the paper's own numbers are reference rows, apart from the cells and the tests
    assert any(p["system"] == "M2-BERT 32768" and p["task"] == "LoCoV1GovReport" for p in result.published)
    assert "M2-BERT 32768 *(published)*" in md
    assert all(c["folder"] in ("A-folder", "B-folder") for c in result.cells)


def test_demo_results_are_refused_unless_allowed_then_labelled(three_runs, tmp_path):
    from complexir.analysis.compare import make_compare

    demo = copy_with_data_revision(three_runs["short8"], tmp_path / "demo",
                                   "complexir-demo-complexir_tiny-0000000000000000")
    with pytest.raises(ValueError, match="cannot be compared as benchmark results.*--allow-demo"):
        make_compare([demo, tmp_path / "demo"], tmp_path / "cmp")
    shutil.copytree(demo, tmp_path / "demo2")
    md = make_compare([demo, tmp_path / "demo2"], tmp_path / "cmp", allow_demo=True).read_text()
    assert "DEMO data, not benchmark scores" in md and "NOT benchmark scores" in md


# -- nothing lost, nothing silent (issue 32) -------------------------------------------------------------------------
def _edit(folder: Path, kind: str, change) -> Path:
    """Apply ``change`` to the payload of the one result (``results``) or per-query (``per_query``) file."""
    (file,) = [f for f in folder.glob(f"{kind}/*/*/*.json") if f.name != "model_meta.json"]
    payload = json.loads(file.read_text())
    change(payload)
    file.write_text(json.dumps(payload))
    return file


def test_a_nan_result_is_refused_naming_the_file(three_runs, tmp_path, capsys):
    from complexir.cli.main import main

    copy = tmp_path / "nan"
    shutil.copytree(three_runs["short8"], copy)

    def nan(payload):
        payload["scores"]["test"][0]["ndcg_at_10"] = float("nan")

    file = _edit(copy, "results", nan)
    assert main(["compare", str(three_runs["full"]), str(copy), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"{file}: ComplexIRTinyHealth (default, test): ndcg_at_10 is NaN" in err
    assert not (tmp_path / "cmp").exists()


def test_per_query_scores_that_disagree_with_the_mean_are_refused(three_runs, tmp_path, capsys):
    from complexir.cli.main import main

    copy = tmp_path / "edited"
    shutil.copytree(three_runs["short8"], copy)
    result = _edit(copy, "results", lambda p: p["scores"]["test"][0].update(ndcg_at_10=0.987654))
    per_query = next(copy.glob("per_query/*/*/*.json"))
    assert main(["compare", str(three_runs["full"]), str(copy), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"{per_query}: ComplexIRTinyHealth (default, test): ndcg_at_10 averages" in err
    assert f"but {result} gives the mean 0.987654" in err


def test_demo_tex_and_chart_say_demo_and_tex_marks_low_judged(three_runs, tmp_path, monkeypatch):
    import matplotlib.axes

    from complexir.analysis.compare import make_compare

    def low_judged(payload):
        if "scores" in payload and "test" in payload["scores"] and isinstance(payload["scores"]["test"], list):
            payload["scores"]["test"][0]["judged_at_10"] = 0.2
        else:
            payload["scores"]["default"]["test"]["judged_at_10"] = {
                q: 0.2 for q in payload["scores"]["default"]["test"]["ndcg_at_10"]}

    demo = copy_with_data_revision(three_runs["short8"], tmp_path / "demo",
                                   "complexir-demo-complexir_tiny-0000000000000000")
    _edit(demo, "results", low_judged)
    _edit(demo, "per_query", low_judged)
    shutil.copytree(demo, tmp_path / "demo2")
    titles = []
    original = matplotlib.axes.Axes.set_title
    monkeypatch.setattr(matplotlib.axes.Axes, "set_title",
                        lambda self, label, *a, **k: (titles.append(label), original(self, label, *a, **k))[1])
    make_compare([demo, tmp_path / "demo2"], tmp_path / "cmp", allow_demo=True)
    tex = (tmp_path / "cmp" / "compare.tex").read_text()
    assert r"\caption{DEMO DATA: " in tex and "NOT benchmark scores" in tex
    assert r"$^\dagger$" in tex and "Judged@10 below 0.5" in tex
    assert titles and all(title.startswith("DEMO DATA") for title in titles)


def test_a_full_disk_leaves_the_previous_comparison_whole(compared, tmp_path, monkeypatch, capsys):
    import errno
    import os
    import pathlib

    from complexir.cli.main import main

    out, _ = compared
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = pathlib.Path.write_text

    def full(self, *args, **kwargs):
        if "compare.json" in self.name:  # the temporary, or (before) the file itself
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    json_file = out / "compare.json"
    systems = json.loads(json_file.read_text())["systems"]
    assert main(["compare", *(s["folder"] for s in systems), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"No space left on device: {json_file}" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no file changed, no temporary left


def test_a_per_query_file_of_the_wrong_shape_is_named(three_runs, tmp_path, capsys):
    from complexir.cli.main import main

    copy = tmp_path / "shape"
    shutil.copytree(three_runs["short8"], copy)
    per_query = _edit(copy, "per_query", lambda p: p["scores"]["default"]["test"].update(ndcg_at_10=[0.5, 0.25]))
    assert main(["compare", str(three_runs["full"]), str(copy), "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert f"{per_query}: scores/default/test/ndcg_at_10: expected query -> number" in err
    assert "unexpected error" not in err
def test_every_measure_compare_prints_is_a_measure_it_and_evaluate_accept(compared, three_runs, tmp_path):
    """compare's headings (``### MAP@10 (test)``) and compare.json's keys are spellings of the parser every command
    uses: given back to ``--measure``, each selects the same measure."""
    from complexir.cli.main import main
    from complexir.metrics import parse_measure

    out, result = compared
    labels = re.findall(r"^### (.+) \(\w+\)$", (out / "compare.md").read_text(), flags=re.M)
    assert "MAP@10" in labels or "nDCG@10" in labels
    keys = {c["measure"] for c in result["cells"]}
    assert {parse_measure(label).mteb_key for label in labels} <= keys
    label = labels[0]
    again = tmp_path / "again"
    assert main(["compare", *(str(three_runs[k]) for k in ("full", "short8")), "--measure", label,
                 "--measure", parse_measure(label).mteb_key, "--out", str(again)]) == 0
    # Judged@10 is always shown beside the measures asked for, to qualify them
    assert {c["measure"] for c in json.loads((again / "compare.json").read_text())["cells"]} - {"judged_at_10"} == {
        parse_measure(label).mteb_key}


def test_the_chart_keeps_labels_and_legend_apart(three_runs, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from complexir.analysis.compare import chart, compare, load_systems

    result = compare(load_systems([str(three_runs[k]) for k in ("full", "short8", "short16")], allow_demo=False))
    bench = result.groups[0][0]
    drawn = []
    close = plt.close
    monkeypatch.setattr(plt, "close", drawn.append)
    chart(result, bench, tmp_path / "chart.png")
    (fig,) = drawn
    renderer = fig.canvas.get_renderer()
    labels = fig.axes[0].get_xticklabels()
    assert [t.get_text() for t in labels] == ["Health"]  # one line, without the benchmark's prefix (ComplexIRTiny)
    legend = fig.legends[0].get_window_extent(renderer)  # the figure's legend, in its own band
    assert not any(legend.overlaps(t.get_window_extent(renderer)) for t in labels)
    close(fig)
