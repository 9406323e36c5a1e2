"""ibench: deterministic database benchmarking.

The generators live in :mod:`ibench.gen`; every error ibench raises is an
:class:`ibench.Error` (bad arguments raise :class:`ibench.ConfigError`).
"""

import importlib
from typing import TYPE_CHECKING, Any

from ibench import gen
from ibench._native import (
    ConfigError,
    DatabaseError,
    Error,
    FormatError,
    IoError,
    __version__,
    build_profile,
)
from ibench.campaign import campaign
from ibench.results import Results, load
from ibench.run import parameters, run

if TYPE_CHECKING:
    from ibench import plots, tables
    from ibench._explain import Explanation, explain

# matplotlib and scipy take over a second of CPU to import: the `ibench`
# command (this package's console script) needs neither, and a benchmark
# run one step per process, as the reference's scripts do, paid it per step.
_LAZY = ("plots", "tables")
_LAZY_NAMES = {"explain": "ibench._explain", "Explanation": "ibench._explain"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(f"ibench.{name}")
        globals()[name] = module
        return module
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ibench' has no attribute {name!r}")


__all__ = [
    "ConfigError",
    "DatabaseError",
    "Error",
    "FormatError",
    "IoError",
    "__version__",
    "build_profile",
    "campaign",
    "explain",
    "Explanation",
    "gen",
    "plots",
    "tables",
    "load",
    "parameters",
    "run",
    "Results",
]
