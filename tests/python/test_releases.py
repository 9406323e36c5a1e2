"""Campaigns across real releases, on servers ibench starts itself from the
binaries `../shared/tools/db-versions.sh` installs under /opt (.ci/run runs
it): PostgreSQL 14 beside 18, and MariaDB 10.11 beside MySQL 9.7 logging in
as a user with a password (MySQL 9.7: caching_sha2_password's full
authentication, over plain TCP and over TLS, on a fresh server each run, so
no authentication cache can help). Every run ends ok and verified, records
its server's version and settings, and what differs between the releases
shows the settings whose defaults changed."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

import ibench
from ibench import tables

PG = {major: Path(f"/opt/pgversions/{major}/bin") for major in (14, 18)}
MYSQL97 = Path("/opt/myversions/9.7/sbin")
RUN = {"steps": ["l.i0", "l.x", "qr100"], "rows_l_i0": 3000, "query_seconds": 2, "wait_seconds": 0}


def installed(*paths: Path) -> None:
    """Skip (fail in CI) unless db-versions.sh installed these releases."""
    missing = [str(p) for p in paths if not p.is_dir()]
    if missing:
        if os.environ.get("CI") == "true":
            raise AssertionError(f"CI=true and releases are missing (run ../shared/tools/db-versions.sh): {missing}")
        pytest.skip(f"releases not installed (../shared/tools/db-versions.sh): {missing}")


def shared_dir() -> Path:
    """A directory the servers' own users can read (pytest's is root's alone)."""
    d = Path(tempfile.mkdtemp(prefix="ibench-releases-", dir="/tmp"))
    d.chmod(0o755)
    return d


def server_settings(results: ibench.Results, label: str) -> dict[str, str]:
    c = results.config
    run_ids = set(results.runs.loc[results.runs["label"] == label, "run_id"])
    rows = c[c["run_id"].isin(run_ids) & (c["scope"] == "server")]
    return dict(zip(rows["name"], rows["value"]))


def test_a_campaign_across_two_postgresql_majors(tmp_path: Path) -> None:
    installed(*PG.values())
    results = ibench.campaign(
        {
            "out": str(tmp_path / "out"),
            "run": RUN,
            "server": [{"label": f"pg{m}", "kind": "postgres", "bin": str(b)} for m, b in PG.items()],
        },
        report=True,
    )
    runs = results.runs.set_index("label")
    assert runs.loc["pg14", "dbms_version"].startswith("14.")
    assert runs.loc["pg18", "dbms_version"].startswith("18.")
    assert (results.runs["status"] == "ok").all() and results.runs["verified"].all()
    pg18 = server_settings(results, "pg18")
    assert pg18["data_checksums"] == "on" and "io_method" in pg18
    assert server_settings(results, "pg14")["data_checksums"] == "off"
    d = tables.differences(results)
    server = next(t for t in d.by_scope if t.title.startswith("server"))
    assert {"data_checksums", "io_method", "server_version"} <= set(server.frame.index)
    report = (tmp_path / "out" / "report.html").read_text()
    assert "io_method" in report and "data_checksums" in report


def tls_certificate(d: Path) -> tuple[Path, Path]:
    """A self-signed certificate and key for a server on 127.0.0.1."""
    cert, key = d / "server.pem", d / "server.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    for f in (cert, key):
        f.chmod(0o644)
    return cert, key


def test_a_campaign_across_mariadb_and_mysql_9_logging_in_with_a_password_over_tcp_and_tls(tmp_path: Path) -> None:
    installed(MYSQL97)
    d = shared_dir()
    password = d / "bench.pw"
    password.write_text("s3cret-Pass!\n")
    cert, key = tls_certificate(d)
    (d / "maria-tls.cnf").write_text(f"ssl_cert = {cert}\nssl_key = {key}\n")
    login = {"user": "bench", "password_file": str(password)}
    tls = {"dsn_options": "ssl-mode=REQUIRED"}
    results = ibench.campaign(
        {
            "out": str(tmp_path / "out"),
            "run": RUN,
            "server": [
                {"label": "maria", "kind": "mariadb", **login},
                {"label": "maria-tls", "kind": "mariadb", "config": str(d / "maria-tls.cnf"), **login, **tls},
                {"label": "mysql97", "kind": "mysql", "bin": str(MYSQL97), **login},
                {"label": "mysql97-tls", "kind": "mysql", "bin": str(MYSQL97), **login, **tls},
            ],
        },
        report=False,
    )
    runs = results.runs.set_index("label")
    assert (runs["status"] == "ok").all() and runs["verified"].all()
    assert "MariaDB" in runs.loc["maria", "dbms_version"]
    assert runs.loc["mysql97", "dbms_version"].startswith("9.7")
    for label in runs.index:
        assert runs.loc[label, "target"].startswith("mysql://bench@127.0.0.1:"), "logged in as the user"
        assert "s3cret" not in runs.loc[label, "config"] + runs.loc[label, "target"], "no password recorded"
    for label in runs.index:
        settings = json.loads(runs.loc[label, "settings"])
        assert settings["password_source"] == "password file"
        assert settings["tls"].startswith("TLSv1") == label.endswith("-tls"), (label, settings)
    # MySQL 9 authenticates with caching_sha2_password (its policy's first
    # factor, '*': the default plugin); MariaDB has no such setting.
    mysql97 = server_settings(results, "mysql97")
    assert mysql97["authentication_policy"].startswith("*"), mysql97["authentication_policy"]
    assert "authentication_policy" not in server_settings(results, "maria")
    server = next(t for t in tables.differences(results).by_scope if t.title.startswith("server"))
    assert {"version", "authentication_policy"} <= set(server.frame.index)
