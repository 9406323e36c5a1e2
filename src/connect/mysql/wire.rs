//! A synchronous MySQL/MariaDB client for the benchmark's statements: one
//! blocking socket (TCP, Unix or TLS over TCP), server-side prepared
//! statements executed with binary parameters, and results counted where
//! they arrive, in a buffer kept across statements.
//!
//! Why not the `mysql` crate here: it builds a `Row` of `Value`s for every
//! row a query returns, through pooled buffers, and the step only counts
//! them. Under callgrind that was ~12,000 of the ~19,000 instructions of a
//! 10-row range query. The handshake's packets, the authentication
//! scrambles, ERR packets, a prepare's answer, COM_STMT_CLOSE, the command
//! bytes, a result set's column count and text rows are `mysql_common`'s
//! (the crate the driver uses). Written by hand on purpose, measured with
//! callgrind against MariaDB (instructions per operation of the step's
//! worker, exclusive instructions of the pieces): packet framing in
//! (`packet`, read in place; mysql_common's ChunkDecoder copies each
//! packet and cost ~2,450 more per query), packet framing out (`send`, the
//! header written in place; `packet_to_chunks` copies the payload: +88 per
//! query, 3% of qr100's ~2,800), OK packets (`ok_packet`: mysql_common's
//! OkPacketDeserializer cost +117 per query, 4% of qr100) and the
//! length-encoded strings of a row's parameters (`put_lenenc`:
//! BufMutExt::put_lenenc_str cost +26 per row, 2.2% of l.i1's ~1,200).
//! Connections for everything else (maintenance, the counters, the
//! key/value steps, verification) still come from the driver.

use crate::connect::dsn::Password;
use crate::connect::stream::{self, Stream};
use mysql_common::constants::{CapabilityFlags, Command, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, ComStmtClose, ErrPacket, HandshakePacket, HandshakeResponse, SslRequest, StmtPacket,
};
use mysql_common::proto::MySerialize;
use rustls::ClientConfig;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A server's error (its error number and message) or a broken connection.
pub(crate) type WireError = stream::WireError<u16>;

pub(crate) type WireResult<T> = std::result::Result<T, WireError>;

fn protocol(what: &str) -> WireError {
    WireError::client(format!("unexpected packet from the server ({what})"))
}

/// Where and how to connect (its password prints as `***`).
#[derive(Clone, Debug)]
pub(crate) struct Dial {
    pub(crate) host: String,
    pub(crate) port: u16,
    /// A Unix socket: used instead of host and port.
    pub(crate) socket: Option<PathBuf>,
    pub(crate) user: String,
    pub(crate) password: Option<Password>,
    pub(crate) database: Option<String>,
    /// TLS over TCP, and whether it is required (else plain when the server has none).
    pub(crate) tls: Option<(Arc<ClientConfig>, bool)>,
    pub(crate) timeout: Duration,
    /// Statements run once connected (the DSN's `init`).
    pub(crate) init: Vec<String>,
}

/// The capabilities this client asks for, those the server has.
const WANTED: CapabilityFlags = CapabilityFlags::CLIENT_PROTOCOL_41
    .union(CapabilityFlags::CLIENT_SECURE_CONNECTION)
    .union(CapabilityFlags::CLIENT_LONG_PASSWORD)
    .union(CapabilityFlags::CLIENT_LONG_FLAG)
    .union(CapabilityFlags::CLIENT_TRANSACTIONS)
    .union(CapabilityFlags::CLIENT_MULTI_STATEMENTS)
    .union(CapabilityFlags::CLIENT_MULTI_RESULTS)
    .union(CapabilityFlags::CLIENT_PS_MULTI_RESULTS)
    .union(CapabilityFlags::CLIENT_PLUGIN_AUTH)
    .union(CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
    .union(CapabilityFlags::CLIENT_DEPRECATE_EOF);

/// What the server's greeting says.
struct Greeting {
    capabilities: CapabilityFlags,
    version: (u16, u16, u16),
    nonce: Vec<u8>,
    plugin: AuthPlugin<'static>,
}

/// A prepared statement: its id on the server and the parameters it takes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Statement {
    id: u32,
    params: u16,
}

/// A parameter of a prepared statement, encoded in the binary protocol.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Param<'a> {
    Int(i64),
    UInt(u64),
    /// Unix microseconds (UTC) as a DATETIME.
    DateTime(i64),
    Bytes(&'a [u8]),
}

