"""``complexir run``'s option combinations that would do nothing, refused in one line before anything is read.

An option that a mode ignores (``--prompt`` with ``--runs``, ``--model`` with ``--release-runs``), a prompt given
twice (the last would win) or ``--rerank-depth`` without a first stage to rerank would otherwise be accepted
silently, and the results filed as if it had applied. One function, :func:`refuse_inert_options`, called once
at the start of ``run``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from complexir.api.fixed_runs import refuse_saving_into


def refuse_inert_options(args: argparse.Namespace) -> None:
    """ValueError naming the first option that ``args``' mode would ignore, or a prompt type given twice."""
    prompts = args.prompt or []
    seen: dict[str, str] = {}
    for kind, text in prompts:
        if kind in seen:
            raise ValueError(f"--prompt {kind}= is given twice ({seen[kind]!r:.80} and {text!r:.80}); give each "
                             "prompt type once")
        seen[kind] = text
    if getattr(args, "release_runs", False):
        given = [option for option, value in (
            ("--model", args.model), ("--model-name", getattr(args, "model_name", None)),
            ("--runs", getattr(args, "runs", None)), ("--save-runs", getattr(args, "save_runs", None) is not None),
            ("--prompt", prompts), ("--first-stage", args.first_stage),
            ("--rerank-depth", args.rerank_depth is not None), ("--trust-remote-code", args.trust_remote_code),
            ("--max-seq-length", getattr(args, "max_seq_length", None)),
            ("--backend", getattr(args, "backend", "torch") != "torch"),
            ("--long-docs", getattr(args, "long_docs", "none") != "none")) if value]
        if given:
            raise ValueError(f"--release-runs scores the rankings the release ships, each as its own system: "
                             f"{', '.join(given)} cannot apply to them; leave {'it' if len(given) == 1 else 'them'} "
                             "out")
    if getattr(args, "runs", None) is not None:
        inert = [option for option, value in (("--prompt", prompts), ("--trust-remote-code", args.trust_remote_code))
                 if value]
        if inert:
            raise ValueError(f"--runs scores fixed rankings, with no model to prompt or run: {', '.join(inert)} cannot "
                             "apply; leave it out")
    if args.rerank_depth is not None and args.first_stage is None:
        raise ValueError("--rerank-depth sets how deep a cross-encoder reranks its --first-stage: without "
                         "--first-stage it cannot apply; leave it out, or give --first-stage")
    if getattr(args, "allow_other_data", False) and getattr(args, "runs", None) is None and args.first_stage is None:
        raise ValueError("--allow-other-data applies to --runs or a --first-stage of runs (rankings made on other "
                         "data); without them it cannot apply; leave it out")
    runs, save_runs = getattr(args, "runs", None), getattr(args, "save_runs", None)
    if runs and save_runs:
        refuse_saving_into(Path(save_runs), Path(runs))
