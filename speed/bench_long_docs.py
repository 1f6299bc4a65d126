"""Memory of the chunked long-document mode (``complexir.systems.long_docs.MaxPSearchWrapper``) on thousands
of long documents.

    python speed/bench_long_docs.py [--docs 2000] [--words 20000] [--queries 100] [--doc-batch 64]

Not a test: it prints the resident memory of the process as the search advances through the corpus, and its
peak. Bounded memory shows as a flat RSS from the first quarter of the corpus to the last, far below what
holding every window's embedding (or every document's text) would cost.

To run in minutes on two CPU cores it uses a **tiny random-init model**: a whitespace word-level tokenizer
with max_seq_length 256 (built in a temporary folder) sets the windows, exactly as a real model's would. By
default (``--encoder bytes``) the window texts are then embedded **model-free**, as 256-bin byte histograms,
so the run measures the wrapper (tokenizing, windowing, batching, MaxP reduction, top-k merge) and not a
network's speed; ``--encoder tiny-bert`` instead runs a random-init 1-layer, 32-dimensional BERT through
sentence-transformers and MTEB's encoder wrapper (the code path of real models; ~10x slower, use
``--docs 200``). Scores are meaningless either way. The synthetic corpus (random words from a 2,000-word
vocabulary) is written to an Arrow file on disk and memory-mapped, as MTEB's loader does.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np


def rss_mib(field: str = "VmRSS") -> float:
    """Current resident memory of this process, in MiB: all of it (VmRSS) or its heap alone (RssAnon, which
    leaves out the pages of the memory-mapped corpus file that reading it brings in)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def tiny_model(folder: Path, vocab: list[str]):
    """A random-init 1-layer BERT with a word-level tokenizer, as a SentenceTransformer (max_seq_length 256)."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import WordLevel
    from tokenizers.processors import TemplateProcessing
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    ids = {tok: i for i, tok in enumerate(specials + vocab)}
    backend = Tokenizer(WordLevel(ids, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.post_processor = TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]",
                                        cls_token="[CLS]", sep_token="[SEP]", model_max_length=256)
    config = BertConfig(vocab_size=len(ids), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=256)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    transformer = models.Transformer(str(folder), max_seq_length=256)
    pooling = models.Pooling(transformer.get_word_embedding_dimension(), pooling_mode="mean")
    return SentenceTransformer(modules=[transformer, pooling], device="cpu")


class ByteHistogramEncoder:
    """A model-free MTEB encoder: each text is the histogram of its UTF-8 bytes; cosine similarity.

    ``model`` is the tiny SentenceTransformer, kept only so the long-document wrapper finds its tokenizer and
    max_seq_length.
    """

    def __init__(self, st_model, meta):
        self.model = st_model
        self.mteb_model_meta = meta

    def encode(self, inputs, **kwargs):
        texts = [t for batch in inputs for t in batch["text"]]
        return np.stack([np.bincount(np.frombuffer(t.encode(), np.uint8), minlength=256) for t in texts]
                        ).astype(np.float32)

    def similarity(self, a, b):
        a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-9)
        b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-9)
        return a @ b.T


def synthetic_corpus(folder: Path, n_docs: int, n_words: int, vocab: list[str], seed: int = 0):
    """An on-disk (memory-mapped) corpus of ``n_docs`` documents of ``n_words`` random words."""
    from datasets import Dataset

    words = np.array(vocab)

    def rows():
        rng = np.random.default_rng(seed)
        for i in range(n_docs):
            yield {"id": f"doc{i}", "title": "", "text": " ".join(words[rng.integers(0, len(words), n_words)])}

    return Dataset.from_generator(rows, cache_dir=str(folder), keep_in_memory=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--words", type=int, default=20000, help="words per document")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--doc-batch", type=int, default=64, help="documents windowed and encoded at once")
    parser.add_argument("--batch-size", type=int, default=256, help="windows per encoder batch")
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--encoder", choices=("bytes", "tiny-bert"), default="bytes",
                        help="bytes: model-free byte histograms (default, fast); tiny-bert: random-init 1-layer BERT")
    args = parser.parse_args()

    import mteb
    from datasets import Dataset, disable_progress_bars
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    from complexir.systems.long_docs import MaxPSearchWrapper
    from complexir.tasks.locov1 import LoCoV1GovReport

    disable_progress_bars()
    vocab = [f"w{i:04d}" for i in range(2000)]
    with tempfile.TemporaryDirectory() as tmp:
        st = tiny_model(Path(tmp) / "model", vocab)
        meta = mteb.models.ModelMeta.create_empty(overwrites={"name": f"bench/{args.encoder}"})
        if args.encoder == "tiny-bert":
            encoder = SentenceTransformerEncoderWrapper(st)
            encoder.mteb_model_meta = meta
        else:
            encoder = ByteHistogramEncoder(st, meta)
        start = time.perf_counter()
        corpus = synthetic_corpus(Path(tmp) / "corpus", args.docs, args.words, vocab)
        print(f"corpus: {args.docs:,} documents × {args.words:,} words on disk "
              f"({corpus.data.nbytes / 2**20:,.0f} MiB of text) in {time.perf_counter() - start:.0f}s")
        rng = np.random.default_rng(1)
        queries = Dataset.from_dict({"id": [f"q{i}" for i in range(args.queries)],
                                     "text": [" ".join(rng.choice(vocab, 12)) for _ in range(args.queries)]})

        wrapper = MaxPSearchWrapper(encoder, doc_batch_size=args.doc_batch)
        samples: list[tuple[int, float, float]] = []  # (windows encoded, RSS, heap RSS) after each batch
        inner_encode = encoder.encode

        def sampling_encode(inputs, **kwargs):
            out = inner_encode(inputs, **kwargs)
            if kwargs.get("prompt_type") == "document":
                samples.append((wrapper.windows_encoded + len(inputs.dataset), rss_mib(), rss_mib("RssAnon")))
            return out

        encoder.encode = sampling_encode
        kwargs = dict(task_metadata=LoCoV1GovReport.metadata, hf_split="test", hf_subset="default",
                      encode_kwargs={"batch_size": args.batch_size, "show_progress_bar": False})
        baseline, baseline_anon = rss_mib(), rss_mib("RssAnon")
        start = time.perf_counter()
        wrapper.index(corpus, **kwargs)
        results = wrapper.search(queries, top_k=args.top_k, **kwargs)
        seconds = time.perf_counter() - start

    windows = wrapper.windows_encoded
    assert all(len(r) == min(args.top_k, args.docs) for r in results.values())
    print(f"searched {args.queries} queries over {windows:,} windows ({wrapper.window_tokens} tokens, "
          f"{wrapper.overlap_tokens} overlap) in {seconds:.0f}s ({windows / seconds:,.0f} windows/s)")
    print(f"RSS before search: {baseline:,.0f} MiB (heap {baseline_anon:,.0f} MiB)")
    n = len(samples)
    for frac in (0.25, 0.5, 0.75, 1.0):
        done, rss, anon = samples[max(0, int(frac * n) - 1)]
        print(f"  after {frac:>4.0%} of the document batches ({done:>9,} windows encoded): "
              f"RSS {rss:,.0f} MiB, heap {anon:,.0f} MiB")
    dim = 256 if args.encoder == "bytes" else 32
    print(f"peak RSS: {peak_rss_mib():,.0f} MiB")
    print(f"for scale: all window embeddings of the corpus would be {windows * dim * 4 / 2**20:,.0f} MiB at this "
          f"model's {dim} dimensions ({windows * 1024 * 4 / 2**20:,.0f} MiB at 1,024); "
          f"a full score matrix {args.queries * args.docs * 4 / 2**20:,.1f} MiB")


if __name__ == "__main__":
    main()