const MAX_PAYLOAD: usize = 0xFF_FFFF;
/// How much a read asks the socket for.
const READ_SIZE: usize = 16384;
const COM_QUERY: u8 = Command::COM_QUERY as u8;
const COM_STMT_PREPARE: u8 = Command::COM_STMT_PREPARE as u8;
const COM_STMT_EXECUTE: u8 = Command::COM_STMT_EXECUTE as u8;
const COM_QUIT: u8 = Command::COM_QUIT as u8;
/// utf8mb4_general_ci: understood by every MySQL and MariaDB with utf8mb4.
const COLLATION: u8 = 45;

/// A length-encoded integer at the front of `b`, and the bytes it took.
fn lenenc(b: &[u8]) -> Option<(u64, usize)> {
    let wide = |n: usize| -> Option<(u64, usize)> {
        let bytes = b.get(1..1 + n)?;
        let mut v = [0u8; 8];
        v[..n].copy_from_slice(bytes);
        Some((u64::from_le_bytes(v), 1 + n))
    };
    match *b.first()? {
        x @ 0..=0xFA => Some((x as u64, 1)),
        0xFC => wide(2),
        0xFD => wide(3),
        0xFE => wide(8),
        _ => None,
    }
}

fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xFA => out.push(v as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// An ERR packet's payload as an error. Its SQLSTATE marker says whether
/// protocol 4.1's SQLSTATE precedes the message (a greeting's error has
/// none).
fn err_packet(p: &[u8]) -> WireError {
    let caps = match p.get(3) {
        Some(b'#') => CapabilityFlags::CLIENT_PROTOCOL_41,
        _ => CapabilityFlags::empty(),
    };
    match ParseBuf(p).parse::<ErrPacket<'_>>(caps) {
        Ok(ErrPacket::Error(e)) => WireError {
            code: Some(e.error_code()),
            message: e.message_str().into_owned(),
        },
        _ => protocol("a short error"),
    }
}

/// What an OK packet (or EOF) says: affected rows, the last insert id and the status.
#[derive(Clone, Copy, Debug, Default)]
struct Done {
    affected: u64,
    last_insert_id: u64,
    status: u16,
}

fn ok_packet(p: &[u8]) -> WireResult<Done> {
    let (affected, a) = lenenc(&p[1..]).ok_or_else(|| protocol("an OK packet"))?;
    let (last_insert_id, b) = lenenc(&p[1 + a..]).ok_or_else(|| protocol("an OK packet"))?;
    let at = 1 + a + b;
    let status = p.get(at..at + 2).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]));
    Ok(Done {
        affected,
        last_insert_id,
        status,
    })
}

fn more_results(status: u16) -> bool {
    StatusFlags::from_bits_truncate(status).contains(StatusFlags::SERVER_MORE_RESULTS_EXISTS)
}

/// One connection.
pub(crate) struct Wire {
    stream: Stream,
    /// The packet being written: four bytes for its header, then its payload.
    out: Vec<u8>,
    input: Vec<u8>,
    start: usize,
    end: usize,
    /// The sequence number of the next packet sent.
    seq: u8,
    capabilities: CapabilityFlags,
    connection_id: u32,
    last: Done,
}

impl Wire {
    /// Connects and logs in as `dial` says.
    pub(crate) fn connect(dial: &Dial) -> WireResult<Wire> {
        let (stream, host) = match &dial.socket {
            Some(path) => (Stream::Unix(UnixStream::connect(path)?), None),
            None => {
                let (tcp, _) = stream::tcp(&dial.host, dial.port, Some(dial.timeout))?;
                (Stream::Tcp(tcp), Some(dial.host.as_str()))
            }
        };
        let mut wire = Wire {
            stream,
            out: Vec::with_capacity(8192),
            input: vec![0; READ_SIZE],
            start: 0,
            end: 0,
            seq: 0,
            capabilities: CapabilityFlags::empty(),
            connection_id: 0,
            last: Done::default(),
        };
        wire.login(dial, host)?;
        for sql in &dial.init {
            wire.query(sql)?;
        }
        Ok(wire)
    }

