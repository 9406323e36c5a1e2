//! The transport a DSN names is the one measured, as the server sees the
//! connection: 127.0.0.1 is TCP (the mysql driver would otherwise switch to
//! the Unix socket by itself), a socket path or directory is the socket.

mod common;

use common::{mysql_admin, postgres_admin, reachable};

fn transport(dsn: &str) -> String {
    let c = ibench::connect::open(dsn).unwrap_or_else(|e| panic!("{dsn}: {e}"));
    c.settings()
        .into_iter()
        .find(|(k, _)| k == "transport")
        .map(|(_, v)| v)
        .unwrap()
}

#[test]
fn mariadb_over_127_0_0_1_is_tcp_and_over_its_socket_is_the_socket() {
    let admin = mysql_admin();
    let Ok(mut c) = mysql::Conn::new(mysql::Opts::from_url(&admin).unwrap()) else {
        assert!(!reachable("MariaDB", false));
        return;
    };
    use mysql::prelude::Queryable;
    let socket: String = c.query_first("SELECT @@socket").unwrap().unwrap();
    assert_eq!(transport(&admin), "tcp 127.0.0.1");
    // What ibench did before: the driver's own choice, which is the socket.
    assert_eq!(transport(&format!("{admin}?prefer_socket=true")), "unix socket");
    let via_socket = format!("{admin}?socket={socket}");
    assert_eq!(transport(&via_socket), "unix socket");
}

/// As the mysql client: an option file's `socket` is for `localhost`
/// only; `127.0.0.1` stays TCP whatever the file says (before, the file's
/// socket took over any host, so a remote DSN could measure the local server).
#[test]
fn a_mariadb_option_files_socket_serves_localhost_only() {
    let admin = mysql_admin();
    let Ok(mut c) = mysql::Conn::new(mysql::Opts::from_url(&admin).unwrap()) else {
        assert!(!reachable("MariaDB", false));
        return;
    };
    use mysql::prelude::Queryable;
    let socket: String = c.query_first("SELECT @@socket").unwrap().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: String| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        f.display().to_string()
    };
    let nowhere = file(
        "nowhere.cnf",
        "[client]\nsocket = /nonexistent/mysqld.sock # not here\n".into(),
    );
    assert_eq!(transport(&format!("{admin}?defaults-file={nowhere}")), "tcp 127.0.0.1");
    let real = file("real.cnf", format!("[client-server]\nsocket=\"{socket}\"\n"));
    let port = admin.rsplit_once(':').unwrap().1.split('/').next().unwrap().to_string();
    assert_eq!(
        transport(&format!("mysql://root@localhost/test?defaults-file={real}")),
        "unix socket"
    );
    // A port with localhost is TCP: the client would ignore the port.
    assert_eq!(
        transport(&format!("mysql://root@localhost:{port}/test?defaults-file={real}")),
        "tcp 127.0.0.1"
    );
    // TLS over the socket is refused by name, not dropped.
    let e = ibench::connect::open(&format!("{admin}?socket={socket}&ssl-mode=REQUIRED"))
        .err()
        .expect("REQUIRED over a socket was accepted")
        .to_string();
    assert!(e.contains("Unix socket") && e.contains(&socket), "{e}");
}

/// The server's first socket directory and its port.
fn socket_and_port(c: &mut postgres::Client) -> (String, String) {
    let dirs: String = c.query_one("SHOW unix_socket_directories", &[]).unwrap().get(0);
    let port: String = c.query_one("SHOW port", &[]).unwrap().get(0);
    (dirs.split(',').next().unwrap().trim().to_string(), port)
}

#[test]
fn postgres_over_127_0_0_1_is_tcp_and_over_a_socket_directory_is_the_socket() {
    let admin = postgres_admin();
    let Ok(mut c) = postgres::Client::connect(&admin, postgres::NoTls) else {
        assert!(!reachable("PostgreSQL", false));
        return;
    };
    let (dir, port) = socket_and_port(&mut c);
    assert_eq!(transport(&admin), "tcp 127.0.0.1");
    let kv = format!("host={dir} port={port} user=postgres dbname=postgres");
    assert_eq!(transport(&kv), "unix socket");
}

