"""ibench: deterministic database benchmarking.

The generators live in :mod:`ibench.gen`; every error ibench raises is an
:class:`ibench.Error` (bad arguments raise :class:`ibench.ConfigError`).
"""

from ibench import gen, plots, tables
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
from ibench.run import run

__all__ = [
    "ConfigError",
    "DatabaseError",
    "Error",
    "FormatError",
    "IoError",
    "__version__",
    "build_profile",
    "campaign",
    "gen",
    "plots",
    "tables",
    "load",
    "run",
    "Results",
]