    /// The handshake: the server's greeting, TLS when asked and offered,
    /// the client's response, then authentication until the server's OK.
    fn login(&mut self, dial: &Dial, host: Option<&str>) -> WireResult<()> {
        let hello = self.greeting()?;
        let mut caps = WANTED & hello.capabilities;
        if dial.database.as_deref().is_some_and(|d| !d.is_empty()) {
            caps |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
        }
        if !hello.capabilities.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
            return Err(WireError::client("the server is older than protocol 4.1"));
        }
        if let (Some((config, required)), Some(host)) = (&dial.tls, host) {
            caps = self.start_tls(caps, hello.capabilities, config, *required, host)?;
        }
        self.capabilities = caps;
        self.respond(dial, &hello)?;
        self.authenticate(dial.password.as_ref().map(Password::expose), hello)
    }

    /// The server's greeting: its capabilities, version, nonce and plugin.
    fn greeting(&mut self) -> WireResult<Greeting> {
        let p = self.packet()?;
        if self.input[p.start] == 0xFF {
            return Err(err_packet(&self.input[p]));
        }
        let hello: HandshakePacket<'_> = ParseBuf(&self.input[p])
            .parse(())
            .map_err(|e| WireError::client(format!("the server's greeting: {e}")))?;
        self.connection_id = hello.connection_id();
        Ok(Greeting {
            capabilities: hello.capabilities(),
            version: hello.server_version_parsed().unwrap_or((0, 0, 0)),
            nonce: hello.nonce(),
            plugin: hello
                .auth_plugin()
                .map(|p| p.into_owned())
                .unwrap_or(AuthPlugin::MysqlNativePassword),
        })
    }

    /// SslRequest and the TLS handshake when the server offers TLS (an
    /// error when it does not and TLS is `required`); the capabilities
    /// with CLIENT_SSL when it is on.
    fn start_tls(
        &mut self,
        caps: CapabilityFlags,
        server: CapabilityFlags,
        config: &Arc<ClientConfig>,
        required: bool,
        host: &str,
    ) -> WireResult<CapabilityFlags> {
        if !server.contains(CapabilityFlags::CLIENT_SSL) {
            if required {
                return Err(WireError::client(
                    "TLS: the server does not offer it, and ssl-mode requires it",
                ));
            }
            return Ok(caps);
        }
        let caps = caps | CapabilityFlags::CLIENT_SSL;
        self.seq = 1;
        SslRequest::new(caps, 1 << 30, COLLATION).serialize(self.payload());
        self.send()?;
        let Stream::Tcp(tcp) = &self.stream else {
            unreachable!("TLS is asked for over TCP only")
        };
        // The plain stream's descriptor closes as it is replaced; the socket stays open.
        let tcp = tcp.try_clone()?;
        self.stream = stream::tls(tcp, config, host).map_err(|e| WireError::client(format!("TLS: {e}")))?;
        Ok(caps)
    }

    /// The handshake response: the user, the database and the greeting's
    /// plugin's answer to its nonce.
    fn respond(&mut self, dial: &Dial, hello: &Greeting) -> WireResult<()> {
        self.supported(&hello.plugin)?;
        let data = hello
            .plugin
            .gen_data(dial.password.as_ref().map(Password::expose), &hello.nonce);
        let response = HandshakeResponse::new(
            data.as_deref(),
            hello.version,
            Some(dial.user.as_bytes()),
            dial.database.as_deref().map(str::as_bytes),
            Some(hello.plugin.clone()),
            self.capabilities,
            None,
            1 << 30,
        );
        response.serialize(self.payload());
        self.send()
    }

    /// The server's answers until its OK: an authentication switch to
    /// another plugin, or caching_sha2_password's fast or full
    /// authentication.
    fn authenticate(&mut self, password: Option<&str>, hello: Greeting) -> WireResult<()> {
        let (mut plugin, mut nonce) = (hello.plugin, hello.nonce);
        loop {
            let p = self.packet()?;
            match self.input[p.start] {
                0x00 => return Ok(()),
                0xFF => return Err(err_packet(&self.input[p])),
                0xFE => {
                    let switch: AuthSwitchRequest<'_> = ParseBuf(&self.input[p])
                        .parse(())
                        .map_err(|e| WireError::client(format!("an authentication switch: {e}")))?;
                    plugin = switch.auth_plugin().into_owned();
                    nonce = switch.plugin_data().to_vec();
                    self.supported(&plugin)?;
                    if let Some(data) = plugin.gen_data(password, &nonce) {
                        data.serialize(self.payload());
                    }
                    self.send()?;
                }
                0x01 if plugin == AuthPlugin::CachingSha2Password => {
                    let more = self.input[p.start + 1..p.end].to_vec();
                    self.sha2_more_data(&more, password, &nonce)?;
                }
                _ => return Err(protocol("an answer during authentication")),
            }
        }
    }

    /// caching_sha2_password's extra data: fast authentication done, or
    /// full authentication asked for (the password itself over TLS or a
    /// local socket, else encrypted with the server's public key, which is
    /// asked for first).
    fn sha2_more_data(&mut self, more: &[u8], password: Option<&str>, nonce: &[u8]) -> WireResult<()> {
        match more {
            // Fast authentication succeeded: the OK follows.
            [3] => Ok(()),
            // Full authentication: the password itself.
            [4] if self.secure() => {
                let out = self.payload();
                out.extend_from_slice(password.unwrap_or("").as_bytes());
                out.push(0);
                self.send()
            }
            // ... encrypted with the server's public key, asked for.
            [4] => {
                self.payload().push(2);
                self.send()
            }
            key if key.starts_with(b"-----BEGIN") => {
                let mut secret = password.unwrap_or("").as_bytes().to_vec();
                secret.push(0);
                for (i, b) in secret.iter_mut().enumerate() {
                    *b ^= nonce[i % nonce.len()];
                }
                let sealed = mysql_common::crypto::encrypt(&secret, key);
                self.payload().extend_from_slice(&sealed);
                self.send()
            }
            _ => Err(protocol("caching_sha2_password's answer")),
        }
    }

    /// Whether this client can answer `plugin`: an error naming it if not
    /// (ed25519 and PARSEC are the driver's optional features, and a
    /// cleartext password goes only over TLS or a local socket).
    fn supported(&self, plugin: &AuthPlugin<'_>) -> WireResult<()> {
        match plugin {
            AuthPlugin::MysqlNativePassword | AuthPlugin::CachingSha2Password => Ok(()),
            AuthPlugin::MysqlClearPassword if self.secure() => Ok(()),
            other => Err(WireError::client(format!(
                "authentication with {:?} is not supported by the session client{}",
                String::from_utf8_lossy(other.as_bytes()),
                match other {
                    AuthPlugin::MysqlClearPassword => " over an unencrypted connection",
                    _ => "",
                }
            ))),
        }
    }

    /// Whether the connection is encrypted or local (a password may then go as it is).
    fn secure(&self) -> bool {
        !matches!(self.stream, Stream::Tcp(_))
    }

    /// The server's id for this connection (what `KILL QUERY` names).
    pub(crate) fn connection_id(&self) -> u32 {
        self.connection_id
    }

    /// The rows the last statement changed.
    pub(crate) fn affected_rows(&self) -> u64 {
        self.last.affected
    }

    /// The first key the last INSERT generated.
    pub(crate) fn last_insert_id(&self) -> u64 {
        self.last.last_insert_id
    }

    /// The payload of the next packet, emptied.
    fn payload(&mut self) -> &mut Vec<u8> {
        self.out.clear();
        self.out.extend_from_slice(&[0; 4]);
        &mut self.out
    }

    /// A command's first packet: the payload, its first byte `command`.
    fn command(&mut self, command: u8) -> &mut Vec<u8> {
        self.seq = 0;
        // What the last command changed is this command's to say.
        self.last = Done::default();
        let out = self.payload();
        out.push(command);
        out
    }

    /// Sends the payload: one packet, or as many as 16 MiB needs.
    fn send(&mut self) -> WireResult<()> {
        let len = self.out.len() - 4;
        let sent = if len < MAX_PAYLOAD {
            self.out[..3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.out[3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
            self.stream.write_all(&self.out)
        } else {
            let mut whole = Vec::with_capacity(len + 4 * (len / MAX_PAYLOAD + 1));
            let mut chunks = self.out[4..].chunks(MAX_PAYLOAD).peekable();
            while let Some(chunk) = chunks.next() {
                whole.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
                whole.push(self.seq);
                self.seq = self.seq.wrapping_add(1);
                whole.extend_from_slice(chunk);
                if chunks.peek().is_none() && chunk.len() == MAX_PAYLOAD {
                    whole.extend_from_slice(&[0, 0, 0, self.seq]);
                    self.seq = self.seq.wrapping_add(1);
                }
            }
            self.stream.write_all(&whole)
        };
        sent.and_then(|_| self.stream.flush())?;
        Ok(())
    }

    /// Makes at least `n` bytes from `start` readable.
    #[inline]
    fn ensure(&mut self, n: usize) -> WireResult<()> {
        match self.end - self.start >= n {
            true => Ok(()),
            false => self.read_to(n),
        }
    }

    /// Reads from the socket until `n` bytes from `start` are buffered,
    /// moving what is kept to the front (or growing the buffer) for room.
    #[cold]
    fn read_to(&mut self, n: usize) -> WireResult<()> {
        while self.end - self.start < n {
            if self.start == self.end {
                (self.start, self.end) = (0, 0);
            } else if self.input.len() - self.start < n || self.end == self.input.len() {
                self.input.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            }
            if self.input.len() < n.max(self.end + 1) {
                self.input.resize(n.max(self.input.len() * 2), 0);
            }
            let got = self.stream.read(&mut self.input[self.end..])?;
            if got == 0 {
                return Err(WireError::client("connection: the server closed it"));
            }
            self.end += got;
        }
        Ok(())
    }

    /// The next packet's payload (a range of `input`), read in place; a
    /// payload of 16 MiB or more is joined from its packets.
    fn packet(&mut self) -> WireResult<std::ops::Range<usize>> {
        self.ensure(4)?;
        let header = |b: &[u8]| (u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize, b[3]);
        let (len, seq) = header(&self.input[self.start..]);
        self.seq = seq.wrapping_add(1);
        self.ensure(4 + len)?;
        let mut body = len;
        let mut last = len;
        while last == MAX_PAYLOAD {
            // Remove the next packet's header so the payload is contiguous.
            self.ensure(4 + body + 4)?;
            let at = self.start + 4 + body;
            let (len, seq) = header(&self.input[at..]);
            self.seq = seq.wrapping_add(1);
            self.ensure(4 + body + 4 + len)?;
            let at = self.start + 4 + body;
            self.input.copy_within(at + 4..self.end, at);
            self.end -= 4;
            body += len;
            last = len;
        }
        let payload = self.start + 4..self.start + 4 + body;
        self.start += 4 + body;
        if payload.is_empty() {
            return Err(protocol("an empty packet"));
        }
        Ok(payload)
    }

    /// Reads a command's results: OK packets and result sets, each row's
    /// payload given to `row`; the rows, or the first error.
    fn results(&mut self, mut row: impl FnMut(&[u8]) -> WireResult<()>) -> WireResult<usize> {
        let deprecate_eof = self.capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF);
        let (mut rows, mut failed) = (0, None);
        loop {
            let p = self.packet()?;
            let status = match self.input[p.start] {
                0x00 => {
                    self.last = ok_packet(&self.input[p])?;
                    self.last.status
                }
                0xFF => return Err(err_packet(&self.input[p])),
                0xFB => return Err(WireError::client("LOAD DATA LOCAL is not supported")),
                _ => {
                    let columns = ParseBuf(&self.input[p])
                        .checked_eat_lenenc_int()
                        .ok_or_else(|| protocol("a column count"))?;
                    for _ in 0..columns {
                        self.packet()?;
                    }
                    if !deprecate_eof {
                        self.packet()?;
                    }
                    loop {
                        let p = self.packet()?;
                        let first = self.input[p.start];
                        // A row may start with 0xFE only when 16 MiB long (text) or never (binary: 0x00).
                        if first == 0xFE && p.len() < MAX_PAYLOAD {
                            let status = if deprecate_eof {
                                self.last = ok_packet(&self.input[p])?;
                                self.last.status
                            } else {
                                let s = &self.input[p];
                                s.get(3..5).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
                            };
                            break status;
                        }
                        if first == 0xFF {
                            return Err(err_packet(&self.input[p]));
                        }
                        // A row's error is kept and the rest read, so the next command starts in step.
                        if failed.is_none() {
                            failed = row(&self.input[p]).err();
                        }
                        rows += 1;
                    }
                }
            };
            if !more_results(status) {
                return failed.map_or(Ok(rows), Err);
            }
        }
    }

    /// Runs `sql` as text; the rows it returned (counted, not kept).
    pub(crate) fn query(&mut self, sql: &str) -> WireResult<usize> {
        self.command(COM_QUERY).extend_from_slice(sql.as_bytes());
        self.send()?;
        self.results(|_| Ok(()))
    }

    /// Runs `sql` as text, giving each row's values (None for NULL) to `row`.
    pub(crate) fn query_each(
        &mut self,
        sql: &str,
        mut row: impl FnMut(&[Option<&[u8]>]) -> WireResult<()>,
    ) -> WireResult<usize> {
        self.command(COM_QUERY).extend_from_slice(sql.as_bytes());
        self.send()?;
        self.results(|b| {
            // Not the hot path: a vector per row.
            let mut values = Vec::new();
            let mut buf = ParseBuf(b);
            while !buf.is_empty() {
                if buf.0[0] == 0xFB {
                    values.push(None);
                    buf.skip(1);
                    continue;
                }
                values.push(Some(buf.checked_eat_lenenc_str().ok_or_else(|| protocol("a row"))?));
            }
            row(&values)
        })
    }

    /// The first column of the first row `sql` returns, as text parsed to T.
    pub(crate) fn query_first<T: std::str::FromStr>(&mut self, sql: &str) -> WireResult<Option<T>> {
        let mut first = None;
        self.query_each(sql, |row| {
            if first.is_none() {
                first = row
                    .first()
                    .copied()
                    .flatten()
                    .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok());
            }
            Ok(())
        })?;
        Ok(first)
    }

    /// Prepares `sql` on the server.
    pub(crate) fn prepare(&mut self, sql: &str) -> WireResult<Statement> {
        self.command(COM_STMT_PREPARE).extend_from_slice(sql.as_bytes());
        self.send()?;
        let p = self.packet()?;
        if self.input[p.start] == 0xFF {
            return Err(err_packet(&self.input[p]));
        }
        let answer: StmtPacket = ParseBuf(&self.input[p])
            .parse(())
            .map_err(|_| protocol("a prepare's answer"))?;
        let (params, columns) = (answer.num_params(), answer.num_columns());
        let eof = !self.capabilities.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF);
        for n in [params, columns] {
            if n > 0 {
                for _ in 0..n + eof as u16 {
                    self.packet()?;
                }
            }
        }
        Ok(Statement {
            id: answer.statement_id(),
            params,
        })
    }

    /// Closes a statement no longer used, on the best effort: a broken
    /// connection shows on the next statement.
    pub(crate) fn forget(&mut self, stmt: Statement) {
        let _ = self.close(stmt);
    }

    /// Closes a prepared statement on the server (no answer comes).
    pub(crate) fn close(&mut self, stmt: Statement) -> WireResult<()> {
        self.seq = 0;
        ComStmtClose::new(stmt.id).serialize(self.payload());
        self.send()
    }

    /// Executes a prepared statement; the rows it returned (counted, not kept).
    pub(crate) fn execute(&mut self, stmt: Statement, params: &[Param<'_>]) -> WireResult<usize> {
        self.execute_rows(stmt, 1, |_| params)
    }

    /// Executes a prepared statement whose parameters are `rows` rows of the
    /// same types, `row(i)` giving row `i`'s (a batch of rows needs no
    /// vector of every parameter).
    pub(crate) fn execute_rows<'a, P>(
        &mut self,
        stmt: Statement,
        rows: usize,
        row: impl Fn(usize) -> P,
    ) -> WireResult<usize>
    where
        P: AsRef<[Param<'a>]>,
    {
        let first = (rows > 0).then(|| row(0));
        let types = first.as_ref().map_or(&[][..], |r| r.as_ref());
        let count = rows * types.len();
        if count != stmt.params as usize {
            return Err(WireError::client(format!(
                "the statement takes {} parameters, given {count}",
                stmt.params
            )));
        }
        let out = self.command(COM_STMT_EXECUTE);
        out.extend_from_slice(&stmt.id.to_le_bytes());
        // No cursor, one iteration.
        out.push(0);
        out.extend_from_slice(&1u32.to_le_bytes());
        if count > 0 {
            // No NULLs; then the types are sent with the values.
            out.resize(out.len() + count.div_ceil(8), 0);
            out.push(1);
            for _ in 0..rows {
                for p in types {
                    out.extend_from_slice(match p {
                        Param::Int(_) => &[0x08, 0x00],
                        Param::UInt(_) => &[0x08, 0x80],
                        Param::DateTime(_) => &[0x0C, 0x00],
                        Param::Bytes(_) => &[0xFD, 0x00],
                    });
                }
            }
            // A batch's rows share their dateandtime: its encoding is kept.
            let mut last: Option<(i64, usize)> = None;
            for i in 0..rows {
                let values = row(i);
                for &p in values.as_ref() {
                    match p {
                        Param::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
                        Param::UInt(v) => out.extend_from_slice(&v.to_le_bytes()),
                        Param::DateTime(micros) => match last {
                            Some((m, at)) if m == micros => out.extend_from_within(at..at + DATETIME_LEN),
                            _ => {
                                last = Some((micros, out.len()));
                                put_datetime(out, micros);
                            }
                        },
                        Param::Bytes(b) => {
                            put_lenenc(out, b.len() as u64);
                            out.extend_from_slice(b);
                        }
                    }
                }
            }
        }
        self.send()?;
        self.results(|_| Ok(()))
    }
}

