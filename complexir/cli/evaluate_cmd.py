"""``complexir evaluate QRELS RUN``: score a TREC run with the suite's own measures.

Prints ``MEASURE<TAB>QUERY<TAB>VALUE`` lines (``all`` = mean over every query of the qrels), measure
names spelled as ir_measures spells them.
"""

from __future__ import annotations

import argparse
import logging
import sys

from complexir.metrics import DEFAULT_ADHOC_MEASURES, DEFAULT_COVERAGE_MEASURES, mean_scores, parse_measure
from complexir.metrics.measures import MeasureKind, measures_help

logger = logging.getLogger(__name__)

DEFAULT_MEASURES = (*DEFAULT_ADHOC_MEASURES, *DEFAULT_COVERAGE_MEASURES)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score a TREC run file against TREC qrels (trec_eval / ndeval semantics)",
        description=(
            "Score a TREC run (topic Q0 doc rank score tag) against TREC qrels (topic iteration doc label). "
            "The run is ranked by score, ties by doc id descending (trec_eval's rule); the rank column is "
            "ignored. Output: MEASURE<TAB>QUERY<TAB>VALUE, with QUERY 'all' for the mean over every query "
            "of the qrels (a query missing from the run scores 0)."
        ),
    )
    parser.add_argument("qrels", help="TREC qrels file: topic iteration doc label")
    parser.add_argument("run", help="TREC run file: topic Q0 doc rank score tag")
    parser.add_argument(
        "-m", "--measure", dest="measures", action="append", metavar="MEASURE",
        help=(
            "measure in ir_measures spelling, repeatable: " + measures_help() + "; parameters as in "
            "alpha_nDCG(alpha=0.9)@20 or P(rel=2)@10; the labels run and compare print (MAP@10, α-nDCG@20) and "
            "MTEB score keys (map_at_10) are read too. Default: " + ", ".join(DEFAULT_MEASURES)
        ),
    )
    parser.add_argument("--per-query", action="store_true", help="also print one line per query")
    parser.add_argument(
        "--nuggets", action="store_true",
        help=(
            "read the qrels' iteration column as the nugget (subtopic) id, ndeval's format. The coverage "
            "measures (alpha_nDCG, StRecall, ...) need it; ad hoc measures then use, per document, its "
            "largest label over the nuggets. Without it the iteration column is ignored and coverage "
            "measures are skipped (an error if asked for with -m)."
        ),
    )
    parser.add_argument("--alpha", type=float, default=0.5, help="default alpha for coverage measures (0.5)")
    parser.add_argument("--rel-level", type=int, default=1, help="label >= this contains a nugget (1)")
    parser.add_argument(
        "--denominator", choices=("supported", "all"), default="supported",
        help="StRecall denominator: nuggets with a supporting doc (ndeval, default) or every listed nugget",
    )
    parser.add_argument("--digits", type=_digits, default=6, help="decimal places printed, 0-17 (6)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    explicit = bool(args.measures)
    names = list(args.measures or DEFAULT_MEASURES)
    parsed = [parse_measure(n) for n in names]  # fails early on an unknown name
    adhoc = [m.name for m in parsed if m.kind == MeasureKind.ADHOC]
    coverage = [m.name for m in parsed if m.kind == MeasureKind.COVERAGE]
    if coverage and not args.nuggets:
        if explicit:
            raise ValueError(
                f"coverage measures ({', '.join(coverage)}) need nugget ids: pass --nuggets so that the "
                "qrels' iteration column is read as the nugget id"
            )
        # the default measures include them for nugget qrels; plain qrels simply have none (the help says so)
        logger.debug("coverage measures skipped (%s): pass --nuggets to compute them", ", ".join(coverage))
        coverage = []

    import pyarrow as pa  # imported when the command runs, not for --help

    from complexir.runs.file_eval import evaluate_files

    # Arrow's system-allocator pool returns freed buffers to the OS at once (its default, mimalloc, keeps them):
    # a lower peak for a one-shot command on large files.
    pa.set_memory_pool(pa.system_memory_pool())

    wanted = [*adhoc, *coverage]
    qids, values = evaluate_files(args.qrels, args.run, wanted, nuggets=args.nuggets, alpha=args.alpha,
                                  rel_level=args.rel_level, denominator=args.denominator)
    per_query = {name: dict(zip(qids, vec.tolist(), strict=True)) for name, vec in values.items()}
    means = mean_scores(per_query)
    digits = args.digits
    lines = []
    for name in [m.name for m in parsed if m.name in per_query]:
        if args.per_query:  # one write for all: a print per line is most of the output's cost at 10,000 queries
            lines += [f"{name}\t{qid}\t{value:.{digits}f}" for qid, value in per_query[name].items()]
        lines.append(f"{name}\tall\t{means[name]:.{digits}f}")
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return 0


def _digits(text: str) -> int:
    """``--digits``: 0 to 17 (a float64 has no more significant decimals to print)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value <= 17:
        raise argparse.ArgumentTypeError(f"expected 0 to 17, got {value}")
    return value
