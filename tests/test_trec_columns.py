"""The columnar TREC readers and the array path of ``complexir evaluate``: equal to the previous line-by-line
readers and to the dict path (itself pinned to trec_eval / ndeval), on the reference fixtures and on random
files; bad input named by file and line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import trec_io_previous as previous
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from import_probe import modules_imported_by

from complexir.cli.main import main
from complexir.metrics import adhoc_per_query, coverage_per_query, max_depth, parse_measure, rank_run
from complexir.runs import file_eval, trec_io
from complexir.runs.file_eval import evaluate_files
from complexir.runs.trec_io import TrecFormatError, read_nugget_qrels, read_qrels, read_run, read_run_columns

ADHOC = ["nDCG@10", "nDCG@3", "R@5", "AP@10", "AP", "P@2", "RR", "nDCG", "P(rel=2)@3", "R(rel=0)@4"]
COVERAGE = ["alpha_nDCG@5", "alpha_nDCG@20", "StRecall@3", "alpha_nDCG(alpha=0.9)@4", "StRecall(rel=2)@5",
            "ERR_IA@5", "nERR_IA@20", "P_IA@5", "AP_IA", "NRBP", "nNRBP", "alpha_DCG@3"]


def dict_path(qrels_path, run_path, measures, nuggets):
    """The previous readers and the dict API: what `complexir evaluate` computed before the columns."""
    run = previous.read_run(run_path)
    adhoc = [m for m in measures if parse_measure(m).kind == "adhoc"]
    coverage = [m for m in measures if parse_measure(m).kind == "coverage"]
    ranking = rank_run(run, depth=max_depth(measures))
    out = {}
    if adhoc:
        if nuggets:  # a doc's largest label over the nuggets
            qrels = {t: {} for t in previous.read_nugget_qrels(qrels_path)}
            for t, ns in previous.read_nugget_qrels(qrels_path).items():
                for docs in ns.values():
                    for d, lab in docs.items():
                        qrels[t][d] = max(lab, qrels[t].get(d, -1))
        else:
            qrels = previous.read_qrels(qrels_path)
        out.update(adhoc_per_query(qrels, ranking, adhoc))
    if coverage:
        out.update(coverage_per_query(previous.read_nugget_qrels(qrels_path), ranking, coverage))
    return out


def assert_same(qrels_path, run_path, measures, nuggets):
    expected = dict_path(qrels_path, run_path, measures, nuggets)
    qids, got = evaluate_files(qrels_path, run_path, measures, nuggets=nuggets)
    for name in measures:
        assert list(expected[name]) == qids
        for q, value in zip(qids, got[name].tolist(), strict=True):
            assert value == pytest.approx(expected[name][q], abs=1e-12), (name, q)


def test_fixtures_equal_previous_readers_and_dict_path(reference_fixtures):
    trec = reference_fixtures / "trec_eval"
    div = reference_fixtures / "diversity"
    assert read_qrels(trec / "qrels.test") == previous.read_qrels(trec / "qrels.test")
    assert read_run(trec / "results.test") == previous.read_run(trec / "results.test")  # tabs and aligned spaces
    assert read_nugget_qrels(div / "qrels.txt") == previous.read_nugget_qrels(div / "qrels.txt")
    assert read_run(div / "run.txt") == previous.read_run(div / "run.txt")
    assert_same(trec / "qrels.test", trec / "results.test", ADHOC, nuggets=False)
    assert_same(div / "qrels.txt", div / "run.txt", ADHOC + COVERAGE, nuggets=True)


def test_fixtures_equal_the_reference_tools(reference_fixtures):
    trec = reference_fixtures / "trec_eval"
    qids, got = evaluate_files(trec / "qrels.test", trec / "results.test", ["nDCG@10", "nDCG@20", "R@100", "AP",
                                                                             "P@10"])
    assert qids == ["301", "302", "303"]
    expected = {"nDCG@10": 0.3016, "nDCG@20": 0.3525, "R@100": 0.4980, "AP": 0.1785, "P@10": 0.3000}  # out.test.a
    for name, value in expected.items():
        assert got[name].mean() == pytest.approx(value, abs=5e-5)
    div = reference_fixtures / "diversity"
    qids, got = evaluate_files(div / "qrels.txt", div / "run.txt", ["alpha_nDCG@5", "alpha_nDCG@20", "StRecall@5"],
                               nuggets=True)
    assert got["alpha_nDCG@5"].tolist() == pytest.approx([0.48828444153440875, 0.8532409696413754], abs=1e-12)
    assert got["alpha_nDCG@20"].mean() == pytest.approx(0.7282847261876347, abs=1e-12)  # ndeval 4.5
    assert got["StRecall@5"].tolist() == pytest.approx([2 / 3, 1.0], abs=1e-12)


# ---- random files -------------------------------------------------------------------------------------------------

ids = st.text(alphabet="abcdé文XYZ019_-.:", min_size=1, max_size=4)
seps = st.sampled_from([" ", "\t", "  ", " \t ", "\t\t"])
scores = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False, width=32),
                   st.sampled_from([0.5, 0.25, 1e-300, -0.0]))


def _line(fields, sep, indent, trailing):
    return indent + sep.join(fields) + trailing


@st.composite
def trec_files(draw):
    topics = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    docs = draw(st.lists(ids, min_size=1, max_size=8, unique=True))
    nuggets = ["1", "2", "n3"]
    qrels = draw(st.lists(st.tuples(st.sampled_from(topics), st.sampled_from(nuggets), st.sampled_from(docs),
                                    st.integers(0, 3)), min_size=1, max_size=30))
    seen, qrel_lines = {}, []
    for t, n, d, lab in qrels:  # one label per (topic, nugget, doc), as a valid nugget file has
        lab = seen.setdefault((t, n, d), lab)
        qrel_lines.append([t, n, d, str(lab)])
    run = draw(st.lists(st.tuples(st.sampled_from(topics + ["extra"]), st.sampled_from(docs), scores),
                        min_size=1, max_size=40))
    run_lines = [[t, "Q0", d, str(i), repr(s), "tag"] for i, (t, d, s) in enumerate(run)]
    style = draw(st.tuples(seps, st.sampled_from(["", " ", "\t"]), st.sampled_from(["", " ", "\t", "\r"]),
                           st.booleans(), st.booleans()))
    return qrel_lines, run_lines, style


def _write(path: Path, lines, style, bom=False):
    sep, indent, trailing, blank_lines, last_newline = style
    text = ""
    for i, fields in enumerate(lines):
        text += _line(fields, sep, indent, trailing) + "\n"
        if blank_lines and i % 3 == 1:
            text += "\n" if i % 2 else " \t\n"
    if not last_newline:
        text = text.rstrip("\n")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=trec_files(), ids_per_group=st.sampled_from([1, 3, 1 << 16]))
def test_random_files_equal_previous_readers_and_dict_path(tmp_path, files, ids_per_group):
    # ids_per_group: doc ids are hashed a group of topics at a time; small groups split every file's topics
    qrel_lines, run_lines, style = files
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    _write(qrels_path, qrel_lines, style)
    _write(run_path, run_lines, style)
    assert read_qrels(qrels_path) == previous.read_qrels(qrels_path)
    assert read_nugget_qrels(qrels_path) == previous.read_nugget_qrels(qrels_path)
    assert read_run(run_path) == previous.read_run(run_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(file_eval, "_IDS_PER_GROUP", ids_per_group)
        assert_same(qrels_path, run_path, ADHOC, nuggets=False)
        assert_same(qrels_path, run_path, ADHOC + COVERAGE, nuggets=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=trec_files())
def test_a_byte_order_mark_changes_nothing(tmp_path, files):
    qrel_lines, run_lines, style = files
    plain, marked, run_path = tmp_path / "q.txt", tmp_path / "q_bom.txt", tmp_path / "r.txt"
    _write(plain, qrel_lines, style)
    _write(marked, qrel_lines, style, bom=True)
    _write(run_path, run_lines, style, bom=True)
    assert read_qrels(marked) == read_qrels(plain)
    assert read_run(run_path) == previous.read_run(run_path.write_bytes(run_path.read_bytes()[3:]) and run_path)
    a, b = evaluate_files(plain, run_path, ADHOC)[1], evaluate_files(marked, run_path, ADHOC)[1]
    assert all((a[m] == b[m]).all() for m in ADHOC)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=trec_files(), where=st.integers(0, 1000), bad=st.sampled_from(
    ["nan", "inf", "-inf", "high", "1.5.2", "", "FIELD"]))
def test_a_bad_run_line_is_named(tmp_path, files, where, bad):
    _qrels, run_lines, style = files
    i = where % len(run_lines)
    if bad == "FIELD":
        run_lines[i] = run_lines[i][:5]
    else:
        run_lines[i] = [*run_lines[i][:4], bad or "x y", "tag"]
    path = tmp_path / "run.txt"
    _write(path, run_lines, (*style[:3], False, True))  # no blank lines: line i + 1 is the bad one
    with pytest.raises(TrecFormatError, match=rf"run\.txt:{i + 1}: ") as info:
        read_run(path)
    assert info.value.line == i + 1 and Path(info.value.path) == path
    with pytest.raises(previous.PreviousFormatError):  # the previous reader refused it too
        previous.read_run(path)


@pytest.mark.parametrize("read_size", [1, 2, 3, 7, 64])
def test_file_blocks_split_anywhere(monkeypatch, tmp_path, reference_fixtures, read_size):
    # the reader takes the file in pieces and checks its spacing in windows: a BOM, a tab, a double space or a
    # line end cut in two by either
    monkeypatch.setattr(trec_io, "_PIECE", read_size)
    monkeypatch.setattr(trec_io, "_WINDOW", read_size)
    trec = reference_fixtures / "trec_eval"
    assert read_run(trec / "results.test") == previous.read_run(trec / "results.test")
    run = tmp_path / "run.txt"
    run.write_bytes(b"\xef\xbb\xbf1 Q0 a 1 1.5 t\n1 Q0 b 2 0.5 t\r\n1\tQ0\tc 3 0.25 t\n1 Q0  d 4 0.125 t\n")
    assert read_run(run) == {"1": {"a": 1.5, "b": 0.5, "c": 0.25, "d": 0.125}}
    run.write_bytes(b"1 Q0 a 1 1.5 t\n1 Q0 b 2 0.5 t \n")
    assert read_run(run) == {"1": {"a": 1.5, "b": 0.5}}


# ---- named bad inputs -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "data", "match"), [
    ("qrels", b"1 0 a 1\n1 0 b -1\n", r"qrels\.txt:2: label -1 is negative"),
    ("qrels", b"1 0 a 1\n1 0 b 1.0\n", r"qrels\.txt:2: label '1.0' is not an integer"),
    ("qrels", b"1 0 a 1\n1 0 b\n", r"qrels\.txt:2: expected 4 whitespace-separated fields"),
    ("qrels", b"1 0 a 1\n\n1 0 b 1 x\n", r"qrels\.txt:3: expected 4 whitespace-separated fields"),
    ("qrels", b"1 0 a 99999999999999999999\n", r"qrels\.txt:1: label 99999999999999999999 is too large"),
    ("qrels", b"", r"qrels\.txt: the qrels file is empty"),
    ("qrels", b"\n \t\n\r\n", r"qrels\.txt: the qrels file is empty"),
    ("qrels", b"\xef\xbb\xbf", r"qrels\.txt: the qrels file is empty"),
    ("run", b"1 Q0 a 1 1 t\n1 Q0 b 2 NaN t\n", r"run\.txt:2: score 'NaN' is not finite"),
    ("run", b"1 Q0 a 1 1 t\r\n1 Q0 b 2 - t\r\n", r"run\.txt:2: score '-' is not a number"),
    ("run", b"1 Q0 a 1 1 t\n1  Q0 b 2 t\n", r"run\.txt:2: expected 6 whitespace-separated fields"),
    ("run", b"1 Q0 a 1 1 t\n1 Q0  b 2 t\n", r"run\.txt:2: expected 6 whitespace-separated fields"),
    ("run", b"", r"run\.txt: the run is empty"),
    ("nuggets", b"1 1 a 1\n1 2 a 2\n1 1 a 2\n", r"qrels\.txt:3: .*judged twice with different labels"),
])
def test_bad_input_names_file_and_line(tmp_path, kind, data, match):
    path = tmp_path / ("run.txt" if kind == "run" else "qrels.txt")
    path.write_bytes(data)
    reader = {"qrels": read_qrels, "run": read_run, "nuggets": read_nugget_qrels}[kind]
    with pytest.raises(TrecFormatError, match=match):
        reader(path)
    if kind == "nuggets":  # the array path refuses it too, at the same line
        run = tmp_path / "run.txt"
        run.write_text("1 Q0 a 1 1 t\n")
        with pytest.raises(TrecFormatError, match=match):
            evaluate_files(path, run, ["alpha_nDCG@5"], nuggets=True)


def test_invalid_utf8_is_a_decode_error(tmp_path):
    # the CLI names file and line for it (tests/test_cli_errors.py), as for every text reader
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"1 0 a 1\n1 0 \xff 1\n")
    with pytest.raises(UnicodeDecodeError):
        read_qrels(path)


@pytest.mark.parametrize("bad_line", [0, 17, 39])
def test_utf8_is_checked_in_every_piece_that_is_not_ascii(monkeypatch, tmp_path, bad_line):
    # ASCII pieces skip the CSV reader's UTF-8 check; a piece with any other byte keeps it, wherever it is
    monkeypatch.setattr(trec_io, "_PIECE", 64)
    lines = [f"1 Q0 d{i} {i} {100 - i} t\n".encode() for i in range(40)]
    run = tmp_path / "run.txt"
    run.write_bytes(b"".join(lines[:bad_line] + ["1 Q0 é文 0 0.5 t\n".encode()] + lines[bad_line + 1:]))
    docs = read_run_columns(run).doc.to_pylist()
    assert docs == [f"d{i}" if i != bad_line else "é文" for i in range(40)]
    assert docs == list(read_run(run)["1"])  # the dict reader, in file order
    run.write_bytes(b"".join(lines[:bad_line] + [b"1 Q0 d\xff 0 0.5 t\n"] + lines[bad_line + 1:]))
    with pytest.raises(UnicodeDecodeError):
        read_run_columns(run)


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("piece", [24, 25, 64])
def test_every_line_end_is_read_in_pieces_of_the_buffer_size(monkeypatch, tmp_path, line_end, piece):
    # lone CRs too: a file of them is cut at its CRs, not held whole; a CRLF cut between its CR and LF reads the same
    monkeypatch.setattr(trec_io, "_PIECE", piece)
    run = tmp_path / "run.txt"
    run.write_bytes("".join(f"1 Q0 d{i} {i} {100 - i} t{line_end}" for i in range(40)).encode())
    assert max(len(p) for p in trec_io._pieces(run)) <= piece
    columns = read_run_columns(run)
    assert columns.doc.to_pylist() == [f"d{i}" for i in range(40)]
    assert columns.score.tolist() == [100.0 - i for i in range(40)]


def test_spellings_python_accepts_are_read_as_before(tmp_path):
    # a label '+1' and a score '1_5' are outside the CSV reader's number syntax: the line reader takes them
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 a +1\n1 0 b 2\n")
    run.write_text("1 Q0 a 1 1_5 t\n1 Q0 b 2 3 t\n")
    assert read_qrels(qrels) == previous.read_qrels(qrels) == {"1": {"a": 1, "b": 2}}
    assert read_run(run) == previous.read_run(run) == {"1": {"a": 15.0, "b": 3.0}}
    assert_same(qrels, run, ADHOC, nuggets=False)


def test_repeated_docs_near_the_cut_keep_their_best_rank(tmp_path, caplog):
    # 'a' is repeated inside the top 2 by score: the array path must look below its first selection
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 c 1\n2 0 x 1\n")
    run.write_text("1 Q0 a 1 9 t\n1 Q0 a 2 8 t\n1 Q0 b 3 1 t\n1 Q0 c 4 0.5 t\n2 Q0 x 1 1 t\n")
    qids, got = evaluate_files(qrels, run, ["P@3", "RR@2"])
    assert got["P@3"].tolist() == [pytest.approx(1 / 3), pytest.approx(1 / 3)]
    assert got["RR@2"].tolist() == [0.0, 1.0]
    assert "repeated" in caplog.text
    assert_same(qrels, run, ["P@3", "RR"], nuggets=False)


def test_runs_read_in_small_pieces_score_the_same(monkeypatch, tmp_path, reference_fixtures):
    # topics cut between pieces, and a repeated doc near the cut whose lower ranks a first piece dropped
    trec = reference_fixtures / "trec_eval"
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 c 1\n1 0 d 2\n2 0 x 1\n")
    run.write_text("1 Q0 a 1 9 t\n1 Q0 b 3 1 t\n1 Q0 a 2 8 t\n1 Q0 c 4 0.5 t\n2 Q0 x 1 1 t\n1 Q0 d 5 0.25 t\n")
    interleaved = tmp_path / "interleaved.txt"  # every topic in every piece: the merge drops most kept rows
    interleaved.write_text("".join(f"{t} Q0 d{i % 7} {i} {(i * 37) % 11} t\n" for i in range(60) for t in (1, 2)))
    cases = [(trec / "qrels.test", trec / "results.test", ADHOC), (qrels, run, ["P@2", "RR@2", "nDCG@2"]),
             (qrels, interleaved, ["P@2", "RR@2", "nDCG@2"])]
    whole = [evaluate_files(*case)[1] for case in cases]
    monkeypatch.setattr(trec_io, "_PIECE", 40)
    monkeypatch.setattr(file_eval, "_IDS_PER_GROUP", 50)  # and the doc ids hashed in groups of topics
    for case, expected in zip(cases, whole, strict=True):
        got = evaluate_files(*case)[1]
        assert all((got[m] == expected[m]).all() for m in case[2])
    assert_same(qrels, run, ["P@2", "RR@2", "nDCG@2"], nuggets=False)
    assert_same(qrels, interleaved, ["P@2", "RR@2", "nDCG@2"], nuggets=False)


def test_ties_break_by_doc_id_in_every_group_of_topics(monkeypatch, tmp_path):
    # each topic hashed on its own: topic 2's codes must still name topic 2's ids, whose order breaks its tie
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 b 1\n2 0 z 1\n")
    run.write_text("1 Q0 a 1 5 t\n1 Q0 b 2 5 t\n2 Q0 z 1 5 t\n2 Q0 y 2 5 t\n")
    monkeypatch.setattr(file_eval, "_IDS_PER_GROUP", 1)
    qids, got = evaluate_files(qrels, run, ["P@1"])
    assert qids == ["1", "2"] and got["P@1"].tolist() == [1.0, 1.0]  # b before a, z before y
    assert_same(qrels, run, ["P@1"], nuggets=False)


# ---- the CLI on the examples ---------------------------------------------------------------------------------

def _evaluate(capsys, *argv):
    rc = main(["evaluate", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _means(out):
    return {line.split("\t")[0]: float(line.split("\t")[2]) for line in out.splitlines() if "\tall\t" in line}


def test_rel_zero_gives_trec_eval_answer(capsys, tmp_path):
    # trec_eval -l 0 -m P.10 on these files: 0.2 (two judged docs retrieved); -l 1: 0.1
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 a 0\n1 0 b 1\n1 0 c 0\n")
    run.write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 x 3 1 t\n")
    for extra in ([], ["-m", "AP"]):
        rc, out, _ = _evaluate(capsys, qrels, run, "-m", "P(rel=0)@10", *extra)
        assert rc == 0 and _means(out)["P(rel=0)@10"] == pytest.approx(0.2)
    rc, _, err = _evaluate(capsys, qrels, run, "-m", "R(rel=-1)@10")
    assert rc != 0 and "rel must be an integer >= 0" in err


def test_empty_qrels_is_refused(capsys, tmp_path, reference_fixtures):
    empty = tmp_path / "qrels.txt"
    empty.write_text("")
    rc, out, err = _evaluate(capsys, empty, reference_fixtures / "trec_eval" / "results.test")
    assert rc != 0 and out == "" and "qrels.txt: the qrels file is empty" in err


def test_bom_qrels_gives_the_plain_answer(capsys, tmp_path, reference_fixtures):
    trec = reference_fixtures / "trec_eval"
    marked = tmp_path / "qrels.test"
    marked.write_bytes(b"\xef\xbb\xbf" + (trec / "qrels.test").read_bytes())
    _, plain, _ = _evaluate(capsys, trec / "qrels.test", trec / "results.test", "--per-query")
    _, with_bom, _ = _evaluate(capsys, marked, trec / "results.test", "--per-query")
    assert with_bom == plain and _means(plain)["nDCG@10"] == pytest.approx(0.3016, abs=5e-5)


def test_huge_cutoff_on_the_command_line(capsys, reference_fixtures):
    trec = reference_fixtures / "trec_eval"
    rc, out, _ = _evaluate(capsys, trec / "qrels.test", trec / "results.test", "-m", "nDCG@100000000", "-m", "nDCG")
    means = _means(out)
    assert rc == 0 and means["nDCG@100000000"] == means["nDCG"]
    assert math.isfinite(means["nDCG"])


def test_evaluate_imports_only_what_it_uses(reference_fixtures):
    # the parser is built for the named subcommand only: no other subcommand, no mteb, torch, datasets or pandas
    trec = reference_fixtures / "trec_eval"
    heavy = ("mteb", "torch", "datasets", "pandas", "complexir.cli.run_cmd", "complexir.layout.writer")
    assert modules_imported_by(["evaluate", str(trec / "qrels.test"), str(trec / "results.test")], heavy) == []


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([b" ", b"a", b"\n", b"\r", b"\x0b", b"\x7f", "é".encode()]), max_size=40)
       .map(b"".join), st.sampled_from([2, 3, 7, 1 << 18]))
def test_the_empty_field_check_follows_its_definition(piece, window):
    # a space next to a space or a line end (any byte below 0x20), or at the piece's start or end; windows cut anywhere
    blank = [b <= 0x20 for b in piece]
    space = [b == 0x20 for b in piece]
    expected = piece[:1] == b" " or piece[-1:] == b" " or any(
        blank[i] and blank[i + 1] and (space[i] or space[i + 1]) for i in range(len(piece) - 1))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trec_io, "_WINDOW", window)
        assert trec_io._has_empty_field(piece) == expected
