//! Signals sent to real `ibench run` processes: SIGINT, SIGTERM and SIGHUP
//! stop the run between operations, cancel a statement blocked on the
//! server, restore what ibench changed (a second Ctrl-C included), write the
//! partial step as `interrupted` and exit with 128 + the signal.

mod common;

use common::{mysql_admin, mysql_db, postgres_admin, postgres_db};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `ibench run ARGS --out OUT`, its output in files under `out`.
fn start(out: &Path, args: &[&str]) -> Child {
    std::fs::create_dir_all(out).unwrap();
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(out)
        .stdout(std::fs::File::create(out.join("stdout.txt")).unwrap())
        .stderr(std::fs::File::create(out.join("stderr.txt")).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

fn send(child: &Child, signal: i32) {
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// The exit code, waiting at most `limit`; panics (after killing it) when the process hangs.
fn exit_code(child: &mut Child, limit: Duration) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().expect("exited, not killed");
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("ibench run did not exit within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `ready` holds (at most 60 s).
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < Duration::from_secs(60), "never saw {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The run directory under `out` (the one holding runs.parquet).
fn run_dir(out: &Path) -> PathBuf {
    std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("runs.parquet").is_file())
        .expect("a run directory")
}

fn column(dir: &Path, table: &str, name: &str) -> Vec<String> {
    let file = std::fs::File::open(dir.join(format!("{table}.parquet"))).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let col = batch.column_by_name(name).unwrap();
        let s = col.as_any().downcast_ref::<arrow::array::StringArray>().unwrap();
        out.extend(s.iter().map(|v| v.unwrap_or("").to_string()));
    }
    out
}

/// The run and its steps' statuses as written.
fn statuses(out: &Path) -> (String, Vec<(String, String)>) {
    let dir = run_dir(out);
    let run = column(&dir, "runs", "status").remove(0);
    let steps = column(&dir, "steps", "step")
        .into_iter()
        .zip(column(&dir, "steps", "status"))
        .collect();
    (run, steps)
}

fn stderr(out: &Path) -> String {
    std::fs::read_to_string(out.join("stderr.txt")).unwrap_or_default()
}

#[test]
fn sigint_sigterm_and_sighup_stop_a_run_as_ctrl_c_does() {
    for (signal, name) in [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut child = start(
            &out,
            &["--db", "null:", "--steps", "l.i0,qr100,qp100", "--query-seconds", "60"],
        );
        wait_for("the q step start", || stderr(&out).contains("qr100: started"));
        std::thread::sleep(Duration::from_millis(500));
        send(&child, signal);
        let code = exit_code(&mut child, Duration::from_secs(10));
        assert_eq!(code, 128 + signal, "{name}: {}", stderr(&out));
        let (run, steps) = statuses(&out);
        assert_eq!(run, "interrupted", "{name}");
        assert_eq!(
            steps,
            vec![
                ("l.i0".to_string(), "ok".to_string()),
                ("qr100".into(), "interrupted".into())
            ],
            "{name}"
        );
    }
}

/// Runs `admin` SQL on PostgreSQL.
fn pg(sql: &str) -> Vec<postgres::Row> {
    let mut c = postgres::Client::connect(&postgres_admin(), postgres::NoTls).unwrap();
    c.query(sql, &[]).unwrap()
}

/// A PostgreSQL database `name` holding a small loaded table pi1 (l.i0 run to completion).
fn pg_loaded(name: &str) -> Option<String> {
    let db = postgres_db(name).filter(|d| !d.is_empty())?;
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(dir.path(), &["--db", &db, "--steps", "l.i0", "--rows-l-i0", "2000"]);
    assert_eq!(
        exit_code(&mut child, Duration::from_secs(120)),
        0,
        "{}",
        stderr(dir.path())
    );
    Some(db)
}

/// Holds a lock on pi1 from another connection until dropped.
struct PgLock {
    _holder: postgres::Client,
}

fn pg_lock(db: &str, mode: &str) -> PgLock {
    let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
    c.batch_execute(&format!("BEGIN; LOCK TABLE pi1 IN {mode} MODE"))
        .unwrap();
    PgLock { _holder: c }
}

/// True when a session of database `db` runs a statement starting with `prefix` waiting on a lock.
fn pg_waiting(db: &str, prefix: &str) -> bool {
    let sql = format!(
        "SELECT 1 FROM pg_stat_activity WHERE datname = '{db}' AND application_name LIKE 'ibench %'
         AND wait_event_type = 'Lock' AND query LIKE '{prefix}%'"
    );
    !pg(&sql).is_empty()
}

#[test]
fn a_signal_cancels_a_postgres_index_creation_blocked_on_a_lock() {
    let Some(db) = pg_loaded("ibench_sig_index") else {
        return;
    };
    // CREATE INDEX needs a SHARE lock; ROW EXCLUSIVE blocks it, not ibench's reads.
    let lock = pg_lock(&db, "ROW EXCLUSIVE");
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(dir.path(), &["--db", &db, "--steps", "l.x"]);
    wait_for("CREATE INDEX waiting", || {
        pg_waiting("ibench_sig_index", "CREATE INDEX")
    });
    let sent = Instant::now();
    send(&child, libc::SIGTERM);
    let code = exit_code(&mut child, Duration::from_secs(10));
    assert!(sent.elapsed() < Duration::from_secs(5), "{:?}", sent.elapsed());
    assert_eq!(code, 128 + libc::SIGTERM, "{}", stderr(dir.path()));
    assert_eq!(
        statuses(dir.path()),
        ("interrupted".into(), vec![("l.x".into(), "interrupted".into())])
    );
    drop(lock);
}

#[test]
fn a_signal_cancels_postgres_maintenance_blocked_on_a_lock() {
    let Some(db) = pg_loaded("ibench_sig_vacuum") else {
        return;
    };
    // VACUUM needs SHARE UPDATE EXCLUSIVE.
    let lock = pg_lock(&db, "SHARE UPDATE EXCLUSIVE");
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(dir.path(), &["--db", &db, "--steps", "wait", "--wait-seconds", "0"]);
    wait_for("VACUUM waiting", || pg_waiting("ibench_sig_vacuum", "VACUUM"));
    send(&child, libc::SIGHUP);
    assert_eq!(
        exit_code(&mut child, Duration::from_secs(10)),
        128 + libc::SIGHUP,
        "{}",
        stderr(dir.path())
    );
    assert_eq!(
        statuses(dir.path()),
        ("interrupted".into(), vec![("wait".into(), "interrupted".into())])
    );
    drop(lock);
}

#[test]
fn a_signal_cancels_a_postgres_read_of_the_tables_blocked_on_a_lock() {
    let Some(db) = pg_loaded("ibench_sig_read") else { return };
    // ACCESS EXCLUSIVE blocks even the reads of the tables' bounds (as verify's are).
    let lock = pg_lock(&db, "ACCESS EXCLUSIVE");
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(dir.path(), &["--db", &db, "--steps", "l.i1", "--rows-l-i1", "100"]);
    wait_for("the read waiting", || pg_waiting("ibench_sig_read", "SELECT"));
    send(&child, libc::SIGINT);
    assert_eq!(
        exit_code(&mut child, Duration::from_secs(10)),
        128 + libc::SIGINT,
        "{}",
        stderr(dir.path())
    );
    assert_eq!(run_status(dir.path()), "interrupted");
    drop(lock);
}

fn run_status(out: &Path) -> String {
    column(&run_dir(out), "runs", "status").remove(0)
}

/// A qp100 step of 60 s with 5 rows per insert, once it has run for half a second.
fn start_qp100(dir: &Path, db: &str) -> Child {
    let child = start(
        dir,
        &[
            "--db",
            db,
            "--steps",
            "qp100",
            "--query-seconds",
            "60",
            "--rows-per-commit-q",
            "5",
        ],
    );
    wait_for("the q step", || stderr(dir).contains("qp100: started"));
    std::thread::sleep(Duration::from_millis(500));
    child
}

/// SIGTERM ends the run as an interrupted qp100 step, with SIGTERM's exit code.
fn sigterm_interrupts_qp100(child: &mut Child, dir: &Path) {
    send(child, libc::SIGTERM);
    assert_eq!(
        exit_code(child, Duration::from_secs(10)),
        128 + libc::SIGTERM,
        "{}",
        stderr(dir)
    );
    assert_eq!(
        statuses(dir),
        ("interrupted".into(), vec![("qp100".into(), "interrupted".into())])
    );
}

#[test]
fn a_signal_cancels_a_postgres_insert_blocked_on_a_lock_mid_step() {
    let Some(db) = pg_loaded("ibench_sig_insert") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_qp100(dir.path(), &db);
    let lock = pg_lock(&db, "EXCLUSIVE");
    wait_for("an insert waiting", || pg_waiting("ibench_sig_insert", "INSERT"));
    sigterm_interrupts_qp100(&mut child, dir.path());
    drop(lock);
}

/// A MariaDB connection of the admin account.
fn my() -> mysql::Conn {
    mysql::Conn::new(mysql::Opts::from_url(&mysql_admin()).unwrap()).unwrap()
}

/// True when a session of schema `db` runs a statement starting with `prefix`
/// in a state containing `state`.
fn my_waiting(db: &str, prefix: &str, state: &str) -> bool {
    use mysql::prelude::Queryable;
    let n: Option<u64> = my()
        .query_first(format!(
            "SELECT COUNT(*) FROM information_schema.processlist WHERE db = '{db}'
             AND info LIKE '{prefix}%' AND state LIKE '%{state}%'"
        ))
        .unwrap();
    n.unwrap_or(0) > 0
}

fn my_loaded(name: &str) -> Option<String> {
    let db = mysql_db(name).filter(|d| !d.is_empty())?;
    let db = format!("{db}?engine=innodb");
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(dir.path(), &["--db", &db, "--steps", "l.i0", "--rows-l-i0", "2000"]);
    assert_eq!(
        exit_code(&mut child, Duration::from_secs(120)),
        0,
        "{}",
        stderr(dir.path())
    );
    Some(db)
}

#[test]
fn a_signal_cancels_a_mariadb_insert_blocked_on_a_lock_mid_step() {
    use mysql::prelude::Queryable;
    let Some(db) = my_loaded("ibench_sig_my_insert") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_qp100(dir.path(), &db);
    // The sessions' own client runs the insert: KILL QUERY must reach its connection.
    let mut locker = mysql::Conn::new(mysql::Opts::from_url(db.split('?').next().unwrap()).unwrap()).unwrap();
    locker.query_drop("LOCK TABLES pi1 READ").unwrap();
    wait_for("an insert waiting", || {
        my_waiting("ibench_sig_my_insert", "INSERT", "lock")
    });
    sigterm_interrupts_qp100(&mut child, dir.path());
    locker.query_drop("UNLOCK TABLES").unwrap();
}

#[test]
fn a_signal_cancels_a_mariadb_index_creation_blocked_on_a_lock() {
    use mysql::prelude::Queryable;
    let Some(db) = my_loaded("ibench_sig_index") else {
        return;
    };
    let mut locker = mysql::Conn::new(mysql::Opts::from_url(db.split('?').next().unwrap()).unwrap()).unwrap();
    locker.query_drop("LOCK TABLES pi1 READ").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(dir.path(), &["--db", &db, "--steps", "l.x"]);
    wait_for("ALTER TABLE waiting", || {
        my_waiting("ibench_sig_index", "ALTER TABLE", "metadata lock")
    });
    send(&child, libc::SIGTERM);
    assert_eq!(
        exit_code(&mut child, Duration::from_secs(10)),
        128 + libc::SIGTERM,
        "{}",
        stderr(dir.path())
    );
    assert_eq!(
        statuses(dir.path()),
        ("interrupted".into(), vec![("l.x".into(), "interrupted".into())])
    );
    locker.query_drop("UNLOCK TABLES").unwrap();
}

/// The tests that change MariaDB's dirty-page settings run one at a time.
static INNODB_LIMITS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_second_ctrl_c_during_the_wait_step_still_restores_innodbs_dirty_page_limit() {
    use mysql::prelude::Queryable;
    let _one = INNODB_LIMITS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(db) = my_loaded("ibench_sig_wait") else { return };
    let pct = || -> f64 {
        my().query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")
            .unwrap()
            .unwrap()
    };
    let before = pct();
    assert!(before > 0.0, "the server's limit is {before}");
    // Keep pages dirty so the wait step stays in its write-back with the limit lowered.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let url = db.split('?').next().unwrap().to_string();
        std::thread::spawn(move || {
            let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
            c.query_drop("CREATE TABLE IF NOT EXISTS churn (id INT PRIMARY KEY AUTO_INCREMENT, pad CHAR(200))")
                .unwrap();
            let rows = vec!["(NULL, REPEAT('x', 200))"; 500].join(",");
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                c.query_drop(format!("INSERT INTO churn VALUES {rows}")).unwrap();
            }
        })
    };
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(dir.path(), &["--db", &db, "--steps", "wait", "--wait-seconds", "60"]);
    wait_for("ibench lowering the limit", || pct() == 0.0);
    send(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(30));
    send(&child, libc::SIGINT);
    let code = exit_code(&mut child, Duration::from_secs(15));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    writer.join().unwrap();
    assert_eq!(pct(), before, "the dirty-page limit is restored");
    assert_eq!(code, 128 + libc::SIGINT, "{}", stderr(dir.path()));
    assert!(stderr(dir.path()).contains("still stopping"), "{}", stderr(dir.path()));
    assert_eq!(run_status(dir.path()), "interrupted");
}

