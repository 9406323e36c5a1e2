"""Shared helpers for the Python tests."""

from __future__ import annotations

import os

import pytest

import ibench


def server_or_skip(dsn: str, what: str) -> str:
    """`dsn` when its server answers; outside CI a skip, in CI (CI=true) a failure."""
    try:
        ibench.run(db=dsn, steps=["l.i0"], rows_l_i0=10, out="/dev/null/never", progress=False)
    except ibench.IoError:
        return dsn  # the server answered; only the output directory was refused
    except ibench.Error as e:
        if os.environ.get("CI") == "true":
            raise AssertionError(f"{what} is not reachable and CI=true: {e}")
        pytest.skip(f"{what} is not reachable: {e}")
    return dsn
