"""``complexir push``: publish a built benchmark (dataset repo) or a metric folder (Gradio Space) to the Hub.

A metric folder is uploaded as a staged, self-contained copy (the maths vendored; see complexir.push).
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("push", help="upload a benchmark folder (dataset) or a metric folder (Space)")
    parser.add_argument("folder", help="a built benchmark folder or a metrics/<name>/ folder")
    parser.add_argument("--repo", required=True, metavar="ORG/NAME", help="target Hub repository")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--dry-run", action="store_true", help="list what would be uploaded; no network")
    parser.add_argument("--stage-dir", metavar="DIR", default=None,
                        help="metric folders: write the staged Space copy here (must be empty) and keep it, "
                             "e.g. to try it with evaluate.load(DIR) before pushing")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from complexir.push import push

    plan = push(args.folder, args.repo, private=args.private, dry_run=args.dry_run, stage_dir=args.stage_dir)
    kind = plan.repo_type + (f" (sdk {plan.space_sdk})" if plan.space_sdk else "")
    verb = "would upload" if args.dry_run else "uploaded"
    print(f"{verb} {len(plan.files)} file(s) to {kind} repo {args.repo}:")
    for path, size in plan.files:
        print(f"  {size:>12,d}  {path}")
    print(f"  {sum(s for _, s in plan.files):>12,d}  total bytes")
    if plan.repo_type == "space":
        where = f"staged in {plan.upload_folder}" if args.stage_dir else "staged copy"
        print(f"({where}: complexir.metrics vendored as _complexir_metrics.py; load it with "
              f"evaluate.load({args.repo!r}) once pushed)")
    return 0
