"""What the ``ibench`` commands drawn by this package share (``ibench
export``, ``merge`` and ``report`` run ``python -m ibench.<command>``)."""

from __future__ import annotations

import sys
from typing import Callable, Optional, Union

Errors = Union[type[BaseException], tuple[type[BaseException], ...]]


def exit_code(work: Callable[[], Optional[str]], errors: Errors) -> int:
    """Does a command's ``work`` and returns the command's exit code: 0,
    with the line ``work`` returns (if any) on standard output; 1 when it
    raises one of ``errors``, which the command reports as one line on
    standard error (``error: ...``)."""
    try:
        said = work()
    except errors as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if said is not None:
        print(said)
    return 0
