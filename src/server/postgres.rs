//! PostgreSQL: `initdb` (trust authentication, superuser `postgres`), the
//! configuration appended to `postgresql.conf` (then ibench's port,
//! 127.0.0.1 and a socket directory of its own, which win), and
//! `postgres -D DATADIR` as a child process.

use super::{find_binary, hand_over, path_dirs, setup, version_of, Fresh, Prepared};
use crate::error::Result;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Installed versions' binaries, newest first (Debian's layout), after PATH.
fn installed() -> Vec<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    versions.sort_by_key(|p| {
        std::cmp::Reverse(
            p.parent()
                .and_then(|v| v.file_name())
                .and_then(|v| v.to_str())
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(0),
        )
    });
    path_dirs().into_iter().chain(versions).collect()
}

/// The fresh cluster in `dir/data`, configured; the command that starts it and its version.
pub(super) fn prepare(at: &Fresh<'_>) -> Result<Prepared> {
    let initdb = find_binary(at.spec.bin.as_deref(), &["initdb"], &installed())?;
    let bin = initdb.parent().expect("a file has a directory").to_path_buf();
    let postgres = find_binary(Some(&bin), &["postgres"], &[])?;
    let data = at.dir.join("data");
    let mut cmd = Command::new(&initdb);
    cmd.arg("-D")
        .arg(&data)
        .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-instructions"]);
    setup(cmd, at.account, &at.dir.join("initdb.log"), "initdb")?;
    configure(at, &data.join("postgresql.conf"))?;
    let version = version_of(&postgres)?;
    let mut start = Command::new(postgres);
    start.arg("-D").arg(&data);
    Ok(Prepared { start, version })
}

/// Appends the given configuration to `conf`, then ibench's port,
/// 127.0.0.1 and socket directory, which win.
fn configure(at: &Fresh<'_>, conf: &Path) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(conf)
        .map_err(super::io("cannot open", conf))?;
    let ours = format!(
        "\n# ibench's own, after the given configuration so that they win\nlisten_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\n",
        at.port,
        at.dir.display()
    );
    writeln!(f, "\n# the given configuration\n{}\n{ours}", at.spec.config).map_err(super::io("cannot write", conf))?;
    hand_over(conf, at.account)
}

/// True once the server accepts a connection on its socket in `dir`.
pub(super) fn ready(dir: &Path, port: u16) -> bool {
    postgres::Config::new()
        .host_path(dir)
        .port(port)
        .user("postgres")
        .dbname("postgres")
        .connect_timeout(std::time::Duration::from_secs(1))
        .connect(postgres::NoTls)
        .is_ok()
}