/// The bytes [`put_datetime`] writes.
const DATETIME_LEN: usize = 12;

/// A DATETIME in the binary protocol: its length (11), then year, month,
/// day, hour, minute, second and microseconds.
fn put_datetime(out: &mut Vec<u8>, micros: i64) {
    // The civil date by Howard Hinnant's days-to-date algorithm, in i64:
    // the `time` crate's conversion was 160 instructions per row of a load.
    let (secs, us) = (micros.div_euclid(1_000_000), micros.rem_euclid(1_000_000) as u32);
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    out.push(11);
    out.extend_from_slice(&(year as u16).to_le_bytes());
    out.extend_from_slice(&[
        month as u8,
        day as u8,
        (sod / 3600) as u8,
        (sod / 60 % 60) as u8,
        (sod % 60) as u8,
    ]);
    out.extend_from_slice(&us.to_le_bytes());
    debug_assert_eq!(out[out.len() - DATETIME_LEN], 11);
}

impl Drop for Wire {
    fn drop(&mut self) {
        // A polite goodbye, so the server counts no aborted connection.
        self.command(COM_QUIT);
        let _ = self.send();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encoded_integers_round_trip() {
        for v in [0u64, 250, 251, 0xFFFF, 0x1_0000, 0xFF_FFFF, 0x100_0000, u64::MAX] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            assert_eq!(lenenc(&b), Some((v, b.len())), "{v}");
        }
        assert_eq!(lenenc(&[0xFB]), None);
        assert_eq!(lenenc(&[0xFC, 1]), None);
    }

