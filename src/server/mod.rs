//! Servers ibench starts itself: a fresh data directory (initdb;
//! mariadb-install-db or mysqld --initialize-insecure), the given
//! configuration appended to it, a free port on 127.0.0.1, the user the
//! server needs (ibench running as root starts PostgreSQL as `postgres`,
//! MySQL/MariaDB as `mysql`), a wait until it accepts connections (asked
//! through its own socket, so another process on its port cannot pass for
//! it; a port taken before the server bound it means another port), and a
//! clean stop that leaves nothing running and removes the data directory
//! (unless kept). Dropping a [`Managed`] server stops it too, so no path
//! (an error, a stop request, a panic) leaves one behind.
//!
//! `postgres.rs` and `mysql.rs` know each server's commands; this file the
//! process, its user, its directory and its log.

mod mysql;
mod postgres;

use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server gets to accept connections after it starts.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a clean stop may take before the server is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(120);

/// The kinds of server ibench can start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// PostgreSQL.
    Postgres,
    /// MariaDB.
    Mariadb,
    /// MySQL (or Percona Server).
    Mysql,
}

impl Kind {
    /// Parses `postgres`, `mariadb` or `mysql`.
    pub fn parse(name: &str) -> Result<Kind> {
        match name {
            "postgres" | "postgresql" => Ok(Kind::Postgres),
            "mariadb" => Ok(Kind::Mariadb),
            "mysql" => Ok(Kind::Mysql),
            _ => Err(Error::config(
                "kind",
                format!("{name:?}: expected postgres, mariadb or mysql"),
            )),
        }
    }

    /// Its name, as a campaign file spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Postgres => "postgres",
            Kind::Mariadb => "mariadb",
            Kind::Mysql => "mysql",
        }
    }

    /// The signal that shuts the server down cleanly and at once:
    /// PostgreSQL's fast shutdown (SIGINT), MySQL's SIGTERM.
    fn shutdown_signal(self) -> libc::c_int {
        match self {
            Kind::Postgres => libc::SIGINT,
            Kind::Mariadb | Kind::Mysql => libc::SIGTERM,
        }
    }

    /// The account the server runs as when ibench runs as root.
    fn user(self) -> &'static str {
        match self {
            Kind::Postgres => "postgres",
            Kind::Mariadb | Kind::Mysql => "mysql",
        }
    }
}

/// A server to start.
#[derive(Clone, Debug)]
pub struct ServerSpec {
    /// What it is.
    pub kind: Kind,
    /// The directory holding this version's server binaries (`initdb` and
    /// `postgres`; `mariadbd` or `mysqld`); None: the ones installed.
    pub bin: Option<PathBuf>,
    /// Text appended to the fresh server's configuration (postgresql.conf
    /// lines; my.cnf lines, read in its `[mysqld]` section unless they name
    /// another).
    pub config: String,
    /// Where the server's directory is made (a new subdirectory).
    pub work_dir: PathBuf,
    /// Keep the data directory after the stop.
    pub keep_data: bool,
}

/// A running server ibench started.
#[derive(Debug)]
pub struct Managed {
    kind: Kind,
    child: Option<Child>,
    port: u16,
    /// The server's own directory: data, socket, configuration, log.
    dir: PathBuf,
    log: PathBuf,
    keep_data: bool,
    version: String,
}

/// The user to run the server as: (uid, gid) of `name` when ibench runs as
/// root (servers refuse root), else None (the current user).
fn server_account(name: &str) -> Result<Option<(u32, u32)>> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let cname = std::ffi::CString::new(name).expect("no NUL in a user name");
    // SAFETY: getpwnam returns a pointer into static storage or null; we copy
    // the ids out at once, on this thread.
    let pw = unsafe { libc::getpwnam(cname.as_ptr()) };
    if pw.is_null() {
        return Err(Error::config(
            "server",
            format!("ibench runs as root and the server must not: there is no user {name:?} to run it as"),
        ));
    }
    // SAFETY: pw is non-null and points at a passwd record.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some((uid, gid)))
}

/// How many ports [`Managed::start`] tries before it gives up.
const PORT_ATTEMPTS: u32 = 3;

/// A free TCP port on 127.0.0.1 (the kernel's choice; free when asked).
fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|source| Error::Io {
        action: "cannot find a free port",
        path: PathBuf::from("127.0.0.1"),
        source,
    })?;
    Ok(listener.local_addr().map(|a| a.port()).unwrap_or(0))
}

/// True when another process holds `port` on 127.0.0.1 (after the server
/// that was to listen there has exited: it is not that server).
fn port_taken(port: u16) -> bool {
    matches!(
        std::net::TcpListener::bind(("127.0.0.1", port)),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse
    )
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Io { action, path, source }
}

