//! Every run parameter is declared once (workload/config.rs) and reaches the
//! run from every front end: a flag, a TOML file, a JSON layer (Python
//! keywords and campaign files take this path), and the recorded
//! configuration. This test enumerates them: a parameter added without a
//! sample here fails it.

use ibench::workload::{Config, PARAMETERS};
use serde_json::{json, Value};
use std::process::Command;

/// A parameter's sample: its value in JSON, as a flag's text, what the
/// recorded configuration then holds, and the other parameters it needs.
struct Sample {
    json: Value,
    flag: &'static str,
    recorded: Value,
    with: Value,
}

fn sample(name: &str) -> Sample {
    let plain = |json: Value, flag: &'static str| Sample {
        recorded: json.clone(),
        json,
        flag,
        with: json!({}),
    };
    match name {
        "db" => plain(json!("null:"), "null:"),
        "preset" => plain(json!("small-1"), "small-1"),
        "steps" => plain(json!(["l.i0", "l.x"]), "l.i0,l.x"),
        "clients" => plain(json!(3), "3"),
        "shared_table" | "server_keys" | "reset_master" => plain(json!(true), "true"),
        "delete_per_insert" => plain(json!(false), "false"),
        "rows_l_i0" | "rows_l_i1" | "rows_l_i2" => plain(json!(7), "7"),
        "rows_per_commit_l_i0" | "rows_per_commit_l_i1" | "rows_per_commit_l_i2" | "rows_per_commit_q" => {
            plain(json!(9), "9")
        }
        "secondary_indexes" => plain(json!(2), "2"),
        "query_seconds" => plain(json!(2.5), "2.5"),
        "wait_seconds" => plain(json!(4.0), "4"),
        "data_length" => plain(json!([5, 9]), "5..9"),
        "ratio" => plain(json!(0.25), "0.25"),
        "seed" => plain(json!(42), "42"),
        "statements" => plain(json!("literal"), "literal"),
        "data" | "maintenance" | "compat" => plain(json!("iibench"), "iibench"),
        "data_random_pct" => plain(json!(30), "30"),
        "lx_rows" => plain(json!(11), "11"),
        "max_seconds" => plain(json!(60.0), "60"),
        "interval_seconds" => plain(json!(0.5), "0.5"),
        "flush_seconds" => plain(json!(5.0), "5"),
        "profile" => plain(json!("waits"), "waits"),
        "wait_sampling_hz" => plain(json!(4.0), "4"),
        "profile_frequency" => plain(json!(199), "199"),
        "profile_client" => plain(json!(true), "true"),
        "verify_sample" => plain(json!(7), "7"),
        "verify" => plain(json!("full"), "full"),
        "max_delete_lag" => plain(json!(3), "3"),
        "label" => plain(json!("x"), "x"),
        "password_file" => plain(json!("/nonexistent/pw"), "/nonexistent/pw"),
        "num" => plain(json!(5000), "5000"),
        "key_size" => plain(json!(12), "12"),
        "value_size" => plain(json!([50, 60]), "50..60"),
        "value_alphabet" => plain(json!("printable"), "printable"),
        "value_source" => plain(json!("pool"), "pool"),
        "batch_size" => plain(json!(4), "4"),
        "threads" => plain(json!(2), "2"),
        "writes" => plain(json!(100), "100"),
        "overwritesome_writes" => plain(json!(50), "50"),
        "reads" => plain(json!(70), "70"),
        "duration" => plain(json!(5.0), "5"),
        "seek_nexts" => plain(json!(3), "3"),
        "writer_rate" => plain(json!(500), "500"),
        "distribution" => plain(json!("zipfian"), "zipfian"),
        "zipf_theta" => plain(json!(0.8), "0.8"),
        "pacing" => plain(json!("sleep"), "sleep"),
        "shard" => Sample {
            with: json!({"clients": 2}),
            ..plain(json!("0/2"), "0/2")
        },
        "start_at" => Sample {
            json: json!(1_800_000_000.0),
            flag: "2027-01-15T08:00:00Z",
            recorded: json!(1_800_000_000.0),
            with: json!({}),
        },
        "step_options" => Sample {
            with: json!({"db": "rocksdb:/nonexistent/kv", "steps": ["fillseq"]}),
            ..plain(json!({"fillseq": "wal=off"}), "fillseq:wal=off")
        },
        "tables" => plain(json!(3), "3"),
        "table_size" => plain(json!(500), "500"),
        "read_seconds" => plain(json!(2.5), "2.5"),
        "write_seconds" => plain(json!(3.5), "3.5"),
        "insert_seconds" => plain(json!(4.5), "4.5"),
        "scan_warm_seconds" => plain(json!(6.0), "6"),
        "warmup_seconds" => plain(json!(2.0), "2"),
        "load_connections" => plain(json!(2), "2"),
        "postwrite_seconds" => plain(json!(7.0), "7"),
        "k_distribution" => plain(json!("zipfian"), "zipfian"),
        "id_distribution" => plain(json!("latest"), "latest"),
        "rand_zipfian_exp" => plain(json!(0.9), "0.9"),
        "events_per_second" => plain(json!(250.0), "250"),
        _ => panic!("no sample for parameter {name}: add one to tests/params.rs"),
    }
}

