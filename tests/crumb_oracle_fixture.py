"""A CRUMB release in the exact upstream format, written by code, built to catch what small hand-written files miss,
and a fixed passage run over it. Used by the tests, and by a comparison with the official ``crumb_eval`` run outside
this repository (its code has no licence, so it is not vendored).

tip_of_the_tongue (scored with MaxP):
- document ids with ``:`` in them ("Batman: Mask of the Phantasm", "Batman: Under the Red Hood", ...): the passage
  id is ``<document id>:<chunk>`` and the release's ``parent_id`` names the document;
- 60 documents with 1 to 30 passages each (about 900 passages), so a passage search of a few hundred passages
  reaches far fewer distinct documents than the corpus has;
- graded labels with 0.5 (cast to 0), judged zeros, a query whose only positive is 0.5 (judged, no positive after the
  cast), and a judgment on a document missing from the corpus;
- a run whose scores are rounded to one decimal, so ties are everywhere, at every cutoff.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

TASK = "tip_of_the_tongue"
COLON_TITLES = ["Batman: Mask of the Phantasm", "Batman: Under the Red Hood", "Batman: Year One",
                "Star Wars: Episode IV", "Star Wars: The Clone Wars", "Mission: Impossible", "Alien: Covenant"]
TITLES = COLON_TITLES + [f"Film {i:02d}" for i in range(53)]
MISSING = "Batman: The Lost Reel"  # judged, not in the corpus


def passages_of(title: str, rng: random.Random) -> list[str]:
    return [f"{title}:{i}" for i in range(rng.randint(1, 30))]


def _labels(rng: random.Random, n_pos: int) -> list[dict]:
    chosen = rng.sample(TITLES, n_pos + 4)
    labels = [{"id": d, "label": float(rng.choice([1, 2, 3]))} for d in chosen[:n_pos]]
    labels += [{"id": d, "label": 0.0} for d in chosen[n_pos:n_pos + 2]]
    labels += [{"id": d, "label": 0.5} for d in chosen[n_pos + 2:]]
    return labels


def write_release(root: Path) -> dict[str, list[str]]:
    """Write ``root/tip_of_the_tongue/...``; returns document id → passage ids."""
    rng = random.Random(20250908)
    folder = root / TASK
    (folder / "eval").mkdir(parents=True, exist_ok=True)
    (folder / "val").mkdir(parents=True, exist_ok=True)
    passages = {title: passages_of(title, rng) for title in TITLES}
    with (folder / "full_document_corpus.jsonl").open("w", encoding="utf-8") as f:
        for title in TITLES:
            f.write(json.dumps({"document_id": title, "document_content": f"# {title}\n\nA film.", "parent_id": None,
                                "metadata": "{}"}) + "\n")
    with (folder / "passage_corpus.jsonl").open("w", encoding="utf-8") as f:
        for title, pids in passages.items():
            for pid in pids:
                f.write(json.dumps({"document_id": pid, "document_content": f"# {title}\n\nScene {pid}.",
                                    "parent_id": title, "metadata": "{}"}) + "\n")

    def query(qid: str, full: list[dict]) -> dict:
        passage = [{"id": passages[d["id"]][0], "label": d["label"]} for d in full if d["id"] in passages]
        return {"query_id": qid, "query_content": f"the film I half remember, number {qid}",
                "instruction": "Given a vague recollection, retrieve the film's Wikipedia page.",
                "passage_qrels": passage, "passage_binary_qrels": [], "full_document_qrels": full,
                "use_max_p": True, "metadata": "{}"}

    evaluation = [query(f"tot-{i}", _labels(rng, rng.randint(1, 4))) for i in range(6)]
    # both Batman films relevant at different grades: first-':' grouping makes them one document
    evaluation[0]["full_document_qrels"] = [{"id": "Batman: Mask of the Phantasm", "label": 3.0},
                                            {"id": "Batman: Under the Red Hood", "label": 1.0},
                                            {"id": "Film 03", "label": 0.0}]
    evaluation[1]["full_document_qrels"].append({"id": MISSING, "label": 2.0})
    evaluation[2]["full_document_qrels"] = [{"id": "Film 07", "label": 0.5}, {"id": "Film 08", "label": 0.0}]
    validation = [query("tot-val-0", _labels(rng, 2))]
    for name, rows in (("eval", evaluation), ("val", validation)):
        with (folder / name / "query_labels.jsonl").open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    return passages


def fixed_run(passages: dict[str, list[str]], judged: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Every passage scored for every query (``judged``: query → its judged documents), one decimal, so ties are
    everywhere; a query's judged films and a few others are favoured."""
    rng = random.Random(7)
    run: dict[str, dict[str, float]] = {}
    for qid, docs in judged.items():
        favoured = set(rng.sample(TITLES, 5)) | set(docs) | {"Batman: Under the Red Hood"}
        run[qid] = {pid: round(rng.random() + (0.6 if title in favoured else 0.0), 1)
                    for title, pids in passages.items() for pid in pids}
    return run


