"""``complexir report``: a model-card section (tables, charts, significance) and Hub metadata from results."""

from __future__ import annotations

import argparse
import logging

from complexir.cli.early_checks import check_existing_folders

logger = logging.getLogger(__name__)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="model card (model-index + tables + charts), .eval_results and significance from results"
    )
    parser.add_argument("results", help="results folder of `complexir run`/`mteb run` (or a model folder in it)")
    parser.add_argument("--model", default=None, help="model name, when RESULTS holds several models")
    parser.add_argument("--card", default=None, help="existing model card (README.md) to merge into")
    parser.add_argument("--baseline", default=None, help="results folder of a baseline model: adds Δ and p-values")
    parser.add_argument("--baseline-model", default=None, help="model name in --baseline, when it holds several")
    parser.add_argument("--out", default="report", help="output folder (default: ./report)")
    parser.add_argument("--allow-demo", action="store_true",
                        help="accept results of demo data (or of data no result names) and label them as demo")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_existing_folders("results folder", [args.results])  # before the report's imports (mteb), which take seconds
    check_existing_folders("--baseline", [args.baseline])
    logger.info("loading mteb and the results...")  # seconds of imports: say the command is alive
    from complexir.analysis.report import make_report

    card = make_report(args.results, args.out, model=args.model, card=args.card, baseline=args.baseline,
                       baseline_model=args.baseline_model, allow_demo=args.allow_demo)
    print(f"model card written to {card}")
    return 0
