//! The kernel's floor under a client's CPU per query: one thread sends a
//! 100-byte request over loopback TCP (TCP_NODELAY) or a Unix socket and
//! blocks until a 700-byte reply (about ten small rows) is back, while a
//! second thread answers. No protocol, no encoding, no database: what is
//! left is the two system calls, the network stack on both sides and the
//! sleep and wake-up of a synchronous client. The client thread's own CPU
//! (getrusage RUSAGE_THREAD) per round trip is the least any synchronous
//! client (ibench, libpq, libmariadb) can spend per query on this host.
//!
//! `cargo bench --bench roundtrip [-- ROUND_TRIPS [SERVER_WORK_US]]`: with
//! SERVER_WORK_US the answering thread first spins that long, as a server
//! executing a query would, so the client really sleeps.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

const REQUEST: usize = 100;
const REPLY: usize = 700;

/// This thread's user and system CPU so far.
fn thread_cpu() -> (Duration, Duration) {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let d = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (d(u.ru_utime), d(u.ru_stime))
}

fn answer(mut s: impl Read + Write, work: Duration) {
    let mut buf = [0u8; 4096];
    let reply = [b'r'; REPLY];
    let mut pending = 0;
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending += n,
        }
        while pending >= REQUEST {
            pending -= REQUEST;
            let until = Instant::now() + work;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            if s.write_all(&reply).is_err() {
                return;
            }
        }
    }
}

/// Client CPU (user, system) per round trip and wall time per round trip.
fn client(mut s: impl Read + Write, n: u32) -> (f64, f64, f64) {
    let request = [b'q'; REQUEST];
    let mut buf = [0u8; 4096];
    let (u0, s0) = thread_cpu();
    let t0 = Instant::now();
    for _ in 0..n {
        s.write_all(&request).unwrap();
        let mut got = 0;
        while got < REPLY {
            got += s.read(&mut buf).unwrap();
        }
    }
    let wall = t0.elapsed();
    let (u1, s1) = thread_cpu();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
    (per(u1 - u0), per(s1 - s0), per(wall))
}

fn report(transport: &str, work: Duration, (user, sys, wall): (f64, f64, f64)) {
    println!(
        "{transport:<7} server work {:>3} µs: client CPU {:5.2} µs per round trip (user {user:4.2}, sys {sys:5.2}); wall {wall:6.2} µs",
        work.as_micros(),
        user + sys
    );
}

fn main() {
    // cargo bench passes --bench; the numbers are the only positional arguments.
    let args: Vec<u64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let n = args.first().copied().unwrap_or(100_000) as u32;
    let works: Vec<Duration> = match args.get(1) {
        Some(&us) => vec![Duration::from_micros(us)],
        None => vec![Duration::ZERO, Duration::from_micros(30)],
    };
    for work in works {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            s.set_nodelay(true).unwrap();
            answer(s, work)
        });
        let s = TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        report("tcp", work, client(s, n));
        server.join().unwrap();

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || answer(listener.accept().unwrap().0, work));
        report("unix", work, client(UnixStream::connect(&path).unwrap(), n));
        server.join().unwrap();
    }
}