#[test]
fn ctrl_c_during_the_reference_wait_restores_innodbs_dirty_page_settings() {
    use mysql::prelude::Queryable;
    let _one = INNODB_LIMITS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(db) = my_loaded("ibench_sig_refwait") else {
        return;
    };
    let settings = || -> (f64, f64) {
        my().query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct_lwm, @@GLOBAL.innodb_max_dirty_pages_pct")
            .unwrap()
            .unwrap()
    };
    let before = settings();
    assert_ne!(
        before,
        (1.0, 1.0),
        "the server already runs with the reference's wait settings"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(
        dir.path(),
        &[
            "--db",
            &db,
            "--steps",
            "wait",
            "--maintenance",
            "iibench",
            "--wait-seconds",
            "60",
        ],
    );
    wait_for("ibench setting the reference's limits", || settings() == (1.0, 1.0));
    send(&child, libc::SIGINT);
    let code = exit_code(&mut child, Duration::from_secs(15));
    assert_eq!(settings(), before, "both limits restored");
    assert_eq!(code, 128 + libc::SIGINT, "{}", stderr(dir.path()));
    assert_eq!(run_status(dir.path()), "interrupted");
}

#[test]
fn a_signal_cancels_a_mariadb_read_of_the_tables_blocked_on_a_lock() {
    use mysql::prelude::Queryable;
    let Some(db) = my_loaded("ibench_sig_read") else { return };
    let url = db.split('?').next().unwrap().to_string();
    // (The wait step's maintenance is cancelled in the second Ctrl-C's test.)
    for (steps, statement, signal) in [("wait", "SELECT", libc::SIGHUP), ("l.i1", "SELECT", libc::SIGINT)] {
        // A write lock held elsewhere blocks every read of the table (as verify's are).
        let mut locker = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
        locker.query_drop("LOCK TABLES pi1 WRITE").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut child = start(dir.path(), &["--db", &db, "--steps", steps, "--wait-seconds", "0"]);
        wait_for(statement, || my_waiting("ibench_sig_read", statement, "lock"));
        send(&child, signal);
        assert_eq!(
            exit_code(&mut child, Duration::from_secs(10)),
            128 + signal,
            "{}",
            stderr(dir.path())
        );
        assert_eq!(run_status(dir.path()), "interrupted", "{steps}");
        locker.query_drop("UNLOCK TABLES").unwrap();
    }
}