/// What a server's log says about a failure: its error lines (up to ten),
/// then its last `lines` lines.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    let last = all.len().saturating_sub(lines);
    let errors: Vec<&str> = all[..last]
        .iter()
        .filter(|l| ["ERROR", "FATAL", "PANIC"].iter().any(|w| l.contains(w)))
        .take(10)
        .copied()
        .collect();
    let mut out = errors.join("\n");
    if !out.is_empty() {
        out.push_str("\n...\n");
    }
    out.push_str(&all[last..].join("\n"));
    out
}

/// Runs a setup command (initdb, mariadb-install-db) as the server's user,
/// its output into `log`; an error with the log's tail when it fails.
fn setup(mut cmd: Command, account: Option<(u32, u32)>, log: &Path, what: &str) -> Result<()> {
    let out = File::create(log).map_err(io("cannot create", log))?;
    let err = out.try_clone().map_err(io("cannot create", log))?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    if let Some((uid, gid)) = account {
        cmd.uid(uid).gid(gid);
    }
    let program = cmd.get_program().to_string_lossy().into_owned();
    let status = cmd
        .status()
        .map_err(|e| Error::config("server", format!("cannot run {program}: {e}")))?;
    if !status.success() {
        return Err(Error::config(
            "server",
            format!("{what} failed ({status}):\n{}", tail(log, 20)),
        ));
    }
    Ok(())
}

/// Where a fresh server is set up: its spec, its own directory, its port
/// and the account it runs as (None: ibench's).
pub(super) struct Fresh<'a> {
    pub(super) spec: &'a ServerSpec,
    pub(super) dir: &'a Path,
    pub(super) port: u16,
    pub(super) account: Option<(u32, u32)>,
}

/// A server's data directory, set up: the command that starts the server,
/// and the version its binary reports.
pub(super) struct Prepared {
    pub(super) start: Command,
    pub(super) version: String,
}

/// What `binary --version` prints, trimmed.
fn version_of(binary: &Path) -> Result<String> {
    Command::new(binary)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .map_err(|e| Error::config("bin", format!("cannot run {}: {e}", binary.display())))
}

/// Makes `path` the server's (its user's, when ibench is root).
fn hand_over(path: &Path, account: Option<(u32, u32)>) -> Result<()> {
    if let Some((uid, gid)) = account {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(io("cannot hand over", path))?;
    }
    Ok(())
}

