//! TLS with rustls against servers of their own, with a certificate
//! authority and a server certificate (for `localhost`) made here: `require`
//! encrypts, `verify-full` refuses a host name the certificate does not
//! name and a certificate another authority signed, and the run records
//! the TLS version and cipher the server reports.

mod common;

use common::{config, pg_hba, private_server, run};
use ibench::results::RunStatus;
use ibench::server::Kind;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A CA, a server certificate for `localhost` it signed, the server's key,
/// and a second, unrelated CA.
struct Certs {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    other_ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    /// A client certificate (CN `certuser`, X.509 v3) the CA signed, the
    /// same as v1, and their key.
    client_cert: PathBuf,
    client_cert_v1: PathBuf,
    client_key: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `dir/server.key` readable by `owner` only (the server's account when we are root).
fn key_for(owner: &str, dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(dir.join("server.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
    if unsafe { libc::geteuid() } == 0 {
        let chown = Command::new("chown")
            .arg(owner)
            .arg(dir.join("server.key"))
            .status()
            .unwrap();
        assert!(chown.success());
    }
}

/// Certificates readable by `owner` (the server's account when we are root).
fn certs(owner: &str) -> Certs {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for ca in ["ca", "other"] {
        openssl(
            d,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
                "-days",
                "2",
                "-subj",
                &format!("/CN=ibench test {ca}"),
            ],
        );
    }
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        d.join("ext.cnf"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    );
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "client.key",
            "-out",
            "client.csr",
            "-subj",
            "/CN=certuser",
        ],
    );
    // v1, as `openssl x509 -req` makes it by default (PostgreSQL's recipe),
    // and v3 (the mysql crate's rustls refuses a v1 one).
    std::fs::write(d.join("client-ext.cnf"), "basicConstraints=CA:FALSE\n").unwrap();
    for (out, extra) in [("client-v1.pem", None), ("client.pem", Some("client-ext.cnf"))] {
        let mut args = vec![
            "x509",
            "-req",
            "-in",
            "client.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            out,
            "-days",
            "2",
        ];
        args.extend(extra.map(|e| ["-extfile", e]).into_iter().flatten());
        openssl(d, &args);
    }
    key_for(owner, d);
    Certs {
        client_cert: d.join("client.pem"),
        client_cert_v1: d.join("client-v1.pem"),
        client_key: d.join("client.key"),
        ca: d.join("ca.pem"),
        other_ca: d.join("other.pem"),
        cert: d.join("server.pem"),
        key: d.join("server.key"),
        _dir: dir,
    }
}

/// A PostgreSQL of its own over TLS with `c`'s server certificate, and
/// `extra` configuration.
fn postgres_over_tls(c: &Certs, extra: &str) -> ibench::server::Managed {
    private_server(
        Kind::Postgres,
        format!(
            "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n{extra}",
            c.cert.display(),
            c.key.display()
        ),
    )
}

/// A short load and query step over `dsn`, which must end ok: the
/// sessions' own client connects as the checks' did.
fn loads_and_queries(dsn: &str) {
    let out = tempfile::tempdir().unwrap();
    let config =
        config(serde_json::json!({"db": dsn, "steps": ["l.i0", "qr100"], "rows_l_i0": 1000, "query_seconds": 1}));
    let run = run(&config, out.path());
    assert_eq!(
        run.results.run.status,
        RunStatus::Ok,
        "{dsn}: {:?}",
        run.results.run.error
    );
}

/// The `tls` setting a connector records, or its error.
fn tls_of(dsn: &str) -> Result<String, String> {
    let c = ibench::connect::open(dsn).map_err(|e| e.to_string())?;
    Ok(c.settings()
        .into_iter()
        .find(|(k, _)| k == "tls")
        .map(|(_, v)| v)
        .unwrap_or_default())
}

/// PostgreSQL's own recipe for a self-signed server certificate (its docs,
/// "Creating Certificates"): OpenSSL makes it a CA certificate (CA:TRUE)
/// with no subjectAltName, and it is its own root. libpq accepts it for
/// verify-ca, and by its common name for verify-full; webpki alone refused
/// it ("CaUsedAsEndEntity").
#[test]
fn postgres_takes_a_self_signed_certificate_made_by_its_docs_recipe() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(
        d,
        &[
            "req",
            "-new",
            "-x509",
            "-days",
            "2",
            "-nodes",
            "-text",
            "-out",
            "server.crt",
            "-keyout",
            "server.key",
            "-subj",
            "/CN=localhost",
        ],
    );
    key_for("postgres", d);
    let crt = d.join("server.crt");
    let server = private_server(
        Kind::Postgres,
        format!(
            "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'",
            crt.display(),
            d.join("server.key").display()
        ),
    );
    let dsn = |host: &str, mode: &str| {
        format!(
            "postgres://postgres@{host}:{}/postgres?sslmode={mode}&sslrootcert={}",
            server.port(),
            crt.display()
        )
    };
    for (host, mode) in [
        ("127.0.0.1", "verify-ca"),
        ("localhost", "verify-full"),
        ("127.0.0.1", "require"),
    ] {
        let tls = tls_of(&dsn(host, mode)).unwrap_or_else(|e| panic!("{host} {mode}: {e}"));
        assert!(tls.starts_with("TLSv1"), "{host} {mode}: {tls}");
    }
    let wrong_name = tls_of(&dsn("127.0.0.1", "verify-full")).unwrap_err();
    assert!(
        wrong_name.contains("not valid for name") && wrong_name.contains("CommonName(\"localhost\")"),
        "{wrong_name}"
    );
    server.stop(None).unwrap();
}

