//! The byte stream under the sessions' own SQL clients: a blocking socket
//! (TCP, Unix) or rustls over TCP, read and written in place.

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

/// A session client's error: the server's (its code, `C`: PostgreSQL's
/// SQLSTATE, MySQL's error number, and its message) or this side's (a
/// broken connection, an unexpected message: no code).
#[derive(Debug)]
pub(crate) struct WireError<C> {
    pub(crate) code: Option<C>,
    pub(crate) message: String,
}

impl<C: std::fmt::Display> std::fmt::Display for WireError<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{} ({code})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl<C> WireError<C> {
    /// An error of this side (no code).
    pub(crate) fn client(message: impl Into<String>) -> Self {
        WireError {
            code: None,
            message: message.into(),
        }
    }
}

impl<C> From<io::Error> for WireError<C> {
    fn from(e: io::Error) -> Self {
        WireError::client(format!("connection: {e}"))
    }
}

pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// A TCP connection to the first of `name`'s addresses that answers
/// within `timeout` (None: the system's limit), with Nagle off (a
/// statement is one write).
pub(crate) fn tcp(name: &str, port: u16, timeout: Option<Duration>) -> io::Result<(TcpStream, SocketAddr)> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{name}: no address"));
    for addr in (name, port).to_socket_addrs()? {
        let connected = match timeout {
            Some(t) => TcpStream::connect_timeout(&addr, t),
            None => TcpStream::connect(addr),
        };
        match connected {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok((s, addr));
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The TLS handshake over `tcp` with the server `host`: the stream, or
/// why not (a certificate that fails the check names itself here).
pub(crate) fn tls(tcp: TcpStream, config: &Arc<ClientConfig>, host: &str) -> Result<Stream, String> {
    let name = ServerName::try_from(host.to_string()).map_err(|e| format!("host name {host:?}: {e}"))?;
    let conn = ClientConnection::new(config.clone(), name).map_err(|e| e.to_string())?;
    let mut tls = StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).map_err(|e| e.to_string())?;
    }
    Ok(Stream::Tls(Box::new(tls)))
}