    #[test]
    fn a_datetime_is_encoded_as_the_binary_protocol_says() {
        let mut b = Vec::new();
        // 2024-02-29 13:14:15.000016 UTC
        put_datetime(&mut b, 1_709_212_455_000_016);
        assert_eq!(b, [11, 0xE8, 0x07, 2, 29, 13, 14, 15, 16, 0, 0, 0]);
        // Before the epoch the microseconds still count up within their second.
        b.clear();
        put_datetime(&mut b, -1);
        assert_eq!(b, [11, 0xB1, 0x07, 12, 31, 23, 59, 59, 0x3F, 0x42, 0x0F, 0]);
        // Every day from 1900 to 2200, against the `time` crate's calendar.
        for day in -25_567i64..84_000 {
            let micros = day * 86_400_000_000 + 45_296_000_007;
            let t = time::OffsetDateTime::from_unix_timestamp_nanos(micros as i128 * 1000).unwrap();
            b.clear();
            put_datetime(&mut b, micros);
            let mut want = vec![11];
            want.extend_from_slice(&(t.year() as u16).to_le_bytes());
            want.extend_from_slice(&[t.month() as u8, t.day(), t.hour(), t.minute(), t.second()]);
            want.extend_from_slice(&t.microsecond().to_le_bytes());
            assert_eq!(b, want, "day {day}");
        }
    }

