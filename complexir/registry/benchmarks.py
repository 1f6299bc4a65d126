"""The registry of benchmark specs: every fact about a benchmark that more than one room needs, said once.

A :class:`BenchmarkSpec` names the benchmark, its folder (the ``complexir build`` name, the folder under a data
dir and the card template name), its subsets with their languages and scoring flags, its upstream Hub ids and
built Hub repo, its licence and citation, the measures its paper headlines, the demo it ships, and the two
modules that implement it: the loading script (upstream release -> standard layout) and the task module (MTEB
tasks). The loading scripts, the task modules, ``complexir build``/``run``/``report``, the demo builder and the
mteb hook all iterate :func:`all_specs`.

Adding a benchmark is a spec, a loading script, a task module, a card template and fixtures: register the spec
with :func:`register`, or from another distribution through the ``complexir.benchmarks`` entry point group
(``name = "package.module:SPEC"``), which every process (the plain ``mteb`` CLI too) reads.

This module is foundation: it names the implementing modules by their import path and imports none of them.

The BibTeX is written exactly as mteb's own citation check formats it (bibtexparser, two-space indent, one
line per field, trailing commas, no continuation lines): mteb's ``test_task_bibtex`` compares the two. A
field longer than a source line is split between two adjacent string literals, never inside the BibTeX.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

CRUMB_REFERENCE = "https://arxiv.org/abs/2509.07253"
CRUMB_CITATION = r"""@misc{killingback2025benchmarkinginformationretrievalmodels,
  archiveprefix = {arXiv},
  author = {Julian Killingback and Hamed Zamani},
  eprint = {2509.07253},
  primaryclass = {cs.IR},
  title = {Benchmarking Information Retrieval Models on Complex Retrieval Tasks},
  url = {https://arxiv.org/abs/2509.07253},
  year = {2025},
}"""

IRSC_REFERENCE = "https://arxiv.org/abs/2409.15763"
IRSC_CITATION = r"""@misc{lin2024irsc,
  archiveprefix = {arXiv},
  author = {Hai Lin and Shaoxiong Zhan and Junyou Su and Haitao Zheng and Hui Wang},
  eprint = {2409.15763},
  primaryclass = {cs.IR},
  title = {IRSC: A Zero-shot Evaluation Benchmark for Information Retrieval through Semantic Comprehension """ \
    r"""in Retrieval-Augmented Generation Scenarios},
  url = {https://arxiv.org/abs/2409.15763},
  year = {2024},
}"""

LOCOV1_REFERENCE = "https://arxiv.org/abs/2402.07440"
LOCOV1_CITATION = r"""@misc{saadfalcon2024benchmarking,
  archiveprefix = {arXiv},
  author = {Jon Saad-Falcon and Daniel Y. Fu and Simran Arora and Neel Guha and Christopher R{\'e}},
  eprint = {2402.07440},
  primaryclass = {cs.IR},
  title = {Benchmarking and Building Long-Context Retrieval Models with LoCo and M2-BERT},
  url = {https://arxiv.org/abs/2402.07440},
  year = {2024},
}"""

COVERAGEBENCH_REFERENCE = "https://arxiv.org/abs/2603.20034"
COVERAGEBENCH_CITATION = r"""@misc{samuel2026coveragebench,
  archiveprefix = {arXiv},
  author = {Saron Samuel and Andrew Yates and Dawn Lawrie and Ian Soboroff and Trevor Adriaanse """ \
    r"""and Benjamin Van Durme and Eugene Yang},
  eprint = {2603.20034},
  primaryclass = {cs.IR},
  title = {CoverageBench: Evaluating Information Coverage across Tasks and Domains},
  url = {https://arxiv.org/abs/2603.20034},
  year = {2026},
}"""


# -- the spec types -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SubsetSpec:
    """One subset of a benchmark (one MTEB task, or one task of several settings).

    ``name`` is the layout subset (``data/<name>/``), ``title`` the CamelCase part of the task name.
    """

    name: str
    title: str
    description: str
    domains: tuple[str, ...] = ()
    dates: tuple[str, str] = ("2000-01-01", "2025-12-31")
    task_subtypes: tuple[str, ...] = ()
    #: MTEB ``eval_langs`` of the subset's task (benchmarks with settings take theirs from each setting)
    languages: tuple[str, ...] = ("eng-Latn",)
    #: card languages (ISO 639-1) of the documents beyond English (CoverageBench's NeuCLIR searches zh, fa, ru)
    document_languages: tuple[str, ...] = ()
    #: the upstream's own name for the subset where it differs (a CRUMB task's folder in the release)
    upstream_name: str | None = None
    #: where the subset's document text lives upstream, when not in the release itself (CoverageBench): the
    #: documents its paper scored (for NeuCLIR 2024 and RAGTIME 2025 their machine translation into English)
    documents: str | None = None
    #: the same collection in its original languages, where ``documents`` is a translation (``--docs-language
    #: native``), with the card languages of that text
    native_documents: str | None = None
    native_languages: tuple[str, ...] = ()
    # CRUMB's scoring flags: a distinct full-document setting; passage runs collapsed to documents (MaxP) and
    # scored on the full-document qrels; recall/precision/MRR on the binary qrels
    full_document: bool = False
    maxp: bool = False
    binary_qrels: bool = False


@dataclass(frozen=True)
class Setting:
    """A language setting that every subset of a benchmark comes in (IRSC's ``en``, ``zh``, ``en-zh``, ``zh-en``):
    the layout subset is ``<subset>-<setting>``, the MTEB subset is the setting."""

    name: str
    languages: tuple[str, ...]  # MTEB languages, query side first


@dataclass(frozen=True)
class BenchmarkSpec:
    """Everything about one benchmark that its loading script, its tasks and the CLI share."""

    name: str  # the mteb.Benchmark name, e.g. "CRUMB"
    folder: str  # `complexir build <folder>`, <data dir>/<folder>/, cards/<folder>.md
    pretty_name: str
    subsets: tuple[SubsetSpec, ...]
    upstream: tuple[str, ...]  # Hub ids of the upstream release, in the order the loading script reads them
    hub_id: str  # the built standard-layout repo the tasks read when no local data dir is given
    license: str  # Hub licence id of the upstream
    citation: str
    reference: str
    headline_measures: tuple[str, ...]  # MTEB score keys the report shows first, as the paper reports them
    loading_script: str  # module with add_arguments(parser) and build(args)
    task_module: str  # module with TASKS (task classes) and BENCHMARK (an mteb.Benchmark)
    hub_revision: str = "main"
    settings: tuple[Setting, ...] = ()
    #: `complexir build` arguments of the demo, beyond --source/--out (the demo's upstream files live in
    #: tests/fixtures/<folder>/demo_upstream/ unless demo_source says otherwise)
    demo_build_args: tuple[str, ...] = ()
    demo_source: str | None = None
    #: the subsets a plain ``complexir run`` (no --benchmark, no --task) scores on the demo, so that the default
    #: job stays short; None: every subset the demo holds. The demo holds every subset: --benchmark/--task reach
    #: the others.
    demo_run_subsets: tuple[str, ...] | None = None
    card_template: str | None = None  # a template file; default: cards/<folder>.md
    #: the measures the official evaluator reports by default (ir_measures names, e.g. ``"RR"``, ``"nDCG@5"``):
    #: the tasks report each one with per-query values, beyond MTEB's own at their cutoffs
    official_measures: tuple[str, ...] = ()
    #: the task variants every subset comes in beside its plain task, as suffixes of the task name (CoverageBench's
    #: ``Rerank``); CRUMB's full-document setting is its subsets' ``full_document`` flag instead
    task_variants: tuple[str, ...] = ()

    def subset(self, name: str) -> SubsetSpec:
        for subset in self.subsets:
            if subset.name == name:
                return subset
        raise KeyError(f"{self.name} has no subset {name!r}; it has {self.subset_names()}")

    def subset_names(self, **flags: bool) -> tuple[str, ...]:
        """Subset names in spec order, those whose flags match (``subset_names(maxp=True)``)."""
        return tuple(s.name for s in self.subsets if all(getattr(s, f) == v for f, v in flags.items()))

    def task_name(self, subset: SubsetSpec, variant: str = "") -> str:
        """The MTEB task name of ``subset`` (and ``variant``: one of ``task_variants`` or
        :data:`FULL_DOCUMENT_VARIANT`): ``<name><subset title><variant>``, e.g. ``CRUMBLegalQAFullDocument``."""
        return f"{self.name}{subset.title}{variant}"

    def task_names(self) -> tuple[str, ...]:
        """Every MTEB task name of this benchmark, in its task module's order, known without importing it (or mteb):
        ``complexir run`` checks ``--task`` against these before the heavy imports, and ``spec_metadata`` refuses
        a task named otherwise."""
        plain = [self.task_name(s) for s in self.subsets]
        full = [self.task_name(s, FULL_DOCUMENT_VARIANT) for s in self.subsets if s.full_document]
        variants = [self.task_name(s, v) for v in self.task_variants for s in self.subsets]
        return (*plain, *full, *variants)

    def layout_subsets(self) -> tuple[str, ...]:
        """Every layout subset a full build writes (settings expanded)."""
        if self.settings:
            return tuple(f"{s.name}-{setting.name}" for s in self.subsets for setting in self.settings)
        return self.subset_names()

    def in_default_demo_run(self, subsets: tuple[str, ...] | list[str]) -> bool:
        """Whether a plain ``complexir run`` on the demos scores a task that reads ``subsets`` (its
        ``upstream_subsets()``): all of them are among ``demo_run_subsets``, or that is None."""
        return self.demo_run_subsets is None or set(subsets) <= set(self.demo_run_subsets)


#: the task-name suffix of a subset's full-document setting (CRUMB's subsets with ``full_document``)
FULL_DOCUMENT_VARIANT = "FullDocument"


# -- the registry -------------------------------------------------------------------------------------------------
ENTRY_POINT_GROUP = "complexir.benchmarks"

_registered: dict[str, BenchmarkSpec] = {}
_entry_points_read = False
_listeners: list[Callable[[BenchmarkSpec], None]] = []


def on_register(listener: Callable[[BenchmarkSpec], None]) -> None:
    """Call ``listener(spec)`` for every benchmark registered from now on (the mteb hook keeps mteb's task
    registry in step with this one)."""
    _listeners.append(listener)


def register(spec: BenchmarkSpec) -> BenchmarkSpec:
    """Add a benchmark to the registry (idempotent for the same spec; another spec under a taken name fails)."""
    if not isinstance(spec, BenchmarkSpec):
        raise TypeError(f"register() takes a BenchmarkSpec, got {type(spec).__name__}")
    for known in _registered.values():
        if known != spec and (known.name == spec.name or known.folder == spec.folder):
            raise ValueError(f"benchmark {spec.name!r} (folder {spec.folder!r}) clashes with the registered "
                             f"{known.name!r} (folder {known.folder!r})")
    new = _registered.get(spec.folder) != spec
    _registered[spec.folder] = spec
    if new:
        for listener in list(_listeners):
            listener(spec)
    return spec


def unregister(folder: str) -> None:
    """Remove a benchmark registered with :func:`register` (a test's toy benchmark, when the test is done)."""
    _registered.pop(folder, None)


def _read_entry_points() -> None:
    """Register the specs other distributions declare (once per process)."""
    global _entry_points_read
    if _entry_points_read:
        return
    _entry_points_read = True
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        register(entry.load())


def all_specs() -> tuple[BenchmarkSpec, ...]:
    """Every registered benchmark: the four built in (in table order), then those registered later."""
    _read_entry_points()
    return tuple(_registered.values())


def get_spec(name: str) -> BenchmarkSpec:
    """A benchmark by its folder name or its benchmark name, case-insensitively."""
    for spec in all_specs():
        if name.lower() in (spec.folder.lower(), spec.name.lower()):
            return spec
    raise KeyError(f"unknown benchmark {name!r}; known: {[s.name for s in all_specs()]}")


def task_benchmarks() -> dict[str, str]:
    """Every registered task name → its benchmark's name (from the specs alone: nothing is imported)."""
    return {task: spec.name for spec in all_specs() for task in spec.task_names()}


# -- the four benchmarks ------------------------------------------------------------------------------------------
_CRUMB_DATES = ("2023-01-01", "2025-09-08")

CRUMB = register(BenchmarkSpec(
    name="CRUMB", folder="crumb", pretty_name="CRUMB",
    subsets=(
        SubsetSpec("clinical_trial", "ClinicalTrial",
                   "Patient case descriptions; retrieve the clinical trials the patient is eligible for.",
                   ("Medical", "Written"), _CRUMB_DATES, ("Article retrieval",), full_document=True, maxp=True),
        SubsetSpec("code_retrieval", "CodeRetrieval",
                   "Multi-constraint programming problems; retrieve verified code solutions.",
                   ("Programming", "Written"), _CRUMB_DATES, ("Article retrieval",)),
        SubsetSpec("legal_qa", "LegalQA",
                   "Housing law questions tied to a US state; retrieve the state statutes that answer them.",
                   ("Legal", "Written"), _CRUMB_DATES, ("Article retrieval",), full_document=True),
        SubsetSpec("paper_retrieval", "PaperRetrieval",
                   "Multi-aspect descriptions of a wanted computer-science paper; retrieve matching abstracts "
                   "(DORIS-MAE).", ("Academic", "Written"), _CRUMB_DATES, ("Article retrieval",),
                   upstream_name="scientific_paper", binary_qrels=True),
        SubsetSpec("set_operation_entity_retrieval", "SetOperationEntityRetrieval",
                   "Entity queries with implicit set operations (and, or, not); retrieve the Wikipedia pages of the "
                   "matching entities (QUEST).", ("Encyclopaedic", "Written"), _CRUMB_DATES, ("Article retrieval",),
                   full_document=True, maxp=True),
        SubsetSpec("stack_exchange", "StackExchange",
                   "StackExchange questions that need reasoning; retrieve the web pages that help answer them.",
                   ("Web", "Written"), _CRUMB_DATES, ("Article retrieval",), full_document=True),
        SubsetSpec("theorem_retrieval", "TheoremRetrieval",
                   "Mathematical problems; retrieve the theorems that solve them.",
                   ("Academic", "Written"), _CRUMB_DATES, ("Article retrieval",)),
        SubsetSpec("tip_of_the_tongue", "TipOfTheTongue",
                   "Vague, multi-detail recollections of a film or TV series; retrieve its Wikipedia page.",
                   ("Encyclopaedic", "Entertainment", "Written"), _CRUMB_DATES, ("Article retrieval",),
                   full_document=True, maxp=True),
    ),
    upstream=("jfkback/crumb",), hub_id="complexir/crumb", license="cc-by-nc-4.0",
    citation=CRUMB_CITATION, reference=CRUMB_REFERENCE, headline_measures=("ndcg_at_10", "recall_at_100"),
    loading_script="complexir.loading_scripts.crumb", task_module="complexir.tasks.crumb",
    demo_build_args=("--no-progress",),
    demo_run_subsets=("clinical_trial", "legal_qa", "paper_retrieval"),
    # crumb_eval's default measures (its evaluate(metrics=None)); RR is uncut: over the whole ranking retrieved
    official_measures=("nDCG@10", "nDCG@5", "P@10", "P@5", "R@10", "RR", "R@1000", "R@100", "RR@10"),
))

IRSC = register(BenchmarkSpec(
    name="IRSC", folder="irsc", pretty_name="IRSC",
    subsets=(
        SubsetSpec("query", "Query", "the query is a question, the relevant content the passage that answers it",
                   ("Web", "Encyclopaedic", "Written"), ("2024-01-01", "2024-09-24"), ("Question answering",)),
        SubsetSpec("title", "Title", "the query is a title, the relevant content the article it heads",
                   ("News", "Academic", "Written"), ("2024-01-01", "2024-09-24")),
        SubsetSpec("part", "Part", "the query is a fragment cut from a paragraph, the relevant content the whole "
                   "paragraph", ("Web", "Encyclopaedic", "Written"), ("2024-01-01", "2024-09-24")),
        SubsetSpec("keyword", "Keyword", "the query is a few keywords, the relevant content the text they were "
                   "drawn from", ("Academic", "Medical", "Written"), ("2024-01-01", "2024-09-24")),
        SubsetSpec("summary", "Summary", "the query is a summary, the relevant content the document it summarises",
                   ("News", "Written"), ("2024-01-01", "2024-09-24")),
    ),
    settings=(Setting("en", ("eng-Latn",)), Setting("zh", ("cmn-Hans",)),
              Setting("en-zh", ("eng-Latn", "cmn-Hans")), Setting("zh-en", ("cmn-Hans", "eng-Latn"))),
    upstream=(), hub_id="complexir/irsc", license="other",  # mixed upstream licences, see the dataset card
    citation=IRSC_CITATION, reference=IRSC_REFERENCE, headline_measures=("recall_at_10", "map_at_10", "ndcg_at_10"),
    loading_script="complexir.loading_scripts.irsc", task_module="complexir.tasks.irsc",
    demo_build_args=("--no-progress",),
))

LOCOV1 = register(BenchmarkSpec(
    name="LoCoV1", folder="locov1", pretty_name="LoCoV1",
    subsets=(
        SubsetSpec("summ_screen_fd", "SummScreenFD",
                   "Find the TV episode transcript (SummScreenFD) that a summary describes.",
                   ("Spoken", "Fiction"), ("2000-01-01", "2021-12-31"), ("Article retrieval",)),
        SubsetSpec("gov_report", "GovReport", "Find the US government report (GAO, CRS) that a summary describes.",
                   ("Government", "Written"), ("1995-01-01", "2021-12-31"), ("Article retrieval",)),
        SubsetSpec("qmsum", "QMSum", "Find the meeting transcript (QMSum) that a query-focused summary comes from.",
                   ("Spoken",), ("2000-01-01", "2021-12-31"), ("Article retrieval",)),
        SubsetSpec("qasper_title", "QasperTitle", "Find the NLP paper (Qasper) that has the given title.",
                   ("Academic", "Written"), ("2010-01-01", "2021-12-31"), ("Article retrieval",)),
        SubsetSpec("qasper_abstract", "QasperAbstract", "Find the NLP paper (Qasper) that has the given abstract.",
                   ("Academic", "Written"), ("2010-01-01", "2021-12-31"), ("Article retrieval",)),
        SubsetSpec("multifieldqa", "MultiFieldQA",
                   "Find the long document (MultiFieldQA, LongBench) that answers a question.",
                   ("Written", "Academic", "Legal"), ("2010-01-01", "2023-12-31"), ("Question answering",)),
        SubsetSpec("2wikimqa", "TwoWikiMQA",
                   "Find the Wikipedia context (2WikiMultihopQA, LongBench) of a multi-hop question.",
                   ("Encyclopaedic", "Written"), ("2010-01-01", "2023-12-31"), ("Question answering",)),
        SubsetSpec("passage_retrieval", "PassageRetrieval",
                   "Find the Wikipedia passage (LongBench) that a summary describes.",
                   ("Encyclopaedic", "Written"), ("2010-01-01", "2023-12-31"), ("Article retrieval",)),
        SubsetSpec("courtlistener_HTML", "CourtListenerHTML",
                   "Find the US court opinion, in HTML, that a case summary describes.",
                   ("Legal", "Written"), ("1950-01-01", "2023-12-31"), ("Article retrieval",)),
        SubsetSpec("courtlistener_Plain_Text", "CourtListenerPlainText",
                   "Find the US court opinion, in plain text, that a case summary describes.",
                   ("Legal", "Written"), ("1950-01-01", "2023-12-31"), ("Article retrieval",)),
        SubsetSpec("legal_case_reports", "LegalCaseReports",
                   "Find the Australian legal case report that a summary describes.",
                   ("Legal", "Written"), ("2006-01-01", "2009-12-31"), ("Article retrieval",)),
        SubsetSpec("stackoverflow", "StackOverflow",
                   "Find the Stack Overflow thread that answers a programming question.",
                   ("Programming", "Written"), ("2008-01-01", "2023-12-31"), ("Question answering",)),
    ),
    upstream=("hazyresearch/LoCoV1-Documents", "hazyresearch/LoCoV1-Queries"), hub_id="complexir/locov1",
    license="apache-2.0", citation=LOCOV1_CITATION, reference=LOCOV1_REFERENCE,
    headline_measures=("ndcg_at_10", "doc_token_share_seen"),
    loading_script="complexir.loading_scripts.locov1", task_module="complexir.tasks.locov1",
    demo_build_args=("--no-progress",),
    # the three whose demo documents are long (over 1,000 words): the truncation the paper is about shows
    demo_run_subsets=("gov_report", "qasper_abstract", "stackoverflow"),
))

#: the task-name suffix of CoverageBench's reranking tasks (the baseline candidates of ``<subset>-top_ranked``)
RERANK_VARIANT = "Rerank"

COVERAGEBENCH = register(BenchmarkSpec(
    name="CoverageBench", folder="coveragebench", pretty_name="CoverageBench",
    subsets=(
        SubsetSpec("cast2020", "CAsT2020",
                   "TREC CAsT 2020 conversational topics over MS MARCO and Wikipedia passages",
                   ("Web", "Encyclopaedic"), ("2020-01-01", "2020-12-31"), documents="irds:trec-cast/v1/2020"),
        SubsetSpec("fair_ranking_2022", "FairRanking2022",
                   "TREC Fair Ranking 2022 topics over English Wikipedia articles",
                   ("Encyclopaedic",), ("2022-01-01", "2022-12-31"), documents="irds:trec-fair/2022"),
        # NeuCLIR's English report requests; the paper scored the English machine translation of the Chinese,
        # Persian and Russian news (neuclir/neuclir1's *_mt_eng splits), the native text is ir_datasets' neuclir/1/multi
        SubsetSpec("neuclir_2024", "NeuCLIR2024",
                   "TREC NeuCLIR 2024 report requests over Chinese, Persian and Russian news (English translations "
                   "by default)", ("News",), ("2024-01-01", "2024-12-31"),
                   languages=("eng-Latn", "zho-Hans", "fas-Arab", "rus-Cyrl"),
                   documents="hf:neuclir/neuclir1?splits=fas_mt_eng,rus_mt_eng,zho_mt_eng",
                   native_documents="irds:neuclir/1/multi", native_languages=("zh", "fa", "ru")),
        # the TREC RAG 2024 segmented MS MARCO v2.1 corpus is in no ir_datasets release yet (its issue #267): the
        # build asks for the unpacked folder (--docs rag_2024=DIR) unless a later ir_datasets knows this id
        SubsetSpec("rag_2024", "RAG2024", "TREC RAG 2024 questions over MS MARCO v2.1 segments",
                   ("Web",), ("2024-01-01", "2024-12-31"), documents="irds:msmarco-segment-v2.1"),
        # RAGTIME1 holds each language twice, native (<lang>-docs.jsonl) and translated (<lang>-trans.jsonl, ids a
        # subset of the native ones): single files are read, so that the two never mix
        SubsetSpec("ragtime_2025", "RAGTIME2025", "TREC RAGTIME 2025 report requests over multilingual news "
                   "(English and English translations of Arabic, Chinese and Russian by default)",
                   ("News",), ("2025-01-01", "2025-12-31"),
                   languages=("eng-Latn", "arb-Arab", "zho-Hans", "rus-Cyrl"),
                   documents="hf:trec-ragtime/ragtime1?files=eng-docs.jsonl,arb-trans.jsonl,rus-trans.jsonl,"
                             "zho-trans.jsonl",
                   native_documents="hf:trec-ragtime/ragtime1?files=eng-docs.jsonl,arb-docs.jsonl,rus-docs.jsonl,"
                                    "zho-docs.jsonl", native_languages=("ar", "zh", "ru")),
        SubsetSpec("crux_multinews", "CRUXMultiNews", "CRUX multi-document summarisation topics from Multi-News",
                   ("News",), ("2019-01-01", "2025-12-31"), documents="hf:DylanJHJ/crux-mds-corpus"),
        SubsetSpec("crux_duc04", "CRUXDUC04", "CRUX multi-document summarisation topics from DUC 2004",
                   ("News",), ("2004-01-01", "2025-12-31"), documents="hf:DylanJHJ/crux-mds-corpus"),
    ),
    upstream=("hltcoe/coveragebench",), hub_id="complexir/coveragebench", license="apache-2.0",
    citation=COVERAGEBENCH_CITATION, reference=COVERAGEBENCH_REFERENCE,
    headline_measures=("alpha_ndcg_at_20", "strecall_at_20", "ndcg_at_20"),
    loading_script="complexir.loading_scripts.coveragebench", task_module="complexir.tasks.coveragebench",
    task_variants=(RERANK_VARIANT,),
    # the collections' text stands in as small local files (relative to the demo folder)
    demo_build_args=("--docs", *(f"{name}=jsonl:corpus/{name}.jsonl" for name in (
        "cast2020", "fair_ranking_2022", "neuclir_2024", "rag_2024", "ragtime_2025", "crux_multinews", "crux_duc04")),
        "--no-progress"),
    demo_run_subsets=("cast2020", "crux_duc04"),
))
