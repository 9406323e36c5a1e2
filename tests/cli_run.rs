//! `ibench run`: the quick preset with no arguments, bad input refused
//! before any work, Ctrl-C leaving readable results.

use std::path::Path;
use std::process::{Command, Stdio};

fn ibench(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// A text column of the run recorded in a run directory's runs.parquet.
fn recorded(dir: &Path, column: &str) -> String {
    let file = std::fs::File::open(dir.join("runs.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batch = reader.into_iter().next().unwrap().unwrap();
    let col = batch.column_by_name(column).unwrap();
    col.as_any()
        .downcast_ref::<arrow::array::StringArray>()
        .unwrap()
        .value(0)
        .to_string()
}

fn run_dirs(root: &Path) -> Vec<std::path::PathBuf> {
    match std::fs::read_dir(root) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn with_no_arguments_it_runs_the_quick_preset_on_sqlite_under_ibench_results() {
    let dir = tempfile::tempdir().unwrap();
    let o = ibench(dir.path(), &["run", "--query-seconds", "0.5", "--wait-seconds", "0"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let runs = run_dirs(&dir.path().join("ibench-results"));
    assert_eq!(runs.len(), 1);
    for file in [
        "runs.parquet",
        "steps.parquet",
        "intervals.parquet",
        "histograms.parquet",
        "ibench.sqlite",
    ] {
        assert!(runs[0].join(file).is_file(), "{file} missing");
    }
    for step in [
        "l.i0", "l.x", "l.i1", "l.i2", "wait", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.trim_start().starts_with(step) && l.contains(" ok ")),
            "{step}: {stdout}"
        );
    }
    assert!(
        stderr.contains("verified"),
        "plain progress lines when not a terminal: {stderr}"
    );
}

#[test]
fn bad_input_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let unwritable = file.join("sub");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--steps", "l.i0,l.i9"], "unknown step \"l.i9\""),
        (vec!["--preset", "huge"], "unknown preset \"huge\""),
        (vec!["--rows-l-i0", "0"], "invalid rows_l_i0"),
        (vec!["--rows-l-i1", "-5"], "--rows-l-i1"),
        (vec!["--steps", "qr0"], "background rate must be > 0"),
        (vec!["--query-seconds", "0"], "invalid query_seconds"),
        (vec!["--db", "postgress//x"], "invalid db"),
        (vec!["--db", "mongodb://h/x"], "unknown database scheme"),
        (
            vec!["--out", unwritable.to_str().unwrap()],
            "cannot create the output directory",
        ),
    ];
    for (args, message) in cases {
        let mut all = vec!["run"];
        all.extend(&args);
        let o = ibench(dir.path(), &all);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(
            run_dirs(&dir.path().join("ibench-results")).is_empty(),
            "{args:?} started a run"
        );
    }
}

#[test]
fn a_config_file_sets_parameters_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("run.toml"),
        "db = \"null:\"\nclients = 2\nrows_l_i0 = 300\nsteps = [\"l.i0\", \"l.i1\"]\nrows_l_i1 = 100\n",
    )
    .unwrap();
    let o = ibench(
        dir.path(),
        &["run", "--config", "run.toml", "--clients", "3", "--label", "from-toml"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let runs = run_dirs(&dir.path().join("ibench-results"));
    let config = recorded(&runs[0], "config");
    let config: serde_json::Value = serde_json::from_str(&config).unwrap();
    assert_eq!(config["clients"], 3);
    assert_eq!(config["rows_l_i0"], 300);
    assert_eq!(config["label"], "from-toml");

    std::fs::write(dir.path().join("bad.toml"), "clientz = 2\n").unwrap();
    let o = ibench(dir.path(), &["run", "--config", "bad.toml"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid clientz: unknown parameter"));
}

#[test]
fn ctrl_c_stops_the_run_and_leaves_readable_results() {
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .current_dir(dir.path())
        .args(["run", "--db", "null:", "--steps", "l.i0,qr100", "--query-seconds", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed().as_secs() < 10);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("interrupted"), "{stdout}");
    let runs = run_dirs(&dir.path().join("ibench-results"));
    assert_eq!(recorded(&runs[0], "status"), "interrupted");
}
