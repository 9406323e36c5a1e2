//! The `ibench` command; everything lives in [`ibench::cli`].

fn main() {
    std::process::exit(ibench::cli::main(std::env::args_os()));
}
