"""What the loading scripts and the MTEB tasks of each benchmark both need to say about it, said once:
its paper: citation and reference."""

from __future__ import annotations

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
  title = {IRSC: A Zero-shot Evaluation Benchmark for Information Retrieval through Semantic Comprehension
           in Retrieval-Augmented Generation Scenarios},
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
  author = {Saron Samuel and Andrew Yates and Dawn Lawrie and Ian Soboroff and Trevor Adriaanse
            and Benjamin Van Durme and Eugene Yang},
  eprint = {2603.20034},
  primaryclass = {cs.IR},
  title = {CoverageBench: Evaluating Information Coverage across Tasks and Domains},
  url = {https://arxiv.org/abs/2603.20034},
  year = {2026},
}"""
