"""mteb's own metadata checks on our tasks and benchmarks.

mteb's repository tests every task's and benchmark's BibTeX by re-formatting it with bibtexparser (two-space
indent, trailing commas) and requiring the result to equal the citation as written; those tests are not part of
the installed package, so the same check is repeated here with the same formatter settings.
"""

from __future__ import annotations

from pathlib import Path

import bibtexparser
import pytest
from bibtexparser.bwriter import BibTexWriter

from complexir.api.run import demo_data_dir
from complexir.tasks import BENCHMARKS, TASKS


def mteb_formatted_bibtex(citation: str) -> str | None:
    """The citation as mteb's citation check formats it; None when it holds no entry."""
    parser = bibtexparser.bparser.BibTexParser(common_strings=True, ignore_nonstandard_types=False,
                                               interpolate_strings=False)
    database = bibtexparser.loads(citation, parser)
    if not database.entries:
        return None
    writer = BibTexWriter()
    writer.indent = "  "
    writer.comma_first = False
    writer.add_trailing_comma = True
    return writer.write(database).strip()


@pytest.mark.parametrize("task", TASKS, ids=lambda cls: cls.metadata.name)
def test_task_bibtex_is_formatted_as_mteb_requires(task):
    citation = task.metadata.bibtex_citation
    assert citation and mteb_formatted_bibtex(citation) == citation


@pytest.mark.parametrize("benchmark", BENCHMARKS, ids=lambda b: b.name)
def test_benchmark_bibtex_is_formatted_as_mteb_requires(benchmark):
    assert benchmark.citation and mteb_formatted_bibtex(benchmark.citation) == benchmark.citation


ON_DEMO = [cls for cls in TASKS if cls().available_in(demo_data_dir())]


@pytest.mark.parametrize("task_class", ON_DEMO, ids=lambda cls: cls.metadata.name)
def test_all_metadata_is_filled_and_valid_on_the_demos(task_class):
    """mteb's own ``test_all_metadata_is_filled_and_valid`` (the checks of its repository's test, through mteb's
    methods) on each task reading the demo copy of its benchmark: the descriptive statistics are those
    ``complexir build`` computed on that copy and stored in it."""
    task = task_class()
    task.data_dir = demo_data_dir()
    task.data_provenance()
    metadata = task.metadata
    metadata._validate_metadata()
    assert metadata.is_filled(), f"Metadata for {metadata.name} is not filled"
    assert metadata.dataset.get("trust_remote_code", False) is False
    assert isinstance(metadata.simplified_task_type, str)
    assert not task.is_aggregate
    assert metadata.descriptive_stats is not None, metadata.descriptive_stat_path
    assert metadata.n_samples is not None
    assert metadata.descriptive_stat_path.parent.parent == demo_data_dir() / task.benchmark_dir
    assert metadata.prompt is None or isinstance(metadata.prompt, dict)  # a dict prompt is allowed for retrieval


def test_build_writes_mteb_statistics_of_the_built_data(tmp_path):
    """``complexir build`` stores, for every task its folder serves, mteb's statistics of exactly that data."""
    import json

    from complexir.cli.main import main

    fixture = Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream"
    out = tmp_path / "my_crumb"  # a folder name other than the benchmark's
    assert main(["build", "crumb", "--source", str(fixture), "--out", str(out), "--subset", "legal_qa",
                 "--no-progress"]) == 0
    files = sorted(p.name for p in (out / "descriptive_stats").iterdir())
    assert files == ["CRUMBLegalQA.json", "CRUMBLegalQAFullDocument.json"]
    stats = json.loads((out / "descriptive_stats" / "CRUMBLegalQA.json").read_text())
    labels = (fixture / "legal_qa" / "eval" / "query_labels.jsonl").read_text().splitlines()
    queries = [json.loads(line) for line in labels]
    kept = [q for q in queries if any(int(e["label"]) > 0 for e in q["passage_qrels"])]
    assert stats["test"]["num_queries"] == len(kept)
    documents = (fixture / "legal_qa" / "passage_corpus.jsonl").read_text().splitlines()
    assert stats["test"]["num_documents"] == len(documents)
    assert stats["test"]["num_samples"] == len(kept) + len(documents)
