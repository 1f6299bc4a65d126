"""mteb's own metadata checks on our tasks and benchmarks.

mteb's repository tests every task's and benchmark's BibTeX by re-formatting it with bibtexparser (two-space
indent, trailing commas) and requiring the result to equal the citation as written; those tests are not part of
the installed package, so the same check is repeated here with the same formatter settings.
"""

from __future__ import annotations

import json
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


def test_the_demos_serve_all_44_tasks():
    """mteb's metadata test below runs on every task: the demos hold data for each one."""
    assert len(TASKS) == 44
    assert [cls.metadata.name for cls in TASKS if not cls().available_in(demo_data_dir())] == []


@pytest.mark.parametrize("task_class", TASKS, ids=lambda cls: cls.metadata.name)
def test_all_metadata_is_filled_and_valid_on_the_demos(task_class, monkeypatch):
    """mteb's own ``test_all_metadata_is_filled_and_valid`` (the checks of its repository's test, through mteb's
    methods), on the task as mteb hands it out (``mteb.get_task``) with the data source the mteb hook sets from
    ``COMPLEXIR_DATA_DIR`` (here: the demos): the descriptive statistics are those ``complexir build`` computed
    on that copy and stored in it, found before anything is loaded."""
    import mteb

    from complexir.hub.data_source import DataSource
    from complexir.tasks import LayoutRetrievalTask

    monkeypatch.setattr(LayoutRetrievalTask, "default_source", DataSource.local(demo_data_dir()))
    task = mteb.get_task(task_class.metadata.name)
    assert isinstance(task, task_class)
    metadata = task.metadata
    metadata._validate_metadata()
    assert metadata.is_filled(), f"Metadata for {metadata.name} is not filled"
    assert metadata.dataset.get("trust_remote_code", False) is False
    assert isinstance(metadata.simplified_task_type, str)
    assert not task.is_aggregate
    assert metadata.descriptive_stats is not None, metadata.descriptive_stat_path
    assert metadata.n_samples is not None
    assert metadata.prompt is None or isinstance(metadata.prompt, dict)  # a dict prompt is allowed for retrieval
    assert not task.data_loaded  # found on disk, not by loading the data
    assert metadata.descriptive_stat_path.parent.parent == demo_data_dir() / task.benchmark_dir
    stored = json.loads((demo_data_dir() / task.benchmark_dir / "descriptive_stats" /
                         f"{metadata.name}.json").read_text())
    assert metadata.descriptive_stats == stored


def test_statistics_follow_the_source_set_after_the_task_was_made(tmp_path):
    """A task made first and pointed at a data dir afterwards (``task.data_dir = ...``, as ``complexir run`` does)
    reports that data dir's statistics, not those of the source it was made with."""
    import shutil

    cls = TASKS[0]
    copy = tmp_path / "data"
    shutil.copytree(demo_data_dir() / cls.benchmark_dir, copy / cls.benchmark_dir)
    stats = copy / cls.benchmark_dir / "descriptive_stats" / f"{cls.metadata.name}.json"
    data = json.loads(stats.read_text())
    data["changed"] = True
    stats.write_text(json.dumps(data))
    task = cls()
    task.data_dir = demo_data_dir()
    assert "changed" not in task.metadata.descriptive_stats
    task.data_dir = copy
    assert task.metadata.descriptive_stats["changed"] is True


def test_build_writes_mteb_statistics_of_the_built_data(tmp_path):
    """``complexir build`` stores, for every task its folder serves, mteb's statistics of exactly that data."""

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


def test_on_the_hub_statistics_come_from_the_cached_repo_else_nowhere(tmp_path, monkeypatch):
    """A task reading the Hub finds its statistics in the repo's copy in the Hugging Face cache (no network); with
    nothing on disk (no cached repo, no build from the upstream release) mteb sees none, as docs/mteb.md says."""
    from huggingface_hub import constants

    from complexir.hub.data_source import DataSource
    from complexir.tasks import LayoutRetrievalTask

    cls = TASKS[0]
    monkeypatch.setattr(LayoutRetrievalTask, "default_source", DataSource.hub())
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("COMPLEXIR_CACHE", str(tmp_path / "complexir"))
    task = cls()
    assert task.metadata.descriptive_stats is None and task.metadata.n_samples is None

    repo = tmp_path / "hub" / ("datasets--" + cls.metadata.dataset["path"].replace("/", "--"))
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / cls.metadata.dataset["revision"]).write_text(commit)
    stats = demo_data_dir() / cls.benchmark_dir / "descriptive_stats" / f"{cls.metadata.name}.json"
    cached = repo / "snapshots" / commit / "descriptive_stats" / stats.name
    cached.parent.mkdir(parents=True)
    cached.write_bytes(stats.read_bytes())
    assert task.metadata.descriptive_stats == json.loads(stats.read_text())
    assert not task.data_loaded


def test_tasks_a_data_dir_does_not_serve_show_no_statistics(tmp_path, monkeypatch):
    """Where no data is present, mteb sees no statistics (docs/mteb.md): never another task's, never made up. Here
    a data dir holding CRUMB's legal_qa only: its two tasks see theirs, every other task none."""
    import mteb

    from complexir.cli.main import main
    from complexir.hub.data_source import DataSource
    from complexir.tasks import LayoutRetrievalTask

    fixture = Path(__file__).parent / "fixtures" / "crumb" / "demo_upstream"
    assert main(["build", "crumb", "--source", str(fixture), "--out", str(tmp_path / "crumb"), "--subset", "legal_qa",
                 "--no-progress"]) == 0
    monkeypatch.setattr(LayoutRetrievalTask, "default_source", DataSource.local(tmp_path))
    served = {"CRUMBLegalQA", "CRUMBLegalQAFullDocument"}
    for cls in TASKS:
        task = mteb.get_task(cls.metadata.name)
        if cls.metadata.name in served:
            assert task.metadata.descriptive_stats is not None, cls.metadata.name
        else:
            assert task.metadata.descriptive_stats is None and task.metadata.n_samples is None, cls.metadata.name


def test_a_task_s_metadata_pickles_without_the_task():
    """The Ray engine ships a task's metadata to its workers: its pickle must not carry the task (and through it the
    model being evaluated), only what scoring reads."""
    import pickle

    from complexir.tasks import tasks_by_name

    task = tasks_by_name()["LoCoV1GovReport"]()
    task.model_in_use = object()  # anything the task holds that cannot be pickled
    copy = pickle.loads(pickle.dumps(task.metadata))
    assert copy.name == task.metadata.name and copy.main_score == task.metadata.main_score
    assert copy._locate is None
