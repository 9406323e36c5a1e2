"""``profile = "perf"`` read back: ``Results.profiles`` and ``profiled``,
``ibench.explain`` per operation, ``ibench.plots.flamegraph``, and the
report's "why" sections, over real runs of the null connector whose
operations burn a known CPU time in a known function (``cpu=``), profiled in
ibench's own process (``profile_client``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ibench
from ibench import _native, plots, report

pytestmark = pytest.mark.skipif(_native.perf_unavailable() is not None, reason=str(_native.perf_unavailable()))

ROWS = 2000


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[ibench.Results]:
    """A light and a heavy configuration: 0.3 and 1 ms of CPU per insert."""
    out = tmp_path_factory.mktemp("profiled")
    common = dict(
        steps=["l.i0"], rows_l_i0=ROWS, rows_per_commit_l_i0=1, interval_seconds=0.05, profile="perf",
        profile_client=True, progress=False, out=out,
    )
    return [
        ibench.run(db="null:?cpu=300us", label="light", **common),
        ibench.run(db="null:?cpu=1ms", label="heavy", **common),
    ]


def test_the_profiles_hold_the_burning_function_and_what_was_sampled(runs: list[ibench.Results]) -> None:
    heavy = runs[1]
    p = heavy.profiles
    assert set(p["role"]) == {"client"} and set(p["step"]) == {"l.i0"}
    assert (p["ops"] == ROWS).all() and (p["frequency_hz"] == 99).all()
    burning = p.loc[p["stack"].str.contains(r"burn_cpu(?:;|$)"), "samples"].sum()
    assert burning > 0.8 * p["samples"].sum()
    sampled = heavy.profiled
    assert len(sampled) == 1
    row = sampled.iloc[0]
    assert row["call_graph"].startswith("dwarf") and row["samples"] == p["samples"].sum()
    assert 0 <= row["unresolved_frames_share"] < 0.5 and row["perf_cpu_s"] >= 0


def test_explain_gives_cpu_per_operation_by_function_against_the_base(runs: list[ibench.Results]) -> None:
    e = ibench.explain(runs, "l.i0", base="light", role="client")
    assert (e.base, e.other, e.step) == ("light", "heavy", "l.i0")
    f = e.functions
    burning = [name for name in f.index[:5] if str(name).endswith("::burn_cpu")]
    assert burning, f.head()
    burn = f.loc[burning[0]]
    # 300 µs and 1 ms burnt per insert, sampled: within the sampling error.
    assert 200 < burn["inclusive_base"] < 450 and 800 < burn["inclusive_other"] < 1250, burn
    assert 2.3 < burn["inclusive_ratio"] < 4.3, burn
    # A function's own CPU is part of its inclusive CPU, on each side (not
    # so of the changes: its own share can grow more than its whole).
    assert burn["exclusive_base"] <= burn["inclusive_base"] + 1e-9, burn
    assert burn["exclusive_other"] <= burn["inclusive_other"] + 1e-9, burn
    # The call paths keep burn_cpu with (nearly) the largest change: it is
    # the deepest frame on nearly every stack of both sides, or, where other
    # threads took more than a tenth of the CPU, one of its callers' peers.
    paths = e.paths
    assert burning[0] in paths.index, paths.head()
    largest = paths["inclusive_change"].abs().max()
    assert paths.loc[burning[0], "inclusive_change"] >= 0.9 * largest, paths.head()
    assert e.waits.empty and list(e.waits.columns) == ["base", "other", "ratio", "change"]
    svg = e.flamegraph()
    assert svg.lstrip().startswith("<?xml") and "burn_cpu" in svg


def test_explain_refuses_an_unknown_label(runs: list[ibench.Results]) -> None:
    with pytest.raises(ibench.ConfigError, match="no run labelled 'nope'"):
        ibench.explain(runs, "l.i0", base="nope")


def test_plots_flamegraph_draws_a_run_s_profile(runs: list[ibench.Results]) -> None:
    svg = plots.flamegraph(runs[1], "l.i0", "client")
    assert svg._repr_svg_().rstrip().endswith("</svg>") and "burn_cpu" in svg
    with pytest.raises(ibench.ConfigError, match="no server CPU profile"):
        plots.flamegraph(runs[1], "l.i0")


def test_the_report_explains_a_significant_ratio_beside_it(runs: list[ibench.Results], tmp_path: Path) -> None:
    page = report.render(runs, base="light")
    assert "<h2>Why</h2>" in page
    assert "why: l.i0, heavy at" in page
    # Narrowed to the kind of thread whose CPU changed: the workers burn.
    assert "CPU µs per operation by thread role" in page
    assert "CPU µs per operation by function (client foreground)" in page
    assert page.count("data:image/svg+xml;base64,") == 3  # the differential graph and a graph per run
    assert "CPU profile: light (client)" in page


def test_explain_names_the_commit_path_of_postgresql_s_synchronous_commit(tmp_path: Path) -> None:
    """synchronous_commit on against off, a commit per row: the sessions wait
    on the WAL's flush, and the CPU per operation grows in XLogFlush."""
    from conftest import server_or_skip

    dsn = server_or_skip("postgres://postgres@127.0.0.1:5432/test", "PostgreSQL")
    common = dict(
        steps=["l.i0"], rows_l_i0=3000, rows_per_commit_l_i0=1, profile="perf", wait_sampling_hz=50,
        progress=False, out=tmp_path,
    )
    runs = [
        ibench.run(db=f"{dsn}?options=-c%20synchronous_commit%3Doff", label="async", **common),
        ibench.run(db=f"{dsn}?options=-c%20synchronous_commit%3Don", label="sync", **common),
    ]
    e = ibench.explain(runs, "l.i0", base="async")
    wal = e.waits[e.waits.index.str.contains("WAL")]
    assert not wal.empty and wal["other"].sum() > wal["base"].sum(), e.waits
    flush = ibench.explain(runs, "l.i0", base="async", top=10_000).functions.loc["XLogFlush"]
    assert flush["inclusive_other"] > flush["inclusive_base"], flush
    # The call paths name it among their first rows, unresolved frames left out.
    paths = list(e.paths.index[:10])
    assert "XLogFlush" in paths and not any(p.startswith("[") for p in paths), e.paths
    # By thread role: the backends' CPU per operation is what changed, and
    # within them the commit's path leads, not the frames every backend's
    # stack has.
    roles = e.roles
    backends = roles.loc[("server", "foreground", "client backend")]
    assert backends["other"] > backends["base"], roles
    assert roles.index.get_level_values("kind").isin(["foreground", "background", "monitor", "ended"]).all()
    fg = ibench.explain(runs, "l.i0", base="async", role="foreground")
    # The commit's path: XLogFlush and the kernel's sync under it (which of
    # them leads is within the sampling noise: they change by nearly as much).
    leading = list(fg.paths.index[:5])
    assert "XLogFlush" in leading, fg.paths
    entry = {"main", "__libc_start_call_main", "__libc_start_main", "PostmasterMain", "PostgresMain", "ServerLoop"}
    assert not entry & set(fg.paths.index[:5]), fg.paths
    one = ibench.explain(runs, "l.i0", base="async", role="client backend")
    assert one.paths.index[0] == fg.paths.index[0]
    background = ibench.explain(runs, "l.i0", base="async", role="background")
    assert "XLogFlush" not in set(background.paths.index[:3]) or background.paths.empty
    # An unknown role is named, with the ones the runs have.
    with pytest.raises(ibench.ConfigError, match=r"invalid role: 'checkpointr'.*checkpointer"):
        ibench.explain(runs, "l.i0", base="async", role="checkpointr")
    with pytest.raises(ibench.ConfigError, match="invalid side: 'servers'"):
        ibench.explain(runs, "l.i0", base="async", role="foreground", side="servers")
    svg = plots.flamegraph(runs[1], "l.i0", role="foreground")
    assert "XLogFlush" in svg and "checkpointer" not in svg
    page = report.render(runs, base="async")
    if "why: l.i0" in page:
        assert "CPU µs per operation by thread role" in page


