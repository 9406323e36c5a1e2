//! MySQL and MariaDB: a `my.cnf` of the server's own (a tmpdir in its
//! directory, the given configuration, then ibench's port, 127.0.0.1,
//! socket and pid file, which win), a data directory from
//! `mariadb-install-db` (root without a password) or `mysqld
//! --initialize-insecure`, and the server started with `--defaults-file` as
//! a child process; database `test` is created once it accepts connections.

use super::{find_binary, hand_over, path_dirs, setup, version_of, Fresh, Kind, Prepared};
use crate::error::{Error, Result};
use mysql::prelude::Queryable;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The usual places of the server and its installer, after PATH.
fn installed() -> Vec<PathBuf> {
    path_dirs()
        .into_iter()
        .chain(["/usr/sbin", "/usr/bin", "/usr/local/mysql/bin"].map(PathBuf::from))
        .collect()
}

/// The configured data directory in `dir/data`; the command that starts the
/// server and its version.
pub(super) fn prepare(at: &Fresh<'_>) -> Result<Prepared> {
    let fallbacks = installed();
    let server = find_binary(at.spec.bin.as_deref(), &["mariadbd", "mysqld"], &fallbacks)?;
    let defaults = format!("--defaults-file={}", configure(at)?.display());
    match at.spec.kind {
        Kind::Mysql => {
            let mut cmd = Command::new(&server);
            cmd.arg(&defaults).arg("--initialize-insecure");
            setup(
                cmd,
                at.account,
                &at.dir.join("initialize.log"),
                "mysqld --initialize-insecure",
            )?;
        }
        _ => install_mariadb(at, &server, &defaults, fallbacks)?,
    }
    let version = version_of(&server)?;
    let mut start = Command::new(server);
    start.arg(defaults);
    Ok(Prepared { start, version })
}

/// The server's `my.cnf`, written: a tmpdir of its own in its directory,
/// the given configuration, then ibench's port, 127.0.0.1, socket and pid
/// file, which win.
fn configure(at: &Fresh<'_>) -> Result<PathBuf> {
    let (dir, account) = (at.dir, at.account);
    // A tmpdir of its own: at every start (and in mariadb-install-db's
    // bootstrap) the server deletes each `#sql*` file it may in its tmpdir,
    // so a shared /tmp loses another server's temporary tables, and two
    // servers starting at once break each other's installation.
    let tmp = dir.join("tmp");
    // secure_file_priv of its own too: a build's compiled-in default
    // (Debian's MySQL: /var/lib/mysql-files) need not exist, and the server
    // refuses to start without it.
    let files = dir.join("files");
    for d in [&tmp, &files] {
        std::fs::create_dir(d).map_err(super::io("cannot create", d))?;
        hand_over(d, account)?;
    }
    let cnf = dir.join("my.cnf");
    let text = format!(
        "[mysqld]\ndatadir = {}\ntmpdir = {}\nsecure-file-priv = {}\n\n# the given configuration\n{}\n\n# ibench's own, after it so that they win\n[mysqld]\nport = {}\nbind-address = 127.0.0.1\nsocket = {}\npid-file = {}\n",
        dir.join("data").display(),
        tmp.display(),
        files.display(),
        at.spec.config,
        at.port,
        socket(dir).display(),
        dir.join("mysqld.pid").display(),
    );
    std::fs::write(&cnf, text).map_err(super::io("cannot write", &cnf))?;
    hand_over(&cnf, account)?;
    Ok(cnf)
}

/// MariaDB's data directory by `mariadb-install-db`, which lives beside
/// the server, in ../scripts of a tarball, or on PATH.
fn install_mariadb(at: &Fresh<'_>, server: &Path, defaults: &str, fallbacks: Vec<PathBuf>) -> Result<()> {
    let bin = server.parent().expect("a file has a directory").to_path_buf();
    let mut places = vec![bin.clone()];
    if let Some(base) = bin.parent() {
        places.push(base.join("scripts"));
        places.push(base.join("bin"));
    }
    places.extend(fallbacks);
    let install = find_binary(None, &["mariadb-install-db", "mysql_install_db"], &places)?;
    let mut cmd = Command::new(install);
    cmd.arg(defaults).arg("--auth-root-authentication-method=normal");
    if let (Some(_), Some(base)) = (&at.spec.bin, bin.parent()) {
        cmd.arg(format!("--basedir={}", base.display()));
    }
    setup(cmd, at.account, &at.dir.join("install.log"), "mariadb-install-db")
}

/// True once the server accepts a connection on its socket in `dir` (and
/// has database `test`).
pub(super) fn ready(dir: &Path) -> bool {
    let opts = mysql::OptsBuilder::new()
        .socket(Some(socket(dir).to_string_lossy()))
        .user(Some("root"))
        .tcp_connect_timeout(Some(std::time::Duration::from_secs(1)));
    match mysql::Conn::new(opts) {
        Ok(mut c) => c.query_drop("CREATE DATABASE IF NOT EXISTS test").is_ok(),
        Err(_) => false,
    }
}

/// Creates `user` identified by `password`, with every privilege, as root
/// over the socket in `dir`: at host `%`, and at `localhost` too, where
/// mariadb-install-db's anonymous account would otherwise match a login
/// from 127.0.0.1 first.
pub(super) fn create_user(dir: &Path, user: &str, password: &str) -> Result<()> {
    let opts = mysql::OptsBuilder::new()
        .socket(Some(socket(dir).to_string_lossy()))
        .user(Some("root"));
    let fail = |e: mysql::Error| Error::config("user", format!("cannot create {user:?} on the managed server: {e}"));
    let mut c = mysql::Conn::new(opts).map_err(fail)?;
    let quoted = |s: &str| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"));
    for host in ["%", "localhost"] {
        let account = format!("{}@'{host}'", quoted(user));
        c.query_drop(format!("CREATE USER {account} IDENTIFIED BY {}", quoted(password)))
            .and_then(|()| c.query_drop(format!("GRANT ALL ON *.* TO {account} WITH GRANT OPTION")))
            .map_err(fail)?;
    }
    Ok(())
}

/// The server's socket, in its directory `dir`.
fn socket(dir: &Path) -> PathBuf {
    dir.join("mysqld.sock")
}
