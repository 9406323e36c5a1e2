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

#[test]
fn postgres_over_127_0_0_1_is_tcp_and_over_a_socket_directory_is_the_socket() {
    let admin = postgres_admin();
    let Ok(mut c) = postgres::Client::connect(&admin, postgres::NoTls) else {
        assert!(!reachable("PostgreSQL", false));
        return;
    };
    let dirs: String = c.query_one("SHOW unix_socket_directories", &[]).unwrap().get(0);
    let dir = dirs.split(',').next().unwrap().trim();
    let port: String = c.query_one("SHOW port", &[]).unwrap().get(0);
    assert_eq!(transport(&admin), "tcp 127.0.0.1");
    let kv = format!("host={dir} port={port} user=postgres dbname=postgres");
    assert_eq!(transport(&kv), "unix socket");
}
