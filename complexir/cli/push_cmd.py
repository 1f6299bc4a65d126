"""``complexir push``: publish a built benchmark (dataset repo) or a metric folder (Gradio Space) to the Hub."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("push", help="upload a benchmark folder (dataset) or a metric folder (Space)")
    parser.add_argument("folder", help="a built benchmark folder or a metrics/<name>/ folder")
    parser.add_argument("--repo", required=True, metavar="ORG/NAME", help="target Hub repository")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--dry-run", action="store_true", help="list what would be uploaded; no network")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from complexir.push import push

    plan = push(args.folder, args.repo, private=args.private, dry_run=args.dry_run)
    kind = plan.repo_type + (f" (sdk {plan.space_sdk})" if plan.space_sdk else "")
    verb = "would upload" if args.dry_run else "uploaded"
    print(f"{verb} {len(plan.files)} file(s) to {kind} repo {args.repo}:")
    for path, size in plan.files:
        print(f"  {size:>12,d}  {path}")
    print(f"  {sum(s for _, s in plan.files):>12,d}  total bytes")
    return 0