# -- documents with many passages: one search of the usual depth reaches almost no exact document -------------------
SAGA = [f"Saga: Part {i}" for i in range(9)]  # 9 documents of 1,100 passages each, favoured by every query
SINGLES = [f"Short {i:04d}" for i in range(2500)]  # 2,500 documents of one passage each
LONG_QUERIES = {
    "test": {"long-0": {"Saga: Part 3": 2.0, SINGLES[5]: 1.0, SINGLES[6]: 0.5, SINGLES[7]: 0.0},
             "long-1": {SINGLES[100]: 3.0, SINGLES[1200]: 1.0, SINGLES[2400]: 2.0, "Saga: Part 0": 0.0},
             "long-2": {SINGLES[42]: 1.0, MISSING: 2.0, "Saga: Part 8": 1.0}},
    "validation": {"long-val-0": {SINGLES[9]: 1.0, "Saga: Part 1": 0.0}},
}


def write_long_documents_release(root: Path) -> dict[str, list[str]]:
    """Write ``root/tip_of_the_tongue/...`` (MaxP) with 9 documents of 1,100 passages and 2,500 of one passage
    (12,400 passages); returns document id → passage ids. A MaxP search of twice the average document's passages per
    document wanted (9,885 of 12,400 for 1,000 documents) then holds only the 9 long documents, ties at every
    score."""
    folder = root / TASK
    for sub in ("eval", "val"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    passages = {title: [f"{title}:{i}" for i in range(1100)] for title in SAGA}
    passages |= {title: [f"{title}:0"] for title in SINGLES}
    with (folder / "full_document_corpus.jsonl").open("w", encoding="utf-8") as f:
        for title in passages:
            f.write(json.dumps({"document_id": title, "document_content": f"# {title}", "parent_id": None,
                                "metadata": "{}"}) + "\n")
    with (folder / "passage_corpus.jsonl").open("w", encoding="utf-8") as f:
        for title, pids in passages.items():
            for pid in pids:
                f.write(json.dumps({"document_id": pid, "document_content": f"Scene {pid}.", "parent_id": title,
                                    "metadata": "{}"}) + "\n")
    for split, sub in (("test", "eval"), ("validation", "val")):
        with (folder / sub / "query_labels.jsonl").open("w", encoding="utf-8") as f:
            for qid, labels in LONG_QUERIES[split].items():
                full = [{"id": d, "label": v} for d, v in labels.items()]
                f.write(json.dumps({
                    "query_id": qid, "query_content": f"the long saga, number {qid}", "instruction": "Find it.",
                    "passage_qrels": [{"id": passages[d["id"]][0], "label": d["label"]} for d in full
                                      if d["id"] in passages],
                    "passage_binary_qrels": [], "full_document_qrels": full, "use_max_p": True, "metadata": "{}",
                }) + "\n")
    return passages


def long_documents_run(passages: dict[str, list[str]], queries: list[str]) -> dict[str, dict[str, float]]:
    """Every passage scored for every query: the long documents' passages in [0.8, 0.9] (two decimals: 11 scores
    shared by 9,900 passages), the short ones below 0.75 (three decimals, ties too)."""
    rng = random.Random(11)
    return {qid: {pid: round(0.8 + 0.1 * rng.random(), 2) if title in SAGA else round(0.75 * rng.random(), 3)
                  for title, pids in passages.items() for pid in pids}
            for qid in queries}
