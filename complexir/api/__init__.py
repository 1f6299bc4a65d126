"""The typed Python API under the commands: the option objects (``options``) and ``run``, ``compare``, ``fuse``
(and ``release_runs``, ``fixed_runs``, what ``complexir run`` does with runs). Each command of ``complexir.cli``
parses its argv into these options and calls these functions; ``complexir`` exposes them by name."""

from complexir.api.compare import compare
from complexir.api.fuse import FuseResult, fuse
from complexir.api.options import CompareOptions, FuseOptions, RunOptions
from complexir.api.run import RunResult, run
from complexir.runs.fusion import FusionMethod
from complexir.systems.kinds import SystemKind
from complexir.systems.options import SearchOptions

__all__ = ["CompareOptions", "FuseOptions", "FuseResult", "FusionMethod", "RunOptions", "RunResult", "SearchOptions",
           "SystemKind", "compare", "fuse", "run"]
