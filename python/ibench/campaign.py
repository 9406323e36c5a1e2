"""Campaigns from Python: ``ibench.campaign("file.toml")`` or a dict of the
same shape (docs/campaigns.md), run by the same code as ``ibench campaign``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping, Union

from ibench import _native
from ibench.results import Results, load


def campaign(
    spec: Union[str, Path, Mapping[str, Any]], *, report: bool = True, check: bool = True, resume: bool = False
) -> Results:
    """Runs a campaign and returns the results of every run it finished.

    ``spec`` is a campaign file (TOML) or a dict with its keys: ``out``, a
    ``run`` table (run parameters plus ``repeats``, ``base``,
    ``cooldown_seconds``) and a ``server`` list (each with ``label`` and
    ``kind``/``bin``/``config``/``keep_data``, or ``db``). A dict's relative
    paths are relative to the current directory. With ``report``, the HTML
    report is written to ``<out>/report.html``. With ``check``, a campaign
    where a run did not end ok (or a server did not start) raises
    :class:`ibench.Error` after the fact, naming ``<out>/campaign.json``.
    With ``resume``, the campaign ``<out>/campaign.json`` records goes on:
    its runs that ended ok are kept, the rest of the plan runs (a changed
    run parameter raises :class:`ibench.ConfigError`, naming it).
    """
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(spec, (str, Path)):
            path = Path(spec)
            out = _out_of(path)
        else:
            data = dict(spec)
            data["server"] = [dict(server) for server in data.get("server", [])]
            for server in data["server"]:
                for key in ("config", "bin"):
                    if key in server and not Path(server[key]).is_absolute():
                        server[key] = str(Path(server[key]).resolve())
            path = Path(tmp) / "campaign.json"
            path.write_text(json.dumps(data))
            out = Path(str(data.get("out", "campaign-results")))
        argv = ["ibench", "campaign", str(path), "--quiet"] + ([] if report else ["--no-report"])
        argv += ["--resume"] if resume else []
        # The report is drawn by `python -m ibench.report`: this interpreter,
        # whose environment has ibench and its dependencies, not the first
        # python3 on the PATH.
        os.environ.setdefault("IBENCH_PYTHON", sys.executable)
        code = _native.cli_main(argv)
    if code == 2:
        raise _native.ConfigError(f"invalid campaign: {spec!r} (see the message above)")
    record = out / "campaign.json"
    if not record.is_file():
        raise _native.Error(f"the campaign did not start (see the message above): no {record}")
    if check and code != 0:
        raise _native.Error(f"the campaign ended with exit code {code}: see {record}")
    return load([out / r["run_id"] for r in json.loads(record.read_text())["runs"] if r["run_id"]])


def _out_of(path: Path) -> Path:
    """The ``out`` of a campaign file (its default when it names none)."""
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - older Pythons: the top-level line itself
        for line in path.read_text().splitlines():
            if line.startswith("["):
                break
            m = re.match(r"\s*out\s*=\s*[\"'](.*)[\"']\s*$", line)
            if m:
                return Path(m.group(1))
        return Path("campaign-results")
    with path.open("rb") as f:
        return Path(str(tomllib.load(f).get("out", "campaign-results")))