/// The `tls` and `transport` settings a connector to `dsn` records.
fn tls_and_transport(dsn: &str) -> (String, String) {
    let c = ibench::connect::open(dsn).unwrap_or_else(|e| panic!("{dsn}: {e}"));
    // A session too: the sessions' own client connects as the driver does.
    drop(c.session().unwrap_or_else(|e| panic!("{dsn}: a session: {e}")));
    let settings = c.settings();
    let get = |k: &str| settings.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap();
    (get("tls"), get("transport"))
}

#[test]
fn postgres_over_a_socket_connects_in_plain_text_whatever_sslmode_says() {
    let admin = postgres_admin();
    let Ok(mut c) = postgres::Client::connect(&admin, postgres::NoTls) else {
        assert!(!reachable("PostgreSQL", false));
        return;
    };
    let (dir, port) = socket_and_port(&mut c);
    // As libpq: PostgreSQL does no TLS on a socket, so no root certificate
    // is needed either, and the run records tls none.
    for mode in ["require", "verify-ca", "verify-full"] {
        let kv = format!("host={dir} port={port} user=postgres dbname=postgres sslmode={mode}");
        assert_eq!(
            tls_and_transport(&kv),
            ("none".to_string(), "unix socket".to_string()),
            "{mode}"
        );
    }
    // With no host, libpq's default socket directory (where the local server listens).
    if dir == "/var/run/postgresql" {
        let kv = format!("port={port} user=postgres dbname=postgres");
        assert_eq!(tls_and_transport(&kv).1, "unix socket");
        let uri = format!("postgresql:///postgres?user=postgres&port={port}");
        assert_eq!(tls_and_transport(&uri).1, "unix socket");
    }
}

/// The hosts the server lists for connections to `db` once only the
/// session's is left (the connector's own closes as it is made).
fn session_hosts(admin: &mut mysql::Conn, dsn: &str, db: &str) -> Vec<String> {
    use mysql::prelude::Queryable;
    let c = ibench::connect::open(dsn).unwrap_or_else(|e| panic!("{dsn}: {e}"));
    let _session = c.session().unwrap_or_else(|e| panic!("{dsn}: {e}"));
    let sql = format!("SELECT host FROM information_schema.processlist WHERE db = '{db}' AND command <> 'Killed'");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let hosts: Vec<String> = admin.query(&sql).unwrap();
        if hosts.len() == 1 || std::time::Instant::now() > deadline {
            return hosts;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_mariadb_session_connects_over_the_transport_its_dsn_names() {
    let admin = mysql_admin();
    let Ok(mut c) = mysql::Conn::new(mysql::Opts::from_url(&admin).unwrap()) else {
        assert!(!reachable("MariaDB", false));
        return;
    };
    use mysql::prelude::Queryable;
    let socket: String = c.query_first("SELECT @@socket").unwrap().unwrap();
    let db = "ib_transport_session";
    c.query_drop(format!("CREATE DATABASE IF NOT EXISTS {db}")).unwrap();
    let base = format!("{}/{db}", admin.rsplit_once('/').unwrap().0);
    // The sessions' own client, not only the connector's driver: the server
    // lists a TCP connection by host and port, a socket's as `localhost`.
    let tcp = session_hosts(&mut c, &base, db);
    assert!(tcp.len() == 1 && tcp[0].contains(':'), "{tcp:?}");
    assert_eq!(
        session_hosts(&mut c, &format!("{base}?socket={socket}"), db),
        ["localhost"]
    );
    assert_eq!(
        session_hosts(&mut c, &format!("{base}?prefer_socket=true"), db),
        ["localhost"]
    );
    c.query_drop(format!("DROP DATABASE {db}")).unwrap();
}
