"""Read a benchmark in the standard layout, from a local folder or a Hub dataset repo, with ``datasets``.

No code of ours is needed to read the data (``load_dataset(folder, "<subset>-qrels", split="test")`` is the
whole story); these helpers only spare callers the config naming and give qrels/nuggets as the plain
mappings that metrics take.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import datasets

from .card import ZERO_SCORE_KEY, read_front_matter
from .schema import CORPUS_SPLIT, config_name
from .validation import parse_config_name


def resolve(source: str | os.PathLike) -> str:
    """A local folder as an absolute path, else the Hub repo id unchanged."""
    path = Path(source).expanduser()
    return str(path.resolve()) if path.exists() else str(source)


def list_subsets(source: str | os.PathLike) -> list[str | None]:
    """The subsets of a benchmark, in card order (``None`` for a single unnamed subset)."""
    source = resolve(source)
    if Path(source).is_dir():
        names = [c["config_name"] for c in read_front_matter(Path(source) / "README.md").get("configs", [])]
    else:
        names = datasets.get_dataset_config_names(source)
    return list(dict.fromkeys(subset for subset, kind in map(parse_config_name, names) if kind == "corpus"))


def load(source: str | os.PathLike, subset: str | None, kind: str, split: str = "test",
         revision: str | None = None) -> datasets.Dataset:
    """One config split as a ``datasets.Dataset`` (the corpus has a single split whatever ``split`` says)."""
    return datasets.load_dataset(
        resolve(source), config_name(subset, kind), split=CORPUS_SPLIT if kind == "corpus" else split,
        revision=revision,
    )


def qrels_dict(dataset: datasets.Dataset) -> dict[str, dict[str, int]]:
    """query-id → corpus-id → grade."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for q, d, s in zip(dataset["query-id"], dataset["corpus-id"], dataset["score"], strict=True):
        out[q][d] = int(s)
    return dict(out)


def nugget_judgments(dataset: datasets.Dataset) -> dict[str, dict[str, dict[str, int]]]:
    """query-id → nugget-id → corpus-id → grade, the input of the coverage metrics.

    Every nugget is listed even without support, so ``denominator="all"`` can count it.
    """
    out: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for q, n, support in zip(dataset["query-id"], dataset["nugget-id"], dataset["support"], strict=True):
        out[q][n] = {s["corpus-id"]: int(s["score"]) for s in support}
    return dict(out)


def zero_score_queries(source: str | os.PathLike, revision: str | None = None) -> dict[str, dict[str, list[str]]]:
    """subset → split → ids of judged queries without a relevant document (dropped from the layout; they
    score 0 in every mean, as trec_eval and ndeval count them), from the card's ``complexir`` metadata."""
    source = resolve(source)
    if Path(source).is_dir():
        readme = Path(source) / "README.md"
    else:
        from huggingface_hub import hf_hub_download

        readme = Path(hf_hub_download(source, "README.md", repo_type="dataset", revision=revision))
    return (read_front_matter(readme).get("complexir") or {}).get(ZERO_SCORE_KEY, {})
