"""Reading what `complexir run` prints and where it files results, for the tests that run it."""

from __future__ import annotations

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# where mteb files the packaged model's results: its name and the revision of mteb's ModelMeta for it
MODEL_DIR = "sentence-transformers__all-MiniLM-L6-v2/8b3219a92973c328a8e22fadcfa821b5dc75636a"


def table_rows(out: str) -> list[list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("benchmark "))
    return [line.split() for line in lines[start + 2:] if line.strip()]


def store_counts(out: str) -> dict[str, int]:
    """The embedding store line of a run: texts requested, unique, encoded, served from the store."""
    line = next(line for line in out.splitlines() if line.startswith("embedding store ("))
    fields = line.split("): ", 1)[1].split(", ")
    return {name.strip().removeprefix("texts "): int(value.replace(",", "")) for name, value in
            (f.rsplit(" ", 1) for f in fields)}
