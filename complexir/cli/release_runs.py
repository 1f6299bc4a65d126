"""``complexir run --release-runs``: the released runs scored by ``complexir.api.release_runs``, printed as one table
per measure (a row per released run, a column per collection), the paper's values beside ours."""

from __future__ import annotations

from complexir.analysis.tables import fmt_score
from complexir.api.options import RunOptions
from complexir.api.release_runs import MEASURES, SYSTEM_PREFIX, ReleaseRunsResult, published, score_release_runs
from complexir.cli.text_table import text_table


def render(scores: dict[str, dict[str, dict[str, float]]], subsets: list[str]) -> str:
    """One table per measure: a row per released run, a column per collection, ours (published)."""
    out = []
    for label, key in MEASURES:
        body = []
        for run in sorted(scores):
            cells = []
            for subset in subsets:
                value = scores[run].get(subset, {}).get(key)
                ref = published(subset, run, key)
                cell = "-" if value is None else fmt_score(value)
                cells.append(cell + (f" ({ref:.3f})" if ref is not None else ""))
            body.append([f"{SYSTEM_PREFIX}/{run}", *cells])
        out.append(f"{label} (in brackets: the paper's value, where its text gives one)")
        out.append(text_table(["system", *subsets], body))
    return "\n".join(out)


def print_release_runs(result: ReleaseRunsResult) -> None:
    for task, provenance in result.data.items():
        print(f"data: {task}: {provenance.describe()}")
    print(f"released runs as systems ({len(result.scores)}; revision of the release: "
          f"{', '.join(result.revisions)}); results in {result.output.resolve()}")
    if result.demo:
        print("DEMO DATA: a few hand-written topics and one hand-written run to show the pipeline works. These are "
              "NOT the paper's runs; build CoverageBench with `complexir build coveragebench` and pass --data-dir.")
    print(render(result.scores, result.subsets))


def run_release_runs(options: RunOptions) -> int:
    """Score every released run of the tasks ``options`` select and print the tables."""
    print_release_runs(score_release_runs(options))
    return 0