/// The first of `names` found in `bin` (when given) or in `fallbacks`.
fn find_binary(bin: Option<&Path>, names: &[&str], fallbacks: &[PathBuf]) -> Result<PathBuf> {
    let dirs: Vec<PathBuf> = match bin {
        Some(b) => vec![b.to_path_buf()],
        None => fallbacks.to_vec(),
    };
    for dir in &dirs {
        for name in names {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(Error::config(
        "bin",
        format!(
            "no {} in {}",
            names.join(" or "),
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

/// A new directory under `parent`, named for the server and this process.
fn fresh_dir(parent: &Path, kind: Kind) -> Result<PathBuf> {
    let name = format!("{kind:?}").to_lowercase();
    for n in 0u32.. {
        let dir = parent.join(format!("ibench-{name}-{}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io("cannot create", &dir)(e)),
        }
    }
    unreachable!("a free name exists")
}

/// Makes `dir` the server's: its user must be able to reach and own it
/// (every directory above it searchable by other users).
fn open_to_server(dir: &Path, account: Option<(u32, u32)>, kind: Kind) -> Result<()> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).map_err(io("cannot open up", dir))?;
    hand_over(dir, account)?;
    if account.is_none() {
        return Ok(());
    }
    for parent in dir.ancestors().skip(1) {
        let mode = std::fs::metadata(parent).map(|m| m.permissions().mode()).unwrap_or(0);
        if mode & 0o001 == 0 {
            return Err(Error::config(
                "work_dir",
                format!(
                    "{} is not searchable by other users, so the server's user ({}) cannot reach its directory under it",
                    parent.display(),
                    kind.user()
                ),
            ));
        }
    }
    Ok(())
}

/// Starts the server's command as its user, in a process group of its
/// own, its output into `log`; the kernel asks it to shut down should
/// ibench die.
fn spawn(mut cmd: Command, log: &Path, account: Option<(u32, u32)>, kind: Kind) -> Result<Child> {
    let out = File::create(log).map_err(io("cannot create", log))?;
    hand_over(log, account)?;
    let err = out.try_clone().map_err(io("cannot create", log))?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    // Its own process group: a terminal's Ctrl-C reaches ibench, which stops it cleanly.
    cmd.process_group(0);
    if let Some((uid, gid)) = account {
        cmd.uid(uid).gid(gid);
    }
    // Should ibench itself die (SIGKILL, an abort), the kernel asks the
    // server to shut down: PostgreSQL's fast shutdown, MySQL's SIGTERM.
    // Set after the change of user, which would clear it.
    let on_parent_death = kind.shutdown_signal();
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: prctl and getppid are async-signal-safe; nothing is allocated.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, on_parent_death as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // ibench died between the fork and the prctl: nobody would stop the server.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("ibench exited while starting the server"));
            }
            Ok(())
        });
    }
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.spawn()
        .map_err(|e| Error::config("server", format!("cannot start {program}: {e}")))
}

/// The directories of PATH.
fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

impl Managed {
    /// Creates a fresh data directory under `spec.work_dir`, starts the
    /// server on a free port and waits until it accepts connections. A
    /// server that refuses its configuration is an error with its log's tail.
    pub fn start(spec: &ServerSpec) -> Result<Managed> {
        Self::start_on(spec, free_port)
    }

    /// [`Managed::start`] on the ports `ports` gives: another process can
    /// take a free port before the server binds it, and then the server
    /// starts again, in a fresh directory, on the next one.
    fn start_on(spec: &ServerSpec, mut ports: impl FnMut() -> Result<u16>) -> Result<Managed> {
        let account = server_account(spec.kind.user())?;
        std::fs::create_dir_all(&spec.work_dir).map_err(io("cannot create", &spec.work_dir))?;
        let mut attempt = 1;
        loop {
            let dir = fresh_dir(&spec.work_dir, spec.kind)?;
            let port = ports()?;
            let e = match Self::start_in(spec, &dir, account, port) {
                Ok(server) => return Ok(server),
                Err(e) => e,
            };
            let again = attempt < PORT_ATTEMPTS && port_taken(port);
            if again || !spec.keep_data {
                let _ = std::fs::remove_dir_all(&dir);
            }
            if !again {
                return Err(e);
            }
            attempt += 1;
        }
    }

    /// Sets a server up in `dir` and starts it on `port`: the directory
    /// opened to the server's user, the data directory made and configured,
    /// the server spawned, and a wait until it accepts connections.
    fn start_in(spec: &ServerSpec, dir: &Path, account: Option<(u32, u32)>, port: u16) -> Result<Managed> {
        open_to_server(dir, account, spec.kind)?;
        let fresh = Fresh {
            spec,
            dir,
            port,
            account,
        };
        let prepared = match spec.kind {
            Kind::Postgres => postgres::prepare(&fresh)?,
            Kind::Mariadb | Kind::Mysql => mysql::prepare(&fresh)?,
        };
        let log = dir.join("server.log");
        let child = spawn(prepared.start, &log, account, spec.kind)?;
        let mut server = Managed {
            kind: spec.kind,
            child: Some(child),
            port,
            dir: dir.to_path_buf(),
            log,
            keep_data: spec.keep_data,
            version: prepared.version,
        };
        server.wait_ready()?;
        Ok(server)
    }

    /// Waits until the server accepts connections; an error with the log's
    /// tail when it exits first or takes too long.
    fn wait_ready(&mut self) -> Result<()> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                self.child = None;
                return Err(Error::config(
                    "server",
                    format!(
                        "the {:?} server exited at start-up ({status}); the end of its log:\n{}",
                        self.kind,
                        tail(&self.log, 20)
                    ),
                ));
            }
            // Asked through the server's own socket: another process may
            // listen on its port, and only this server answers there (both
            // servers bind their TCP port before they create the socket, and
            // exit when they cannot).
            let ready = match self.kind {
                Kind::Postgres => postgres::ready(&self.dir, self.port),
                Kind::Mariadb | Kind::Mysql => mysql::ready(&self.dir),
            };
            if ready {
                return Ok(());
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(Error::config(
                    "server",
                    format!(
                        "the {:?} server did not accept connections within {} s; the end of its log:\n{}",
                        self.kind,
                        START_TIMEOUT.as_secs(),
                        tail(&self.log, 20)
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The DSN of the server's administrator (PostgreSQL `postgres` on
    /// database `postgres`; MySQL/MariaDB `root` on database `test`).
    pub fn dsn(&self) -> String {
        match self.kind {
            Kind::Postgres => format!("postgres://postgres@127.0.0.1:{}/postgres", self.port),
            Kind::Mariadb | Kind::Mysql => format!("mysql://root@127.0.0.1:{}/test", self.port),
        }
    }

    /// Creates account `user` with `password` and every privilege on the
    /// fresh server (MariaDB and MySQL: its server's default authentication
    /// plugin, MySQL 8+'s caching_sha2_password), so runs log in as a user
    /// with a password rather than as root without one; returns the DSN
    /// that names it (the password stays out of it).
    pub fn create_user(&self, user: &str, password: &str) -> Result<String> {
        match self.kind {
            Kind::Mariadb | Kind::Mysql => mysql::create_user(&self.dir, user, password)?,
            Kind::Postgres => {
                return Err(Error::config(
                    "user",
                    "a managed PostgreSQL trusts its local connections: a user with a password is for mariadb and mysql servers",
                ))
            }
        }
        Ok(format!("mysql://{user}@127.0.0.1:{}/test", self.port))
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The server's log.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The server's directory (data, socket, configuration, log).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The server's version, as its binary reports it.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Stops the server cleanly (PostgreSQL's fast shutdown, MySQL's
    /// SIGTERM), killing it if it has not stopped within two minutes, and
    /// removes its directory unless kept. The log is copied to `keep_log`
    /// first, when given.
    pub fn stop(mut self, keep_log: Option<&Path>) -> Result<()> {
        let stopped = self.shut_down();
        if let Some(to) = keep_log {
            std::fs::copy(&self.log, to).map_err(io("cannot copy the server log to", to))?;
        }
        stopped
    }

    fn shut_down(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return self.remove();
        };
        // SAFETY: kill with a pid we started and still own (not yet reaped).
        unsafe { libc::kill(child.id() as libc::pid_t, self.kind.shutdown_signal()) };
        let start = Instant::now();
        let clean = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if start.elapsed() < STOP_TIMEOUT => std::thread::sleep(Duration::from_millis(50)),
                _ => break None,
            }
        };
        if clean.is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.remove()?;
        match clean {
            Some(_) => Ok(()),
            None => Err(Error::config(
                "server",
                format!(
                    "the {:?} server did not stop within {} s and was killed",
                    self.kind,
                    STOP_TIMEOUT.as_secs()
                ),
            )),
        }
    }

    /// Removes the data directory (unless kept), keeping the log beside it.
    fn remove(&self) -> Result<()> {
        if self.keep_data || !self.dir.exists() {
            return Ok(());
        }
        for entry in std::fs::read_dir(&self.dir)
            .map_err(io("cannot read", &self.dir))?
            .flatten()
        {
            let path = entry.path();
            if path == self.log {
                continue;
            }
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(io("cannot remove", &path))?;
        }
        Ok(())
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        let _ = self.shut_down();
        if !self.keep_data {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::mysql::prelude::Queryable;

    /// A directory of the test's own, which the server's user can reach.
    fn work_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    fn spec(kind: Kind, work_dir: &Path) -> ServerSpec {
        ServerSpec {
            kind,
            bin: None,
            config: String::new(),
            work_dir: work_dir.to_path_buf(),
            keep_data: false,
        }
    }

    /// The port taken by another server between the choice and the bind:
    /// that server answers on it, so only the socket tells the two apart.
    #[test]
    fn a_port_another_postgres_took_is_not_mistaken_for_ours() {
        let work = work_dir();
        let other = Managed::start(&spec(Kind::Postgres, work.path())).unwrap();
        let mut ports = [Ok(other.port())].into_iter().chain(std::iter::repeat_with(free_port));
        let ours = Managed::start_on(&spec(Kind::Postgres, work.path()), || ports.next().unwrap()).unwrap();
        assert_ne!(ours.port(), other.port());
        let mut c = ::postgres::Client::connect(&ours.dsn(), ::postgres::NoTls).unwrap();
        let data: String = c.query_one("SHOW data_directory", &[]).unwrap().get(0);
        assert_eq!(
            Path::new(&data).canonicalize().unwrap(),
            ours.dir().join("data").canonicalize().unwrap(),
            "the DSN reaches this server"
        );
        drop(c);
        let dirs = std::fs::read_dir(work.path()).unwrap().count();
        assert_eq!(dirs, 2, "the first attempt's directory is removed");
    }

    /// A port held by something that accepts connections and never answers:
    /// the start neither waits on it nor gives up.
    #[test]
    fn mariadb_starts_on_the_next_port_when_its_port_is_held() {
        let work = work_dir();
        let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = held.local_addr().unwrap().port();
        let mut ports = [Ok(port)].into_iter().chain(std::iter::repeat_with(free_port));
        let ours = Managed::start_on(&spec(Kind::Mariadb, work.path()), || ports.next().unwrap()).unwrap();
        assert_ne!(ours.port(), port);
        let mut c = ::mysql::Conn::new(::mysql::Opts::from_url(&ours.dsn()).unwrap()).unwrap();
        let data: Option<String> = c.query_first("SELECT @@datadir").unwrap();
        let data = PathBuf::from(data.unwrap());
        assert_eq!(
            data.canonicalize().unwrap(),
            ours.dir().join("data").canonicalize().unwrap()
        );
        assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 1);
        drop(held);
    }
}
