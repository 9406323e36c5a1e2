"""The run-to-run spread of repeats (:func:`noise`)."""

from __future__ import annotations

from typing import Optional

import pandas as pd

from ibench import _native, stats
from ibench.tables._common import RunsLike, Table, _loaded, _marked, _steps
from ibench.tables._relative import relative
from ibench.tables._repeats import _per_group, _Repeats, _repeats, _run_counts
from ibench.tables._throughput import _throughput


def _cv(cell: _Repeats) -> float:
    """The coefficient of variation of a group's figures in a step; NaN
    for a single run, a step that did not run its course, a zero mean."""
    if len(cell.values) < 2 or not cell.ok:
        return float("nan")
    try:
        return stats.coefficient_of_variation(cell.values)
    except ValueError:
        return float("nan")


def _pct(v: object) -> str:
    """A fraction as a percent: 0.0123 -> 1.2%, 0.0004 -> 0.04%."""
    if not isinstance(v, float) or pd.isna(v):
        return ""
    return f"{100 * v:.1f}%" if abs(v) >= 0.01 else f"{100 * v:.2f}%"


def _noise_warnings(ratios: pd.DataFrame, cv: pd.DataFrame, base: str) -> list[str]:
    """A line per step where a label's or the base's run-to-run spread (CV)
    exceeds that label's difference from the base, |ratio − 1|."""
    lines = []
    for step in cv.columns:
        said = []
        for group in ratios.index:
            ratio = ratios.at[group, step] if step in ratios.columns else float("nan")
            if group == base or pd.isna(ratio):
                continue
            diff = abs(float(ratio) - 1.0)
            over = [
                f"{name} ({_pct(cv.at[name, step])})"
                for name in (group, base)
                if name in cv.index and not pd.isna(cv.at[name, step]) and cv.at[name, step] > diff
            ]
            if over:
                said.append(f"{group} differs from {base} by {_pct(diff)}, less than the CV of {' and '.join(over)}")
        if said:
            lines.append(f"{step}: the run-to-run spread exceeds the difference reported: {'; '.join(said)}")
    return lines


def noise(runs: RunsLike, base: Optional[str] = None) -> Table:
    """Run-to-run spread: per label with 2 or more runs (repeats) and step,
    the coefficient of variation of the runs' throughput figures (those of
    :func:`throughput`; :func:`ibench.stats.coefficient_of_variation`: sample
    standard deviation over the mean), a fraction in ``frame``, a percent in
    HTML and Markdown. ``warnings`` names each step where a label's CV, or
    the ``base``'s (default the first label, as in :func:`relative`), exceeds
    the difference :func:`relative` reports between them (|ratio − 1|): there
    the difference is within the noise. A step that did not run its course
    in some repeat shows its status. Raises ConfigError when no label has
    repeats."""
    loaded = _loaded(runs)
    steps = _steps(loaded)
    counts = _run_counts(steps)
    repeated = [g for g, n in counts.items() if n >= 2]
    if not repeated:
        raise _native.ConfigError(
            "invalid runs: no label has 2 or more runs; the run-to-run spread needs repeats (runs sharing a --label)"
        )
    cells = _repeats(steps, _throughput(steps))
    frame, notes = _per_group(steps, cells, _cv, repeated)
    ratios = relative(loaded, base, ci=None).frame
    base = base if base is not None else str(ratios.index[0])
    styler, notes = _marked(frame, notes, _pct)
    said = ", ".join(f"{g}: {counts[g]} runs" for g in repeated)
    title = f"Run-to-run spread: coefficient of variation of the throughput over repeats ({said})"
    return Table(title, frame, styler, notes, warnings=_noise_warnings(ratios, frame, base), fmt=_pct)
