"""One measure, one parser: every spelling a command prints (evaluate's ir_measures names, the labels of run's and
report's tables, the MTEB score keys of result JSON) is read back by the parser every command uses
(``complexir.metrics.parse_measure``), as the same measure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from complexir.analysis.tables import Row, metric_label
from complexir.analysis.tables import render_table as report_table
from complexir.cli import run_cmd
from complexir.cli.main import main
from complexir.metrics import parse_measure
from complexir.metrics.measures import FAMILIES, from_mteb_key

TREC = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "trec_eval"
NOT_MEASURES = {"benchmark", "task", "subset", "split", "main score", "docs/s", "doc tokens read",
                "doc tokens read (share)", "Task", "Subset", "Split"}


def _examples() -> list[str]:
    out = []
    for family in FAMILIES:
        name = family.name + ("@7" if family.cutoff != "none" else "")
        out.append(name)
        if family.params:
            param = sorted(family.params)[0]
            value = "2" if param == "rel" else "0.25"
            out.append(f"{family.name}({param}={value})" + ("@7" if family.cutoff != "none" else ""))
    return out


@pytest.mark.parametrize("name", _examples())
def test_every_spelling_of_a_measure_parses_to_it(name):
    measure = parse_measure(name)
    for spelling in (measure.label, measure.mteb_key, measure.name, ):
        again = parse_measure(spelling)
        assert (again.family, again.cutoff, again.params, again.mteb_key) == (
            measure.family, measure.cutoff, measure.params, measure.mteb_key), spelling
    assert from_mteb_key(measure.mteb_key).mteb_key == measure.mteb_key


def test_an_unknown_measure_says_what_it_may_be():
    with pytest.raises(ValueError, match=r"unknown measure 'MAPP@10' \(did you mean MAP\?\)"):
        parse_measure("MAPP@10")
    with pytest.raises(ValueError, match="unknown measure 'doc_token_share_seen'"):
        parse_measure("doc_token_share_seen")


def _evaluate(capsys, *measures: str) -> dict[str, str]:
    args = ["evaluate", str(TREC / "qrels.test"), str(TREC / "results.test")]
    assert main([*args, *(a for m in measures for a in ("-m", m))]) == 0
    return dict(line.split("\t")[::2] for line in capsys.readouterr().out.splitlines())


def test_evaluate_reads_back_what_it_and_the_tables_print(capsys):
    printed = _evaluate(capsys)  # its default measures, as it prints them
    assert printed
    for name, value in printed.items():
        if parse_measure(name).kind != "adhoc":
            continue
        measure = parse_measure(name)
        # what evaluate printed, the table label run/compare/report print, the MTEB key of result JSON
        again = _evaluate(capsys, name, measure.label, measure.mteb_key)
        assert set(again.values()) == {value}, again


def test_run_and_report_tables_print_only_spellings_the_parser_reads():
    keys = [*run_cmd.SCORE_COLUMNS.values(), "judged_at_10", "alpha_ndcg_alpha_0.9_at_20", "nerr_ia_at_20"]
    scores = {key: 0.5 for key in keys}
    run_rows = [{"benchmark": "B", "task": "T", "subset": "default", "split": "test", "main_name": "map_at_10",
                 "scores": {**scores, "main_score": 0.5}, "docs_per_second": 1.0}]
    run_header = re.split(r"\s{2,}", run_cmd.render_table(run_rows).splitlines()[0].strip())
    main_label = run_cmd.render_table(run_rows).splitlines()[2].split()[4].split("=")[0]
    report_header = report_table([Row("B", "T", "default", "test", scores, judged=0.5)]).splitlines()[0]
    report_labels = [c.strip() for c in report_header.strip("|").split("|")]
    measures = [label for label in [*run_header, main_label, *report_labels] if label not in NOT_MEASURES]
    assert "MAP@10" in measures and "α-nDCG(alpha=0.9)@20" in measures and "Judged@10" in measures
    for label in measures:
        measure = parse_measure(label)
        assert measure.label == label  # read back as the measure it labels
        assert metric_label(measure.mteb_key) == label