    #[test]
    fn an_error_packet_gives_its_code_and_message() {
        let e = err_packet(b"\xff\x1d\x05#42000Query was empty");
        assert_eq!(e.code, Some(1309));
        assert_eq!(e.message, "Query was empty");
    }

    /// A server that speaks the handshake as MySQL 8 does, over a Unix
    /// socket: its greeting, then `script`'s answers, checking each packet
    /// the client sends. MariaDB (this machine's server) has no
    /// caching_sha2_password, so its flows are checked here.
    fn serve(script: Vec<(Option<Vec<u8>>, Vec<u8>)>) -> (tempfile::TempDir, std::thread::JoinHandle<()>) {
        use mysql_common::constants::StatusFlags;
        let dir = tempfile::tempdir().unwrap();
        let listener = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let write = |s: &mut UnixStream, seq: u8, payload: &[u8]| {
                let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
                p.push(seq);
                p.extend_from_slice(payload);
                s.write_all(&p).unwrap();
            };
            let read = |s: &mut UnixStream| -> (u8, Vec<u8>) {
                let mut h = [0u8; 4];
                s.read_exact(&mut h).unwrap();
                let mut p = vec![0; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
                s.read_exact(&mut p).unwrap();
                (h[3], p)
            };
            let caps = CapabilityFlags::CLIENT_PROTOCOL_41
                | CapabilityFlags::CLIENT_SECURE_CONNECTION
                | CapabilityFlags::CLIENT_PLUGIN_AUTH
                | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
                | CapabilityFlags::CLIENT_CONNECT_WITH_DB
                | CapabilityFlags::CLIENT_DEPRECATE_EOF;
            let hello = HandshakePacket::new(
                10,
                &b"8.0.40"[..],
                77,
                *b"abcdefgh",
                Some(&b"ijklmnopqrst\0"[..]),
                caps,
                COLLATION,
                StatusFlags::empty(),
                Some(&b"caching_sha2_password"[..]),
            );
            let mut out = Vec::new();
            hello.serialize(&mut out);
            write(&mut s, 0, &out);
            let (seq, response) = read(&mut s);
            assert_eq!(seq, 1);
            let response: HandshakeResponse<'_> = ParseBuf(&response).parse(()).unwrap();
            let expected = mysql_common::scramble::scramble_sha256(b"abcdefghijklmnopqrst", b"s3cret").unwrap();
            assert_eq!(response.scramble_buf(), &expected[..]);
            let mut seq = seq + 1;
            for (wanted, answer) in script {
                if let Some(wanted) = wanted {
                    let (got_seq, got) = read(&mut s);
                    assert_eq!((got_seq, got), (seq, wanted));
                    seq += 1;
                }
                write(&mut s, seq, &answer);
                seq += 1;
            }
            // The client's goodbye.
            assert_eq!(read(&mut s), (0, vec![COM_QUIT]));
        });
        (dir, server)
    }

    fn dial(dir: &tempfile::TempDir) -> Dial {
        Dial {
            host: "localhost".into(),
            port: 0,
            socket: Some(dir.path().join("sock")),
            user: "bench".into(),
            password: Some(Password::new("s3cret")),
            database: Some("test".into()),
            tls: None,
            timeout: Duration::from_secs(5),
            init: Vec::new(),
        }
    }

    const OK: &[u8] = &[0, 0, 0, 2, 0, 0, 0];

    #[test]
    fn caching_sha2_passwords_fast_authentication() {
        let (dir, server) = serve(vec![(None, vec![1, 3]), (None, OK.to_vec())]);
        let wire = Wire::connect(&dial(&dir)).unwrap();
        assert_eq!(wire.connection_id(), 77);
        drop(wire);
        server.join().unwrap();
    }

    #[test]
    fn caching_sha2_passwords_full_authentication_sends_the_password_over_a_local_socket() {
        let (dir, server) = serve(vec![(None, vec![1, 4]), (Some(b"s3cret\0".to_vec()), OK.to_vec())]);
        drop(Wire::connect(&dial(&dir)).unwrap());
        server.join().unwrap();
    }

    #[test]
    fn an_authentication_switch_to_native_passwords_and_a_refusal() {
        let nonce = b"01234567890123456789";
        let mut switch = b"\xfemysql_native_password\0".to_vec();
        switch.extend_from_slice(nonce);
        switch.push(0);
        let native = mysql_common::scramble::scramble_native(nonce, b"s3cret")
            .unwrap()
            .to_vec();
        let (dir, server) = serve(vec![(None, switch.clone()), (Some(native.clone()), OK.to_vec())]);
        drop(Wire::connect(&dial(&dir)).unwrap());
        server.join().unwrap();

        let refusal = b"\xff\x15\x04#28000Access denied for user 'bench'@'localhost' (using password: YES)".to_vec();
        let (dir, server) = serve(vec![(None, switch), (Some(native), refusal)]);
        let e = Wire::connect(&dial(&dir)).err().expect("refused");
        assert_eq!(e.code, Some(1045));
        assert!(e.message.starts_with("Access denied"), "{e}");
        assert!(!e.to_string().contains("s3cret"), "{e}");
        server.join().unwrap();
    }

    #[test]
    fn a_plugin_the_client_cannot_answer_is_named_not_a_panic() {
        let mut switch = b"\xfeclient_ed25519\0".to_vec();
        switch.extend_from_slice(b"01234567890123456789012345678901\0");
        let (dir, server) = serve(vec![(None, switch)]);
        let e = Wire::connect(&dial(&dir)).err().expect("unsupported");
        assert!(e.message.contains("\"client_ed25519\" is not supported"), "{e}");
        server.join().unwrap();
    }
}
