"""The background insert rate of the q steps against its SLA
(:func:`background_inserts`)."""

from __future__ import annotations

import pandas as pd

from ibench.tables._common import RED, RunsLike, Table, _fmt, _marked, _notes, _pivot, _steps, _valid


def _sla_missed(steps: pd.DataFrame) -> pd.DataFrame:
    return _pivot(steps, steps["sla_ok"].map(lambda v: 1.0 if v is False else 0.0)) == 1.0


def background_inserts(runs: RunsLike) -> Table:
    """The background insert rate achieved in each q step, SLA misses (below
    95% of the target, and every q step that did not run its course) in red."""
    steps = _steps(runs)
    q = steps[steps["step"].str.match(r"q[rp]\d+$")]
    frame = _pivot(q, _valid(q, q["ips"]))
    notes = _notes(q, q["ips"], _fmt)
    target = _pivot(q, q["target_ips"])
    missed = _sla_missed(q).reindex_like(frame).fillna(False)
    styler, notes = _marked(frame, notes, _fmt)
    styler = styler.apply(lambda _: missed.map(lambda m: RED if m else ""), axis=None)
    title = "Background inserts/s in q steps (target " + ", ".join(
        f"{s}: {t:,.0f}" for s, t in target.max().items()
    ) + "); red: SLA missed"
    return Table(title, frame, styler, notes)