/// The configuration `ibench run --print-config` resolves from `args`.
fn printed(args: &[String]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .arg("run")
        .args(args)
        .arg("--print-config")
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `with` as flags.
fn flags(with: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in with.as_object().unwrap() {
        out.push(format!("--{}", k.replace('_', "-")));
        out.push(match v {
            Value::String(s) => s.clone(),
            Value::Array(a) => a
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
                .join(","),
            v => v.to_string(),
        });
    }
    out
}

#[test]
fn every_parameter_is_accepted_by_every_front_end_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    for p in PARAMETERS {
        let s = sample(p.name);
        assert!(!p.doc.trim().is_empty(), "{} has no documentation", p.name);
        // A JSON layer: Python's keywords and a campaign's [run].
        let mut layer = s.with.as_object().unwrap().clone();
        layer.insert(p.name.into(), s.json.clone());
        let c = Config::resolve(std::slice::from_ref(&layer)).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        let recorded = c.to_map();
        assert_eq!(recorded[p.name], s.recorded, "{} from JSON", p.name);
        assert_ne!(
            Config::default().to_map()[p.name],
            s.recorded,
            "{}: the sample must differ from the default",
            p.name
        );
        // A TOML file.
        let file = dir.path().join(format!("{}.toml", p.name));
        let table: toml::Table = serde_json::from_value(Value::Object(layer.clone())).unwrap();
        std::fs::write(&file, toml::to_string(&table).unwrap()).unwrap();
        let from_toml = printed(&["--config".into(), file.display().to_string()]);
        assert_eq!(from_toml[p.name], s.recorded, "{} from TOML", p.name);
        // A flag.
        let mut args = flags(&s.with);
        args.push(format!("--{}", p.name.replace('_', "-")));
        args.push(s.flag.into());
        let from_flag = printed(&args);
        assert_eq!(
            from_flag[p.name],
            s.recorded,
            "{} from --{}",
            p.name,
            p.name.replace('_', "-")
        );
    }
}

#[test]
fn a_run_records_every_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let c = Config::resolve(&[json!({"db": "null:", "steps": ["l.i0"], "rows_l_i0": 10})
        .as_object()
        .unwrap()
        .clone()])
    .unwrap();
    let out = ibench::exec::run(&c, dir.path(), &ibench::exec::Silent, &ibench::Stop::new()).unwrap();
    let recorded: serde_json::Map<String, Value> = serde_json::from_str(&out.results.run.config).unwrap();
    let names: Vec<&str> = recorded.keys().map(String::as_str).collect();
    let mut declared: Vec<&str> = PARAMETERS.iter().map(|p| p.name).collect();
    declared.sort();
    assert_eq!(names, declared);
}