/// PostgreSQL's `cert` authentication: the client certificate's common
/// name is the user, and the server checks it against its CA. `sslcert` and
/// `sslkey` (they were "unknown option" to the driver) log in, for the
/// checks and for the sessions' own client alike.
#[test]
fn postgres_logs_in_with_a_client_certificate() {
    let c = certs("postgres");
    let (_hba, hba) = pg_hba(
        "local all all trust\nhostssl all certuser 127.0.0.1/32 cert\nhost all certuser 127.0.0.1/32 reject\nhost all all 127.0.0.1/32 trust\n",
    );
    let server = postgres_over_tls(
        &c,
        &format!("ssl_ca_file = '{}'\nhba_file = '{}'", c.ca.display(), hba.display()),
    );
    {
        let mut admin = postgres::Client::connect(&server.dsn(), postgres::NoTls).unwrap();
        admin
            .batch_execute("CREATE ROLE certuser LOGIN; GRANT ALL ON SCHEMA public TO certuser")
            .unwrap();
    }
    let base = format!(
        "postgres://certuser@127.0.0.1:{}/postgres?sslmode=require",
        server.port()
    );
    let with_cert = format!(
        "{base}&sslcert={}&sslkey={}",
        c.client_cert_v1.display(),
        c.client_key.display()
    );
    assert!(tls_of(&with_cert).unwrap().starts_with("TLSv1"));
    let refused = tls_of(&base).unwrap_err();
    assert!(refused.contains("certificate"), "{refused}");
    // The sessions log in with it too.
    loads_and_queries(&with_cert);
    let missing_key = tls_of(&format!("{base}&sslcert={}", c.client_cert.display())).unwrap_err();
    assert!(missing_key.contains("sslkey"), "{missing_key}");
    server.stop(None).unwrap();
}

