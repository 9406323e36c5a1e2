//! The `ibench` command line: one grammar, defined here, used by the Rust
//! binary and by the Python package's `ibench` script alike.

mod gen;
mod run;

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
}

/// Runs the command line `args` (the first is the program name) and returns
/// the process exit code: 0 on success, 1 when the work failed, 2 for a usage
/// error.
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
        Command::Gen(cmd) => gen::run(cmd),
        Command::Run(args) => run::run(*args),
    };
    match outcome {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
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
