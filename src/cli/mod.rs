//! The `ibench` command line: one grammar, defined here, used by the Rust
//! binary and by the Python package's `ibench` script alike.

mod gen;
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
    let python = std::env::var("IBENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "ibench.report"])
        .args(&args.runs)
        .arg("--output")
        .arg(&args.output);
    if let Some(base) = &args.base {
        cmd.args(["--base", base]);
    }
    let status = cmd.status().map_err(|source| crate::Error::Io {
        action: "cannot run the Python package with",
        path: python.clone().into(),
        source,
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(crate::Error::format(
            "ibench report",
            format!("{python} -m ibench.report failed ({status})"),
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
