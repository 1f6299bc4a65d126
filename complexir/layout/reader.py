"""Read a benchmark in the standard layout, from a local folder or a Hub dataset repo, with ``datasets``.

No code of ours is needed to read the data (``load_dataset(folder, "<subset>-qrels", split="test")`` is the
whole story); these helpers only spare callers the config naming (``schema``), read the card through
``BenchmarkFolder``, and give qrels/nuggets as the plain mappings that metrics take.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import datasets

from complexir.layout.card import read_front_matter
from complexir.layout.folder import BenchmarkFolder
from complexir.layout.schema import CORPUS_SPLIT, config_name


def resolve(source: str | os.PathLike) -> str:
    """A local folder as an absolute path, else the Hub repo id unchanged."""
    path = Path(source).expanduser()
    return str(path.resolve()) if path.exists() else str(source)


def card_path(source: str | os.PathLike, revision: str | None = None) -> Path:
    """The README.md of a benchmark: in the folder, or downloaded from the Hub repo (from the local cache when
    offline, as ``hf_hub_download`` does)."""
    source = resolve(source)
    if Path(source).is_dir():
        return Path(source) / "README.md"
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(source, "README.md", repo_type="dataset", revision=revision))


def card_configs(source: str | os.PathLike, revision: str | None = None) -> list[dict]:
    """The card's ``configs`` entries (name and data files), in card order.

    Read from the card rather than with ``datasets.get_dataset_config_names``: offline, that function answers
    ``["default"]`` for a cached Hub repo, whereas the card is in the Hub cache with the data.
    """
    return list(read_front_matter(card_path(source, revision)).get("configs") or [])


def config_names(source: str | os.PathLike, revision: str | None = None) -> list[str]:
    return [c["config_name"] for c in card_configs(source, revision)]


def config_splits(source: str | os.PathLike, config: str, revision: str | None = None) -> list[str]:
    """The splits of one config, from the card's ``data_files``."""
    for entry in card_configs(source, revision):
        if entry["config_name"] == config:
            files = entry.get("data_files") or []
            splits = [f["split"] for f in files if isinstance(f, dict) and "split" in f] if isinstance(files, list) \
                else []
            return splits or ["train"]  # a bare pattern (or list of patterns) is the "train" split in datasets
    raise KeyError(f"{source}: no config {config!r} in its card")


def list_subsets(source: str | os.PathLike, revision: str | None = None) -> list[str | None]:
    """The subsets of a benchmark, in card order (``None`` for a single unnamed subset)."""
    return BenchmarkFolder.open(resolve(source), revision).subsets


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
    return BenchmarkFolder.open(resolve(source), revision).zero_score_queries
