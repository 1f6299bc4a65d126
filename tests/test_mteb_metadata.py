"""mteb's own metadata checks on our tasks and benchmarks.

mteb's repository tests every task's and benchmark's BibTeX by re-formatting it with bibtexparser (two-space
indent, trailing commas) and requiring the result to equal the citation as written; those tests are not part of
the installed package, so the same check is repeated here with the same formatter settings.
"""

from __future__ import annotations

import bibtexparser
import pytest
from bibtexparser.bwriter import BibTexWriter

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
