"""What differs between the runs: host facts, ibench's build and server
settings (:func:`what_differs`, :func:`differences`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import pandas as pd

from ibench.results import Results
from ibench.tables._common import RunsLike, Table, _loaded, labels


def _differing(loaded: list[Results]) -> pd.DataFrame:
    """Rows (scope, name) of the facts and settings whose values differ
    between the runs (sampled values left out, a missing one "(absent)");
    columns the runs' labels."""
    names = labels(loaded)
    config = pd.concat([r.config for r in loaded], ignore_index=True)
    config = config[config["source"] != "sampled"]
    wide = config.assign(label=config["run_id"].map(names)).pivot_table(
        index=["scope", "name"], columns="label", values="value", aggfunc="first", sort=False
    )
    wide = wide.reindex(columns=[n for n in dict.fromkeys(names.values()) if n in wide.columns])
    differs = wide.apply(lambda row: row.fillna("(absent)").nunique() > 1, axis=1)
    frame: pd.DataFrame = wide[differs].fillna("(absent)")
    return frame


def what_differs(runs: RunsLike) -> Table:
    """Host facts and server settings whose values differ between the runs
    (facts sampled at a moment, such as swap in use, left out). Rows are
    (scope, name), columns the runs. :func:`differences` is the readable
    form the report shows."""
    frame = _differing(_loaded(runs))
    return Table(f"What differs between the runs ({len(frame)} settings)", frame, frame.style)


BY_NATURE_TOKENS = frozenset({"port", "pid", "socket", "datadir", "hostname", "host", "uuid"})
"""Name parts (split at ``_`` and ``.``) of settings that differ between
any two servers: ports, pids, sockets, data directories, host names, ids."""


def _by_nature(scope: str, name: str, values: pd.Series) -> bool:
    """True for a setting whose values differ by nature rather than by
    choice: its name says port, pid, socket, ... (:data:`BY_NATURE_TOKENS`),
    or, among server settings, every run's value is an absolute path (data
    directories, log, pid and socket files)."""
    if BY_NATURE_TOKENS & set(re.split(r"[_.]", name.lower())):
        return True
    known = [v for v in values if v not in ("", "(absent)")]
    return scope == "server" and bool(known) and all(str(v).startswith("/") for v in known)


@dataclass
class Differences:
    """What differs between runs, as the report shows it: ``summary`` says
    what was compared (naming the DBMSs), ``by_scope`` holds one table per
    scope (``host``, ``ibench``, ``server``), ``by_nature`` the settings that
    differ between any two servers (ports, paths, pids, host names)."""

    summary: str
    by_scope: list[Table]
    by_nature: Optional[Table]

    @property
    def count(self) -> int:
        """How many facts and settings differ, those by nature included."""
        tables = [*self.by_scope, *([self.by_nature] if self.by_nature is not None else [])]
        return sum(len(t.frame) for t in tables)


def differences(runs: RunsLike) -> Differences:
    """What differs between the runs, readable: runs of different DBMSs
    compare only the host's and ibench's facts (their server settings have
    different names and meanings), and ``summary`` names the DBMSs; runs of
    one DBMS also compare the server settings, with those different by
    nature (:func:`_by_nature`) apart. Each table's rows are names, its
    columns the runs."""
    loaded = _loaded(runs)
    names = labels(loaded)
    info = pd.concat([r.runs for r in loaded], ignore_index=True).drop_duplicates("run_id")
    by_dbms: dict[str, list[str]] = {}
    for row in info.itertuples():
        by_dbms.setdefault(f"{row.dbms} {row.dbms_version}", []).append(names[str(row.run_id)])
    wide = _differing(loaded)
    if len(set(info["dbms"])) > 1:
        wide = wide[wide.index.get_level_values("scope") != "server"]
        which = "; ".join(f"{dbms} ({', '.join(runs_of)})" for dbms, runs_of in by_dbms.items())
        summary = (
            f"The runs use different DBMSs: {which}. Their server settings are not comparable, "
            "so only the host's and ibench's facts are compared."
        )
    else:
        summary = f"All runs use {next(iter(by_dbms))}: the host facts, ibench's build and the server settings that differ."
    nature = pd.Series(
        [_by_nature(scope, name, row) for (scope, name), row in wide.iterrows()], index=wide.index, dtype=bool
    )
    by_scope = []
    chosen = wide[~nature]
    for scope in dict.fromkeys(chosen.index.get_level_values("scope")):
        part = chosen.xs(scope, level="scope")
        by_scope.append(Table(f"{scope} ({len(part)})", part, part.style))
    apart = wide[nature].droplevel("scope") if nature.any() else None
    by_nature = (
        Table(f"Different by nature: ports, paths, pids, host names ({len(apart)})", apart, apart.style)
        if apart is not None
        else None
    )
    return Differences(summary, by_scope, by_nature)
