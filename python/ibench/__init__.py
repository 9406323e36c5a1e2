"""ibench: deterministic database benchmarking.

The generators live in :mod:`ibench.gen`; every error ibench raises is an
:class:`ibench.Error` (bad arguments raise :class:`ibench.ConfigError`).
"""

from ibench import gen
from ibench._native import ConfigError, Error, FormatError, IoError, __version__, build_profile

__all__ = [
    "ConfigError",
    "Error",
    "FormatError",
    "IoError",
    "__version__",
    "build_profile",
    "gen",
]
