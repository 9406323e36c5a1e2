"""Runs sharing a label are repeats: each step's figures per group of runs
(:class:`_Repeats`) and frames with a row per group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import pandas as pd

from ibench.tables._common import _drop_empty, _fmt, _run_order


@dataclass(frozen=True)
class _Repeats:
    """One step of one group (the runs sharing a label): per run, in the
    order the runs are given, its id, its figure and the step's status."""

    run_ids: tuple[str, ...]
    values: tuple[float, ...]
    statuses: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when the step ran its course in every run."""
        return all(st == "ok" for st in self.statuses)

    @property
    def mean(self) -> float:
        """The mean figure over the runs; NaN unless every run's step ran its
        course (a mean over the survivors would be a number from other runs)."""
        return float(np.mean(self.values)) if self.ok else float("nan")

    def note(self, fmt: Callable[[object], str]) -> Optional[str]:
        """For a step that did not run its course: ``status: partial figure``
        (one run), ``status in k of n runs`` (repeats); None when it did."""
        bad = [(st, v) for st, v in zip(self.statuses, self.values) if st != "ok"]
        if not bad:
            return None
        status, value = bad[0]
        if len(self.statuses) > 1:
            return f"{status} in {len(bad)} of {len(self.statuses)} runs"
        return f"{status}: {fmt(value)}" if not pd.isna(value) else status


def _repeats(steps: pd.DataFrame, values: pd.Series) -> dict[tuple[str, str], _Repeats]:
    """Per (group, step): the figures ``values`` of the group's runs (a step
    run twice in one run counts once: its first time, as in the tables)."""
    rows = steps.assign(value=values).drop_duplicates(["run_id", "step"])
    out: dict[tuple[str, str], _Repeats] = {}
    for (group, step), part in rows.groupby(["group", "step"], sort=False):
        out[(str(group), str(step))] = _Repeats(
            tuple(part["run_id"]), tuple(float(v) for v in part["value"]), tuple(part["status"])
        )
    return out


def _run_counts(steps: pd.DataFrame) -> dict[str, int]:
    """Runs per group, groups in the order the runs are given."""
    counts = steps.drop_duplicates("run_id").groupby("group", sort=False).size()
    return {str(k): int(v) for k, v in counts.items()}


def _by_group(
    steps: pd.DataFrame, cells: dict[tuple[str, str], _Repeats], of: Callable[[_Repeats], object]
) -> pd.DataFrame:
    """A frame with a row per group, a column per step (benchmark order):
    ``of(cell)``, None where a group did not run a step."""
    groups, order = list(_run_counts(steps)), _run_order(steps)
    data = [[of(cells[(g, st)]) if (g, st) in cells else None for st in order] for g in groups]
    return pd.DataFrame(data, index=pd.Index(groups, name="label"), columns=order, dtype=object)


def _per_group(
    steps: pd.DataFrame,
    cells: dict[tuple[str, str], _Repeats],
    of: Callable[[_Repeats], float],
    groups: Optional[list[str]] = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``of(cell)`` per group (a row; only ``groups`` when given) and step,
    with each cell's note (:meth:`_Repeats.note`), without the steps where
    no row has a figure or a note."""
    frame = _by_group(steps, cells, of).astype(float)
    notes = _by_group(steps, cells, lambda c: c.note(_fmt))
    if groups is not None:
        frame, notes = frame.loc[groups], notes.loc[groups]
    return _drop_empty(frame, notes)