#[test]
fn postgres_require_encrypts_and_verify_full_checks_the_name_and_the_authority() {
    let c = certs("postgres");
    let server = postgres_over_tls(&c, "");
    let base = |host: &str| format!("postgres://postgres@{host}:{}/postgres", server.port());
    assert_eq!(
        tls_of(&format!("{}?sslmode=disable", base("127.0.0.1"))).unwrap(),
        "none"
    );
    // No sslmode: plain, ibench's default.
    assert_eq!(tls_of(&base("127.0.0.1")).unwrap(), "none");
    for mode in ["prefer", "require"] {
        let tls = tls_of(&format!("{}?sslmode={mode}", base("127.0.0.1"))).unwrap();
        assert!(tls.starts_with("TLSv1.3 "), "{mode}: {tls}");
    }
    let ca = c.ca.display();
    // The chain checks out; 127.0.0.1 is not a name the certificate holds.
    assert!(
        tls_of(&format!("{}?sslmode=verify-ca&sslrootcert={ca}", base("127.0.0.1")))
            .unwrap()
            .starts_with("TLSv1")
    );
    let wrong_name = tls_of(&format!("{}?sslmode=verify-full&sslrootcert={ca}", base("127.0.0.1"))).unwrap_err();
    assert!(
        wrong_name.contains("not valid for name") && wrong_name.contains("127.0.0.1"),
        "{wrong_name}"
    );
    // The error names the mode that refused (the target names only the server).
    assert!(wrong_name.contains("with sslmode verify-full"), "{wrong_name}");
    assert!(
        tls_of(&format!("{}?sslmode=verify-full&sslrootcert={ca}", base("localhost")))
            .unwrap()
            .starts_with("TLSv1")
    );
    let other = c.other_ca.display();
    let stranger = tls_of(&format!(
        "{}?sslmode=verify-full&sslrootcert={other}",
        base("localhost")
    ))
    .unwrap_err();
    assert!(stranger.contains("invalid peer certificate"), "{stranger}");
    // The key=value form takes the same words.
    let kv = format!(
        "host=localhost port={} user=postgres dbname=postgres sslmode=verify-full sslrootcert={ca}",
        server.port()
    );
    assert!(tls_of(&kv).unwrap().starts_with("TLSv1"));
    // A run over TLS records it.
    let dir = tempfile::tempdir().unwrap();
    let dsn = format!("{}?sslmode=require", base("127.0.0.1"));
    let out = ibench::exec::run(
        &ibench::workload::Config::resolve(&[serde_json::json!({"db": dsn, "steps": ["l.i0"], "rows_l_i0": 1000})
            .as_object()
            .unwrap()
            .clone()])
        .unwrap(),
        dir.path(),
        &ibench::exec::Silent,
        &ibench::Stop::new(),
    )
    .unwrap();
    assert_eq!(out.results.run.status, RunStatus::Ok, "{:?}", out.results.run.error);
    assert!(
        out.results.run.settings.contains("TLSv1.3"),
        "{}",
        out.results.run.settings
    );
    server.stop(None).unwrap();
}

/// `ibench run` of a small load on `db` with HOME `home` (and no libpq
/// variables of the caller's): whether it succeeded, its output, and every
/// value its result files hold.
fn run_with_home(db: &str, home: &Path) -> (bool, String, String) {
    run_with_env(db, home, &[])
}

