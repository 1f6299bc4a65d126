"""`complexir build <benchmark> --source <Hub id>` against a Hub (the local server of tests/hub_server.py) holding
the upstream releases in their own format: the same data as the build from the local copy of the release, and a
card naming the Hub repo and the commit built from (a local build: the folder's name and content digest, never
this machine's path)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hub_server import client_env, run_client

from complexir.layout.card import read_front_matter

# end to end through the local Hub server, the clients in subprocesses
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def _upstream(name: str) -> Path:
    return FIXTURES / name / "demo_upstream"


def _data(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted((folder / "data").rglob("*"))
            if p.is_file()}


def _card_source(folder: Path) -> tuple[str, str]:
    """(source, revision) as the card body states them: `<source>` (revision `<revision>`)."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    return read_front_matter(folder / "README.md")["source_datasets"][0], text


@pytest.fixture(scope="module")
def releases(hub) -> dict[str, str]:
    """The upstream releases on the Hub, under their upstream ids; returns repo id -> commit."""
    cov = _upstream("coveragebench")
    return {
        "jfkback/crumb": hub.put_folder("dataset", "jfkback/crumb", _upstream("crumb")),
        "hazyresearch/LoCoV1-Documents": hub.put_folder(
            "dataset", "hazyresearch/LoCoV1-Documents", _upstream("locov1") / "LoCoV1-Documents"),
        "hazyresearch/LoCoV1-Queries": hub.put_folder(
            "dataset", "hazyresearch/LoCoV1-Queries", _upstream("locov1") / "LoCoV1-Queries"),
        # the release has no document text: corpus/ stands in for the external collections
        "hltcoe/coveragebench": hub.put_folder("dataset", "hltcoe/coveragebench", cov, skip=("corpus/",)),
        # IRSC has no release complexir can read: a dataset repo of pair files, as a user would push them
        "complexir-tester/irsc-pairs": hub.put_folder("dataset", "complexir-tester/irsc-pairs", _upstream("irsc")),
    }


def test_build_from_the_hub_equals_the_local_build(hub, releases, tmp_path):
    corpus = _upstream("coveragebench") / "corpus"
    builds = {  # benchmark -> (Hub source, extra arguments)
        "crumb": ("jfkback/crumb", ["--subset", "clinical_trial", "legal_qa", "paper_retrieval"]),
        "irsc": ("complexir-tester/irsc-pairs", []),
        "locov1": ("hazyresearch/LoCoV1-Documents,hazyresearch/LoCoV1-Queries", []),
        "coveragebench": ("hltcoe/coveragebench",  # the demo release lists all seven collections
                          ["--docs", *(f"{path.stem}=jsonl:{path}" for path in sorted(corpus.glob("*.jsonl")))]),
    }
    calls = []
    for name, (hub_id, extra) in builds.items():
        local_source = str(_upstream(name))
        for where, source in (("local", local_source), ("hub", hub_id)):
            calls.append(["build", name, "--source", source, "--out", str(tmp_path / where / name), "--no-progress",
                          *extra])
    code = (f"import json\nfrom complexir.cli.main import main\n"
            f"print(json.dumps([main(args) for args in {calls!r}]))")
    result = run_client(code, client_env(hub, tmp_path / "hf"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    assert json.loads(result.stdout.splitlines()[-1]) == [0] * len(calls), result.stderr[-4000:]

    for name, (hub_id, _) in builds.items():
        local, remote = tmp_path / "local" / name, tmp_path / "hub" / name
        assert _data(remote) == _data(local), name
        assert read_front_matter(remote / "README.md")["configs"] == read_front_matter(local / "README.md")["configs"]

        source, text = _card_source(remote)
        assert source == hub_id, name
        for repo in hub_id.split(","):  # the exact commit built from, for each upstream repo
            assert releases[repo] in text, (name, repo)
        assert "`unknown`" not in text, name

        source, text = _card_source(local)
        assert "demo_upstream" in source, (name, source)
        assert str(REPO) not in text and str(tmp_path) not in text, name  # no path of this machine
        assert "sha256:" in text, name  # the local release's content digest
