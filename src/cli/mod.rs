//! The `ibench` command line: one grammar, defined here, used by the Rust
//! binary and by the Python package's `ibench` script alike.

mod campaign;
mod gen;
mod progress;
mod run;
pub mod summary;

use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// Deterministic database benchmarking.
#[derive(Debug, Parser)]
#[command(name = "ibench", bin_name = "ibench", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Generate keys, values or Insert Benchmark rows into a Parquet file.
    #[command(subcommand)]
    Gen(gen::GenCommand),
    /// Run the Insert Benchmark and write its results as Parquet.
    Run(Box<run::RunArgs>),
    /// Write an HTML report (tables and plots) of one or more runs.
    Report(ReportArgs),
    /// Run a campaign: servers (ibench's own or given) × repeats, interleaved, then its report.
    Campaign(campaign::CampaignArgs),
    /// Export runs' rates and latencies for continuous benchmarking:
    /// `ibench export RUN_DIR... --format bencher|otava|github-action-benchmark [--measure M] [-o FILE]`.
    #[command(disable_help_flag = true)]
    Export(PythonArgs),
    /// Merge the shards of one run (`ibench run --shard I/N` on several
    /// hosts) into one run directory: `ibench merge RUN_DIR... -o OUT [--server DIR]`.
    #[command(disable_help_flag = true)]
    Merge(PythonArgs),
}

/// Runs the command line `args` (the first is the program name) and returns
/// the process exit code: 0 on success, 1 when the work failed, 2 for a usage
/// error, 128 + N when signal N stopped a run.
pub fn main<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let outcome = match cli.command {
        Command::Gen(cmd) => gen::run(cmd).map(|()| 0),
        Command::Run(args) => run::run(*args),
        Command::Report(args) => report(args).map(|()| 0),
        Command::Campaign(args) => campaign::run(args),
        Command::Export(args) => python_command("ibench.export", &args.args),
        Command::Merge(args) => python_command("ibench.merge", &args.args),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// Run directories, or folders of run directories.
    #[arg(required = true)]
    runs: Vec<std::path::PathBuf>,
    /// Label of the run the others are compared with (default: the first).
    #[arg(long)]
    base: Option<String>,
    /// The HTML file to write.
    #[arg(long, short = 'o', default_value = "report.html")]
    output: std::path::PathBuf,
}

/// The report is drawn by the Python package (pandas, matplotlib): run it
/// with the interpreter that launched us (IBENCH_PYTHON) or python3.
fn report(args: ReportArgs) -> crate::Result<()> {
    draw_report(&args.runs, args.base.as_deref(), &args.output)
}

#[derive(Debug, clap::Args)]
struct PythonArgs {
    /// The arguments, handed to the Python package as they are.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// The interpreter that runs the Python package's commands: the one that
/// launched us (IBENCH_PYTHON) or python3.
fn python() -> String {
    std::env::var("IBENCH_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// How the child of [`python_module`] gets the signals this process gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signals {
    /// As any child: in our process group, so a terminal's Ctrl-C reaches it directly.
    Shared,
    /// Every SIGINT, SIGTERM and SIGHUP this process gets, once: the child is
    /// in a process group of its own, so a terminal's Ctrl-C reaches it only
    /// through here, and it can stop its work cleanly.
    Forwarded,
}

/// Runs `python -m module args` with `env` added, its signals as `signals`
/// says; returns how it ended.
fn python_module<S: AsRef<std::ffi::OsStr>>(
    module: &str,
    args: &[S],
    env: &[(&str, String)],
    signals: Signals,
) -> crate::Result<std::process::ExitStatus> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use std::os::unix::process::CommandExt;
    let python = python();
    let io_error = |source| crate::Error::Io {
        action: "cannot run the Python package with",
        path: python.clone().into(),
        source,
    };
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", module])
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)));
    // Registered before the child starts, so no signal in between is lost.
    let forwarded = match signals {
        Signals::Shared => None,
        Signals::Forwarded => {
            cmd.process_group(0);
            Some(signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]).map_err(io_error)?)
        }
    };
    let mut child = cmd.spawn().map_err(io_error)?;
    let forwarder = forwarded.map(|mut forwarded| {
        let pid = child.id() as libc::pid_t;
        let handle = forwarded.handle();
        let thread = std::thread::spawn(move || {
            for signal in forwarded.forever() {
                // SAFETY: kill(2) on the child's pid; at worst the child is gone (ESRCH).
                unsafe {
                    libc::kill(pid, signal);
                }
            }
        });
        (handle, thread)
    });
    let status = child.wait().map_err(io_error);
    if let Some((handle, thread)) = forwarder {
        handle.close();
        let _ = thread.join();
    }
    status
}

/// Runs the command `ibench module` as `python -m ibench.module args`;
/// returns its exit code (1 when a signal ended it).
fn python_command(module: &str, args: &[String]) -> crate::Result<i32> {
    Ok(python_module(module, args, &[], Signals::Shared)?.code().unwrap_or(1))
}

/// The exit code of a command that ran a Python module with its signals
/// forwarded: the module's own, or 128 + N when signal N stopped it.
fn stopped_exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Draws the HTML report of `runs` into `output` with the Python package.
fn draw_report(runs: &[std::path::PathBuf], base: Option<&str>, output: &std::path::Path) -> crate::Result<()> {
    use std::ffi::OsStr;
    let mut args: Vec<&OsStr> = runs.iter().map(|r| r.as_os_str()).collect();
    args.extend([OsStr::new("--output"), output.as_os_str()]);
    if let Some(base) = base {
        args.extend([OsStr::new("--base"), OsStr::new(base)]);
    }
    let status = python_module("ibench.report", &args, &[], Signals::Shared)?;
    if status.success() {
        Ok(())
    } else {
        Err(crate::Error::format(
            "ibench report",
            format!("{} -m ibench.report failed ({status})", python()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