/// As [`run_with_home`], with `env` set.
fn run_with_env(db: &str, home: &Path, env: &[(&str, &Path)]) -> (bool, String, String) {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ibench"));
    cmd.args(["run", "--db", db, "--steps", "l.i0", "--rows-l-i0", "500", "--out"])
        .arg(out.path())
        .env("HOME", home);
    for libpq in [
        "PGSSLMODE",
        "PGSSLROOTCERT",
        "PGSERVICE",
        "PGHOST",
        "PGPORT",
        "SSL_CERT_FILE",
    ] {
        cmd.env_remove(libpq);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let values = if o.status.success() {
        common::decoded(out.path())
    } else {
        String::new()
    };
    (o.status.success(), text, values)
}

#[test]
fn postgres_verifies_against_the_default_root_certificate_as_libpq() {
    let c = certs("postgres");
    let server = postgres_over_tls(&c, "");
    let db = |host: &str, mode: &str| format!("postgres://postgres@{host}:{}/postgres?sslmode={mode}", server.port());
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join(".postgresql/root.crt");
    // verify-ca and verify-full without sslrootcert need ~/.postgresql/root.crt, named when missing.
    let (ok, text, _) = run_with_home(&db("localhost", "verify-full"), home.path());
    assert!(
        !ok && text.contains(&format!("\"{}\" does not exist", root.display())),
        "{text}"
    );
    std::fs::create_dir(home.path().join(".postgresql")).unwrap();
    std::fs::copy(&c.ca, &root).unwrap();
    let (ok, text, values) = run_with_home(&db("localhost", "verify-full"), home.path());
    assert!(ok && values.contains("TLSv1"), "{text}");
    let (ok, text, values) = run_with_home(&db("127.0.0.1", "verify-ca"), home.path());
    assert!(ok && values.contains("TLSv1"), "{text}");
    // require with a root.crt checks the chain: another authority's root fails.
    std::fs::copy(&c.other_ca, &root).unwrap();
    let (ok, text, _) = run_with_home(&db("127.0.0.1", "require"), home.path());
    assert!(!ok && text.contains("invalid peer certificate"), "{text}");
    std::fs::remove_file(&root).unwrap();
    let (ok, text, values) = run_with_home(&db("127.0.0.1", "require"), home.path());
    assert!(ok && values.contains("TLSv1"), "{text}");
    server.stop(None).unwrap();
}

/// libpq 16's `sslrootcert=system`: the certificates OpenSSL trusts
/// (`SSL_CERT_FILE` here, standing for the system's bundle), and
/// `verify-full` unless the DSN asks for a weaker mode, which is refused.
#[test]
fn postgres_sslrootcert_system_verifies_the_full_name_against_the_system_s_roots() {
    let c = certs("postgres");
    let server = postgres_over_tls(&c, "");
    let db = |host: &str, extra: &str| {
        format!(
            "postgres://postgres@{host}:{}/postgres?sslrootcert=system{extra}",
            server.port()
        )
    };
    let home = tempfile::tempdir().unwrap();
    let (ok, text, values) = run_with_env(&db("localhost", ""), home.path(), &[("SSL_CERT_FILE", &c.ca)]);
    assert!(ok && values.contains("TLSv1"), "{text}");
    assert!(values.contains("verify-full"), "the sslmode recorded: {text}");
    // verify-full: the certificate names localhost, not 127.0.0.1.
    let (ok, text, _) = run_with_env(&db("127.0.0.1", ""), home.path(), &[("SSL_CERT_FILE", &c.ca)]);
    assert!(!ok && text.contains("not valid for name"), "{text}");
    // Roots the server's authority is not among.
    let (ok, text, _) = run_with_env(&db("localhost", ""), home.path(), &[("SSL_CERT_FILE", &c.other_ca)]);
    assert!(!ok && text.contains("invalid peer certificate"), "{text}");
    let (ok, text, _) = run_with_env(
        &db("localhost", "&sslmode=require"),
        home.path(),
        &[("SSL_CERT_FILE", &c.ca)],
    );
    assert!(!ok && text.contains("weak sslmode \"require\""), "{text}");
    server.stop(None).unwrap();
}

#[test]
fn mariadb_required_encrypts_and_verify_identity_checks_the_name() {
    let c = certs("mysql");
    let server = private_server(
        Kind::Mariadb,
        format!(
            "ssl-cert = {}\nssl-key = {}\nssl-ca = {}",
            c.cert.display(),
            c.key.display(),
            c.ca.display()
        ),
    );
    let base = |host: &str| format!("mysql://root@{host}:{}/test", server.port());
    assert_eq!(tls_of(&base("127.0.0.1")).unwrap(), "none");
    let tls = tls_of(&format!("{}?ssl-mode=REQUIRED", base("127.0.0.1"))).unwrap();
    assert!(
        tls.starts_with("TLSv1"),
        "{tls}: {}",
        ibench::server::tail(server.log(), 30)
    );
    let ca = c.ca.display();
    assert!(tls_of(&format!("{}?ssl-mode=VERIFY_CA&ssl-ca={ca}", base("127.0.0.1")))
        .unwrap()
        .starts_with("TLSv1"));
    let wrong_name = tls_of(&format!("{}?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}", base("127.0.0.1"))).unwrap_err();
    assert!(wrong_name.to_lowercase().contains("name"), "{wrong_name}");
    // The error names the mode that refused (the target names only the server).
    assert!(wrong_name.contains("with ssl-mode VERIFY_IDENTITY"), "{wrong_name}");
    assert!(
        tls_of(&format!("{}?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}", base("localhost")))
            .unwrap()
            .starts_with("TLSv1")
    );
    let other = c.other_ca.display();
    let wrong_ca = tls_of(&format!("{}?ssl-mode=VERIFY_CA&ssl-ca={other}", base("localhost"))).unwrap_err();
    assert!(wrong_ca.contains("with ssl-mode VERIFY_CA"), "{wrong_ca}");
    // Option files: ssl-ca alone means VERIFY_CA (the mysql client's rule),
    // MariaDB's bare `ssl` means REQUIRED, `[ibench]` may hold ssl-mode.
    let dir = tempfile::tempdir().unwrap();
    let with_file = |name: &str, text: String| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        format!("{}?defaults-file={}", base("127.0.0.1"), f.display())
    };
    let by_ca = with_file("ca.cnf", format!("[client]\nssl-ca = \"{ca}\" # ours\n"));
    assert!(tls_of(&by_ca).unwrap().starts_with("TLSv1"));
    assert!(tls_of(&with_file("other.cnf", format!("[client]\nssl_ca={other}\n"))).is_err());
    assert!(tls_of(&with_file("ssl.cnf", "[client-mariadb]\nssl\n".into()))
        .unwrap()
        .starts_with("TLSv1"));
    assert!(tls_of(&with_file(
        "mode.cnf",
        "[client]\nskip-ssl\n[ibench]\nloose-ssl-mode=REQUIRED\n".into()
    ))
    .unwrap()
    .starts_with("TLSv1"));
    assert_eq!(
        tls_of(&with_file("skip.cnf", "[client]\nssl\nskip-ssl\n".into())).unwrap(),
        "none"
    );
    // PREFERRED checks a CA it is given, as the client does (before: unchecked).
    assert!(tls_of(&format!("{}?ssl-mode=PREFERRED&ssl-ca={other}", base("127.0.0.1"))).is_err());
    assert!(tls_of(&format!("{}?ssl-mode=PREFERRED&ssl-ca={ca}", base("127.0.0.1")))
        .unwrap()
        .starts_with("TLSv1"));
    let bad = tls_of(&format!("{}?ssl-mode=sometimes", base("127.0.0.1"))).unwrap_err();
    assert!(bad.contains("ssl-mode"), "{bad}");
    // The sessions' own client encrypts too: an account that requires TLS
    // runs the benchmark's statements (loads, a query step, verification).
    {
        use mysql::prelude::Queryable;
        let mut admin = mysql::Conn::new(mysql::Opts::from_url(&base("127.0.0.1")).unwrap()).unwrap();
        admin
            .query_drop(
                // At localhost too: the server's anonymous ''@'localhost' would match before '%'.
                "CREATE USER 'tls_only'@'%' REQUIRE SSL; GRANT ALL ON test.* TO 'tls_only'@'%'; \
                 CREATE USER 'tls_only'@'localhost' REQUIRE SSL; GRANT ALL ON test.* TO 'tls_only'@'localhost'",
            )
            .unwrap();
    }
    let tls_only = |mode: &str| {
        let dsn = format!(
            "mysql://tls_only@localhost:{}/test?ssl-mode={mode}&ssl-ca={ca}",
            server.port()
        );
        let dir = tempfile::tempdir().unwrap();
        let config = serde_json::json!({"db": dsn, "steps": ["l.i0", "l.x", "l.i1", "qr100"], "rows_l_i0": 1000, "rows_l_i1": 1000,
            "query_seconds": 1});
        ibench::exec::run(
            &ibench::workload::Config::resolve(&[config.as_object().unwrap().clone()]).unwrap(),
            dir.path(),
            &ibench::exec::Silent,
            &ibench::Stop::new(),
        )
    };
    for mode in ["REQUIRED", "VERIFY_IDENTITY"] {
        let out = tls_only(mode).unwrap();
        assert_eq!(
            out.results.run.status,
            RunStatus::Ok,
            "{mode}: {:?}",
            out.results.run.error
        );
        assert!(
            out.results.run.settings.contains("TLSv1"),
            "{}",
            out.results.run.settings
        );
    }
    let refused = tls_only("DISABLED")
        .map(|o| o.results.run.error)
        .map_err(|e| e.to_string());
    assert!(
        format!("{refused:?}").contains("Access denied for user 'tls_only'"),
        "{refused:?}"
    );
    // REQUIRE X509: a client certificate the server's CA signed, from the
    // DSN or an option file, for the checks and the sessions alike.
    {
        use mysql::prelude::Queryable;
        let mut admin = mysql::Conn::new(mysql::Opts::from_url(&base("127.0.0.1")).unwrap()).unwrap();
        admin
            .query_drop(
                "CREATE USER 'x509'@'%' REQUIRE X509; GRANT ALL ON test.* TO 'x509'@'%'; \
                 CREATE USER 'x509'@'localhost' REQUIRE X509; GRANT ALL ON test.* TO 'x509'@'localhost'",
            )
            .unwrap();
    }
    let x509 = format!("mysql://x509@127.0.0.1:{}/test?ssl-mode=REQUIRED", server.port());
    let (cert, key) = (c.client_cert.display(), c.client_key.display());
    assert!(tls_of(&x509).unwrap_err().contains("Access denied"));
    let by_dsn = format!("{x509}&ssl-cert={cert}&ssl-key={key}");
    assert!(tls_of(&by_dsn).unwrap().starts_with("TLSv1"));
    let cnf = dir.path().join("x509.cnf");
    std::fs::write(&cnf, format!("[client]\nssl-cert = {cert}\nssl_key = \"{key}\"\n")).unwrap();
    assert!(tls_of(&format!("{x509}&defaults-file={}", cnf.display()))
        .unwrap()
        .starts_with("TLSv1"));
    loads_and_queries(&by_dsn);
    server.stop(None).unwrap();
}
