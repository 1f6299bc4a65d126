"""``complexir push``: publish a built benchmark (dataset repo), a metric folder (Gradio Space) or a report folder
(``complexir report``'s output: the model card and ``.eval_results``, to a model repo, directly or as a pull request).

A metric folder is uploaded as a staged, self-contained copy (the maths vendored; see complexir.hub.push).
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("push", help="upload a benchmark folder (dataset), a metric folder (Space), a "
                                                "report folder (model repo: card and .eval_results) or a "
                                                "leaderboard site (static Space)")
    parser.add_argument("folder", help="a built benchmark folder, a metrics/<name>/ folder, a report folder or a "
                                       "`complexir leaderboard` site")
    parser.add_argument("--repo", required=True, metavar="ORG/NAME", help="target Hub repository")
    parser.add_argument("--private", action="store_true",
                        help="make the repository private: a new one is created private, an existing public one "
                             "is switched to private (without it, an existing repository keeps its visibility)")
    parser.add_argument("--dry-run", action="store_true",
                        help="check the folder and list what would be uploaded; no network")
    parser.add_argument("--stage-dir", metavar="DIR", default=None,
                        help="metric folders: write the staged Space copy here (must be empty) and keep it, "
                             "e.g. to try it with evaluate.load(DIR) before pushing")
    parser.add_argument("--create-pr", action="store_true",
                        help="open a pull request with the files instead of committing to main (how results are "
                             "proposed to a model repo one does not own); the repo must exist")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from complexir.hub.push import push

    result = push(args.folder, args.repo, private=args.private, dry_run=args.dry_run, stage_dir=args.stage_dir,
                  create_pr=args.create_pr)
    plan = result.plan
    kind = plan.repo_type + (f" (sdk {plan.space_sdk})" if plan.space_sdk else "")
    if args.dry_run:
        print(f"would upload {len(plan.files)} file(s) to {kind} repo {args.repo}:")
    elif result.pull_request:
        print(f"opened pull request {result.pull_request} on {kind} repo {args.repo} with {len(plan.files)} file(s) "
              f"(commit {result.commit}):")
    elif result.changed:
        print(f"uploaded {len(plan.files)} file(s) to {kind} repo {args.repo} (commit {result.commit}):")
    else:
        print(f"no changes: {kind} repo {args.repo} already holds these {len(plan.files)} file(s) "
              f"(commit {result.commit}):")
    for path, size in plan.files:
        print(f"  {size:>12,d}  {path}")
    print(f"  {sum(s for _, s in plan.files):>12,d}  total bytes")
    if plan.space_sdk == "gradio":  # a metric Space (a static one is uploaded as it is)
        where = f"staged in {plan.upload_folder}" if args.stage_dir else "staged copy"
        print(f"({where}: complexir.metrics vendored as _complexir_metrics.py; load it with "
              f"evaluate.load({args.repo!r}) once pushed)")
    if not args.dry_run:
        state = "created " if result.created else ("made " if result.visibility_changed else "")
        print(f"{state}{'private' if result.private else 'public'}: {args.repo}")
    return 0