def test_a_role_asked_of_profiles_without_their_threads_is_refused(runs: list[ibench.Results], tmp_path: Path) -> None:
    """Result folders from before stacks kept their threads: the sides still
    explain; a thread role is refused, saying why."""
    import shutil

    import pyarrow.parquet as pq

    old = []
    for r in runs:
        run_dir = Path(r.paths[0])
        copy = tmp_path / run_dir.name
        shutil.copytree(run_dir, copy)
        table = pq.read_table(copy / "profiles.parquet")
        pq.write_table(table.drop_columns(["thread_kind", "thread_role", "cpu_s"]), copy / "profiles.parquet")
        (copy / "threads.parquet").unlink()
        old.append(ibench.load(copy))
    e = ibench.explain(old, "l.i0", base="light", role="client")
    assert any(str(f).endswith("::burn_cpu") for f in e.functions.index[:5]), e.functions
    with pytest.raises(ibench.ConfigError, match=r"invalid role: 'foreground' needs each stack's threads.*older"):
        ibench.explain(old, "l.i0", base="light", role="foreground", side="client")


def test_an_embedded_engine_s_roles_are_ibench_s_own_threads(runs: list[ibench.Results]) -> None:
    """The null connector's work runs on ibench's workers: the client's
    foreground, whose profile holds the burn and adds up to its CPU."""
    heavy = runs[1]
    t = heavy.threads
    client = t[t["side"] == "client"].set_index(["kind", "role"])["cpu_s"]
    assert client[("foreground", "ibench workers")] > 0.8 * client.sum(), client
    p = heavy.profiles
    fg = p[p["thread_kind"] == "foreground"]
    assert fg["cpu_s"].sum() == pytest.approx(client[("foreground", "ibench workers")], rel=0.05)
    assert set(fg["thread_role"]) == {"ibench workers"}
    e = ibench.explain(runs, "l.i0", base="light", role="ibench workers", side="client")
    assert any(str(f).endswith("::burn_cpu") for f in e.functions.index[:3]), e.functions


def test_the_report_s_why_section_opens_in_chromium_with_its_flame_graph(
    runs: list[ibench.Results], tmp_path: Path
) -> None:
    """Opened (the details open), the differential flame graph renders inside
    its object, with its own script, and Chromium logs no error."""
    from test_report import open_in_chromium

    page = tmp_path / "report.html"
    page.write_text(report.render(runs, base="light").replace("<details>", "<details open>"))
    dom, log = open_in_chromium(page, tmp_path)
    assert not [line for line in log.splitlines() if "Uncaught" in line], log
    assert "<h2>Why</h2>" in dom and 'type="image/svg+xml"' in dom
