//! A synchronous PostgreSQL client for the benchmark's sessions: one
//! blocking socket (TCP, Unix or TLS over TCP), the extended query protocol
//! with binary parameters and results, and buffers kept across statements.
//!
//! Why not the `postgres` crate here: it drives tokio-postgres on a runtime
//! of its own, so every round trip pays an epoll wait, a reactor wake-up,
//! channel hops between the client and the connection task and a `Row` per
//! row. A query that returns 10 rows cost ~2× what libpq's pgbench pays
//! for one over a Unix socket. The messages are `postgres-protocol`'s (the
//! same crate tokio-postgres uses), the values `postgres-types`'.
//! Connections for everything else (the reader of the counters, settings,
//! sizes, the reference's parallel VACUUMs) still come from the driver.

use crate::connect::stream::{self, Stream};
use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres::config::Host;
use postgres::types::{ToSql, Type};
use postgres::Config;
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use rustls::ClientConfig;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A server's error (its SQLSTATE and message) or a broken connection.
pub(crate) type WireError = stream::WireError<String>;

type WireResult<T> = std::result::Result<T, WireError>;

fn protocol(what: &str) -> WireError {
    WireError::client(format!("unexpected message from the server ({what})"))
}

/// The server's error response as a [`WireError`].
fn server_error(body: &postgres_protocol::message::backend::ErrorResponseBody) -> WireError {
    let (mut code, mut message) = (None, String::new());
    let mut fields = body.fields();
    while let Ok(Some(f)) = fields.next() {
        match f.type_() {
            b'C' => code = Some(String::from_utf8_lossy(f.value_bytes()).into_owned()),
            b'M' => message = String::from_utf8_lossy(f.value_bytes()).into_owned(),
            _ => {}
        }
    }
    WireError { code, message }
}

/// Where a connection went: what a cancel request needs to reach the same server.
#[derive(Clone, Debug)]
enum Address {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// A parameter of the sessions' writes, written in the binary format
/// directly: the generated rows' columns without `ToSql`'s per-value
/// dynamic call and type check.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Param<'a> {
    Int4(i32),
    Int8(i64),
    /// Unix microseconds, as a `timestamp` (or `timestamptz`).
    Timestamp(i64),
    /// Bytes known to be text (the generator's ASCII).
    Text(&'a [u8]),
}

impl Param<'_> {
    /// Writes the value, its type already checked.
    #[inline]
    fn write_unchecked(self, buf: &mut BytesMut) {
        match self {
            Param::Int4(v) => buf.extend_from_slice(&v.to_be_bytes()),
            Param::Int8(v) => buf.extend_from_slice(&v.to_be_bytes()),
            Param::Timestamp(v) => buf.extend_from_slice(&(v - PG_EPOCH_MICROS).to_be_bytes()),
            Param::Text(b) => buf.extend_from_slice(b),
        }
    }

    /// Writes the value for a parameter of type `ty`, or names the mismatch.
    fn write(self, ty: &Type, buf: &mut BytesMut) -> Result<(), Box<dyn std::error::Error + Sync + Send>> {
        let fits = match self {
            Param::Int4(_) => *ty == Type::INT4,
            Param::Int8(_) => *ty == Type::INT8,
            Param::Timestamp(_) => *ty == Type::TIMESTAMP || *ty == Type::TIMESTAMPTZ,
            // The types a generated row's text goes to (ToSql's check for
            // `&str` also compares type names).
            Param::Text(_) => matches!(
                *ty,
                Type::VARCHAR | Type::TEXT | Type::BPCHAR | Type::NAME | Type::UNKNOWN
            ),
        };
        if !fits {
            return Err(format!("{self:?} does not fit a parameter of type {ty}").into());
        }
        self.write_unchecked(buf);
        Ok(())
    }
}

/// A prepared statement: its server-side name and the types of its
/// parameters and result columns.
#[derive(Clone, Debug)]
pub(crate) struct Statement {
    name: Arc<str>,
    params: Arc<[Type]>,
    columns: Arc<[Type]>,
}

impl Statement {
    /// The result columns' types.
    pub(crate) fn columns(&self) -> &[Type] {
        &self.columns
    }

    /// The parameters' types, as the server inferred them.
    pub(crate) fn param_types(&self) -> &[Type] {
        &self.params
    }
}

/// What a cancel request needs: where the server is and the backend's key.
#[derive(Clone, Debug)]
pub(crate) struct CancelKey {
    address: Address,
    pid: i32,
    secret: i32,
}

impl CancelKey {
    /// Asks the server to cancel what the connection runs (a plain
    /// connection, as libpq sends it; the server answers nothing).
    pub(crate) fn cancel(&self) {
        let mut buf = BytesMut::new();
        frontend::cancel_request(self.pid, self.secret, &mut buf);
        let _ = match &self.address {
            Address::Tcp(a) => {
                TcpStream::connect_timeout(a, Duration::from_secs(5)).and_then(|mut s| s.write_all(&buf))
            }
            Address::Unix(p) => UnixStream::connect(p).and_then(|mut s| s.write_all(&buf)),
        };
    }
}

/// The rows of a simple query, as text (for the few small answers read
/// through it), and the count of its last command tag.
#[derive(Debug, Default)]
pub(crate) struct SimpleResult {
    pub(crate) rows: Vec<Vec<Option<String>>>,
    pub(crate) affected: u64,
}

fn tls_error(e: impl std::fmt::Display) -> WireError {
    WireError::client(format!("TLS: {e}"))
}

/// SSLRequest; then the TLS handshake if the server says yes (plain if it
/// says no, unless `required`).
fn upgrade(mut tcp: TcpStream, tls: &Arc<ClientConfig>, required: bool, host: &str) -> WireResult<Stream> {
    let mut out = BytesMut::new();
    frontend::ssl_request(&mut out);
    tcp.write_all(&out)?;
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer)?;
    if answer[0] != b'S' {
        if required {
            return Err(tls_error("the server does not offer it, and sslmode requires it"));
        }
        return Ok(Stream::Tcp(tcp));
    }
    stream::tls(tcp, tls, host).map_err(tls_error)
}

/// How much a read asks the socket for.
const READ_SIZE: usize = 16384;

/// A DataRow body's column values: a count, then per column a length (-1: NULL) and the bytes.
fn row_values<'a>(body: &'a [u8], ranges: &'a mut Vec<Option<std::ops::Range<usize>>>) -> WireResult<RowValues<'a>> {
    ranges.clear();
    let bad = || protocol("a data row");
    let count = u16::from_be_bytes(body.get(..2).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
    let mut at = 2;
    for _ in 0..count {
        let len = i32::from_be_bytes(body.get(at..at + 4).ok_or_else(bad)?.try_into().map_err(|_| bad())?);
        at += 4;
        if len < 0 {
            ranges.push(None);
        } else {
            let end = at + len as usize;
            if end > body.len() {
                return Err(bad());
            }
            ranges.push(Some(at..end));
            at = end;
        }
    }
    Ok(RowValues { buffer: body, ranges })
}

/// A data row's column values, binary.
pub(crate) struct RowValues<'a> {
    buffer: &'a [u8],
    ranges: &'a [Option<std::ops::Range<usize>>],
}

impl RowValues<'_> {
    /// Column `i`'s value; None for NULL (and for a column the row lacks).
    pub(crate) fn value(&self, i: usize) -> Option<&[u8]> {
        self.ranges.get(i)?.clone().map(|r| &self.buffer[r])
    }
}

/// One connection.
pub(crate) struct Wire {
    stream: Stream,
    out: BytesMut,
    /// What was read and not yet consumed: `input[start..end]`.
    input: Vec<u8>,
    start: usize,
    end: usize,
    key: CancelKey,
    statements: u64,
}

/// The rows a command tag counts (`INSERT 0 5`, `DELETE 3`, `SELECT 10`).
fn affected(tag: &str) -> u64 {
    tag.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

impl Wire {
    /// Connects as `config` says (its first reachable host), over TLS when
    /// `tls` is given and the server accepts it (`required`: or fails).
    pub(crate) fn connect(config: &Config, tls: Option<(&Arc<ClientConfig>, bool)>) -> WireResult<Wire> {
        let timeout = config.get_connect_timeout().copied();
        let ports = config.get_ports();
        let mut last = None;
        for (i, host) in config.get_hosts().iter().enumerate() {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            let opened = match host {
                Host::Unix(dir) => {
                    let path = dir.join(format!(".s.PGSQL.{port}"));
                    UnixStream::connect(&path).map(|s| (Stream::Unix(s), Address::Unix(path), None))
                }
                Host::Tcp(name) => {
                    stream::tcp(name, port, timeout).map(|(s, a)| (Stream::Tcp(s), Address::Tcp(a), Some(name)))
                }
            };
            match opened {
                Ok((stream, address, name)) => {
                    return Self::start(config, stream, address, name.map(|n| n.as_str()), tls)
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.map(WireError::from).unwrap_or_else(|| protocol("no host")))
    }

    fn start(
        config: &Config,
        stream: Stream,
        address: Address,
        host: Option<&str>,
        tls: Option<(&Arc<ClientConfig>, bool)>,
    ) -> WireResult<Wire> {
        // As libpq: no TLS over a Unix socket.
        let stream = match (stream, tls, host) {
            (Stream::Tcp(tcp), Some((tls, required)), Some(host)) => upgrade(tcp, tls, required, host)?,
            (stream, _, _) => stream,
        };
        let mut wire = Wire {
            stream,
            out: BytesMut::with_capacity(8192),
            input: vec![0; READ_SIZE],
            start: 0,
            end: 0,
            key: CancelKey {
                address,
                pid: 0,
                secret: 0,
            },
            statements: 0,
        };
        wire.startup(config)?;
        Ok(wire)
    }

    fn startup(&mut self, config: &Config) -> WireResult<()> {
        let user = config.get_user().unwrap_or("");
        let mut params = vec![("client_encoding", "UTF8"), ("user", user)];
        if let Some(db) = config.get_dbname() {
            params.push(("database", db));
        }
        if let Some(options) = config.get_options() {
            params.push(("options", options));
        }
        if let Some(name) = config.get_application_name() {
            params.push(("application_name", name));
        }
        frontend::startup_message(params, &mut self.out)?;
        self.send()?;
        let password = config.get_password().unwrap_or(b"");
        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            match self.message()? {
                Message::AuthenticationOk => {}
                Message::AuthenticationCleartextPassword => {
                    frontend::password_message(password, &mut self.out)?;
                    self.send()?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let hash = md5_hash(user.as_bytes(), password, body.salt());
                    frontend::password_message(hash.as_bytes(), &mut self.out)?;
                    self.send()?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut mechanisms = body.mechanisms();
                    let mut offered = false;
                    while let Some(m) = mechanisms.next()? {
                        offered |= m == sasl::SCRAM_SHA_256;
                    }
                    if !offered {
                        return Err(protocol("no SASL mechanism this client knows"));
                    }
                    let s = sasl::ScramSha256::new(password, sasl::ChannelBinding::unsupported());
                    frontend::sasl_initial_response(sasl::SCRAM_SHA_256, s.message(), &mut self.out)?;
                    self.send()?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram.as_mut().ok_or_else(|| protocol("SASL continue"))?;
                    s.update(body.data())?;
                    frontend::sasl_response(s.message(), &mut self.out)?;
                    self.send()?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    scram
                        .as_mut()
                        .ok_or_else(|| protocol("SASL final"))?
                        .finish(body.data())?;
                }
                Message::BackendKeyData(body) => {
                    self.key.pid = body.process_id();
                    self.key.secret = body.secret_key();
                }
                Message::ParameterStatus(_) | Message::NoticeResponse(_) => {}
                Message::ReadyForQuery(_) => return Ok(()),
                Message::ErrorResponse(body) => return Err(server_error(&body)),
                _ => return Err(protocol("startup")),
            }
        }
    }

    /// What a cancel of this connection's statement needs.
    pub(crate) fn cancel_key(&self) -> CancelKey {
        self.key.clone()
    }

    fn send(&mut self) -> WireResult<()> {
        let sent = self.stream.write_all(&self.out).and_then(|_| self.stream.flush());
        self.out.clear();
        sent.map_err(|e| self.last_words(e))
    }

    /// Why a connection broke: the server's last error if it sent one before
    /// closing (a FATAL such as 57P01, administrator shutdown), else `e`.
    fn last_words(&mut self, e: io::Error) -> WireError {
        // The socket is broken: reads return what is buffered, then fail.
        while let Ok((tag, body)) = self.frame() {
            if tag == b'E' {
                if let Some(error) = self.error_frame(body) {
                    return error;
                }
            }
        }
        WireError::from(e)
    }

    /// A frame parsed by `postgres-protocol` (startup, prepare, errors: not the hot path).
    fn parsed(&self, tag: u8, body: std::ops::Range<usize>) -> WireResult<Message> {
        let mut whole = BytesMut::with_capacity(body.len() + 5);
        whole.extend_from_slice(&[tag]);
        whole.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        whole.extend_from_slice(&self.input[body]);
        Message::parse(&mut whole)?.ok_or_else(|| protocol("a short message"))
    }

    /// An ErrorResponse frame's error.
    fn error_frame(&self, body: std::ops::Range<usize>) -> Option<WireError> {
        match self.parsed(b'E', body) {
            Ok(Message::ErrorResponse(e)) => Some(server_error(&e)),
            _ => None,
        }
    }

    /// The next message's tag and body (a range of `input`), reading
    /// from the socket when the buffer holds no whole one. The hot path
    /// reads frames in place: no copy, no allocation.
    fn frame(&mut self) -> WireResult<(u8, std::ops::Range<usize>)> {
        loop {
            let have = &self.input[self.start..self.end];
            if have.len() >= 5 {
                let len = i32::from_be_bytes([have[1], have[2], have[3], have[4]]);
                let len = usize::try_from(len)
                    .ok()
                    .filter(|&l| l >= 4)
                    .ok_or_else(|| protocol("a frame length"))?;
                if have.len() > len {
                    let (tag, body) = (have[0], self.start + 5..self.start + 1 + len);
                    self.start += 1 + len;
                    return Ok((tag, body));
                }
            }
            self.fill()?;
        }
    }

    /// Reads what the socket has (at least a byte) after what is kept,
    /// moving that to the front (or growing the buffer) when it is at the end.
    fn fill(&mut self) -> WireResult<()> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.end == self.input.len() {
            if self.start > 0 {
                self.input.copy_within(self.start..self.end, 0);
                (self.start, self.end) = (0, self.end - self.start);
            } else {
                self.input.resize(self.input.len() * 2, 0);
            }
        }
        let n = self.stream.read(&mut self.input[self.end..])?;
        if n == 0 {
            return Err(WireError::client("connection: the server closed it"));
        }
        self.end += n;
        Ok(())
    }

    /// The next message, parsed.
    fn message(&mut self) -> WireResult<Message> {
        let (tag, body) = self.frame()?;
        self.parsed(tag, body)
    }

    /// Reads up to ReadyForQuery, giving each data row to `row`; the first
    /// error the server reported, else the last command tag's count.
    fn results(&mut self, mut row: impl FnMut(&RowValues<'_>) -> WireResult<()>) -> WireResult<u64> {
        let mut outcome: WireResult<u64> = Ok(0);
        let mut ranges = Vec::new();
        loop {
            // A connection closed after an error (a FATAL): that error.
            let (tag, body) = match self.frame() {
                Ok(frame) => frame,
                Err(e) => return Err(outcome.err().unwrap_or(e)),
            };
            match tag {
                b'D' if outcome.is_ok() => {
                    // An error here is kept and the rest read, so the next statement starts in step.
                    if let Err(e) = row_values(&self.input[body], &mut ranges).and_then(|v| row(&v)) {
                        outcome = Err(e);
                    }
                }
                b'C' => {
                    if let Ok(n) = &mut outcome {
                        let text = &self.input[body];
                        let text = text.strip_suffix(&[0]).unwrap_or(text);
                        *n = affected(std::str::from_utf8(text).unwrap_or(""));
                    }
                }
                b'E' if outcome.is_ok() => {
                    if let Some(e) = self.error_frame(body) {
                        outcome = Err(e);
                    }
                }
                b'Z' => return outcome,
                _ => {}
            }
        }
    }

    /// Prepares `sql` as a named statement, its parameter types as the server infers them.
    pub(crate) fn prepare(&mut self, sql: &str) -> WireResult<Statement> {
        self.prepare_typed(sql, &[])
    }

    /// Prepares `sql`, with the types of its first parameters given.
    pub(crate) fn prepare_typed(&mut self, sql: &str, types: &[Type]) -> WireResult<Statement> {
        self.statements += 1;
        let name = format!("ib{}", self.statements);
        frontend::parse(&name, sql, types.iter().map(Type::oid), &mut self.out)?;
        frontend::describe(b'S', &name, &mut self.out)?;
        frontend::sync(&mut self.out);
        self.send()?;
        let (mut params, mut columns, mut error) = (Vec::new(), Vec::new(), None);
        loop {
            match self.message()? {
                Message::ParameterDescription(body) => {
                    let mut p = body.parameters();
                    while let Some(oid) = p.next()? {
                        params.push(Type::from_oid(oid).unwrap_or(Type::TEXT));
                    }
                }
                Message::RowDescription(body) => {
                    let mut f = body.fields();
                    while let Some(field) = f.next()? {
                        columns.push(Type::from_oid(field.type_oid()).unwrap_or(Type::BYTEA));
                    }
                }
                Message::ErrorResponse(body) => error = Some(server_error(&body)),
                Message::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        Ok(Statement {
            name: name.into(),
            params: params.into(),
            columns: columns.into(),
        })
    }

    /// Closes `stmt` on the server.
    pub(crate) fn close(&mut self, stmt: &Statement) -> WireResult<()> {
        frontend::close(b'S', &stmt.name, &mut self.out)?;
        frontend::sync(&mut self.out);
        self.send()?;
        self.results(|_| Ok(())).map(|_| ())
    }

    /// Bind and execute `stmt` with `params`, results in binary.
    fn bind_execute(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> WireResult<()> {
        if params.len() != stmt.params.len() {
            return Err(WireError::client(format!(
                "{} parameters given, the statement takes {}",
                params.len(),
                stmt.params.len()
            )));
        }
        let types = stmt.params.iter();
        let bound = frontend::bind(
            "",
            &stmt.name,
            Some(1),
            params.iter().zip(types),
            |(p, ty), buf| {
                p.to_sql_checked(ty, buf).map(|n| match n {
                    postgres::types::IsNull::Yes => postgres_protocol::IsNull::Yes,
                    postgres::types::IsNull::No => postgres_protocol::IsNull::No,
                })
            },
            Some(1),
            &mut self.out,
        );
        if let Err(e) = bound {
            self.out.clear();
            let cause = match e {
                frontend::BindError::Conversion(e) => e.to_string(),
                frontend::BindError::Serialization(e) => e.to_string(),
            };
            return Err(WireError::client(format!("a parameter: {cause}")));
        }
        frontend::execute("", 0, &mut self.out)?;
        frontend::sync(&mut self.out);
        self.send()?;
        Ok(())
    }

    /// Runs `stmt` with `rows` rows of parameters of the same types,
    /// `row(i)` giving row `i`'s: the Bind message written directly, with
    /// no per-value dispatch or boxing and no vector of every parameter.
    /// The rows its command tag counts.
    pub(crate) fn execute_rows<'a, P>(
        &mut self,
        stmt: &Statement,
        rows: usize,
        row: impl Fn(usize) -> P,
    ) -> WireResult<u64>
    where
        P: AsRef<[Param<'a>]>,
    {
        let first = if rows == 0 { None } else { Some(row(0)) };
        let kinds = first.as_ref().map_or(&[][..], |r| r.as_ref());
        let per_row = kinds.len();
        let count = rows * per_row;
        if count != stmt.params.len() || count > i16::MAX as usize {
            return Err(WireError::client(format!(
                "{count} parameters given, the statement takes {}",
                stmt.params.len()
            )));
        }
        let out = &mut self.out;
        let start = out.len();
        out.extend_from_slice(b"B\0\0\0\0\0");
        out.extend_from_slice(stmt.name.as_bytes());
        out.extend_from_slice(&[0]);
        // One format for every parameter and result column: binary.
        out.extend_from_slice(&[0, 1, 0, 1]);
        out.extend_from_slice(&(count as i16).to_be_bytes());
        // Every row's parameters go to the same columns: the first row's are
        // checked against the statement's types, the others against the
        // first row's kinds (a type comparison per value was a third of
        // the encoding).
        for i in 0..rows {
            let values = row(i);
            for (j, &p) in values.as_ref().iter().enumerate() {
                let ty = &stmt.params[i * per_row + j];
                let at = out.len();
                out.extend_from_slice(&[0; 4]);
                let written = if i == 0 || std::mem::discriminant(&p) != std::mem::discriminant(&kinds[j]) {
                    p.write(ty, out)
                } else {
                    p.write_unchecked(out);
                    Ok(())
                };
                if let Err(e) = written {
                    self.out.clear();
                    return Err(WireError::client(format!("a parameter: {e}")));
                }
                let len = (out.len() - at - 4) as i32;
                out[at..at + 4].copy_from_slice(&len.to_be_bytes());
            }
        }
        out.extend_from_slice(&[0, 1, 0, 1]);
        let len = (out.len() - start - 1) as i32;
        out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
        frontend::execute("", 0, &mut self.out)?;
        frontend::sync(&mut self.out);
        self.send()?;
        self.results(|_| Ok(()))
    }

    /// Runs `stmt`: the rows its command tag counts.
    pub(crate) fn execute(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> WireResult<u64> {
        self.bind_execute(stmt, params)?;
        self.results(|_| Ok(()))
    }

    /// Runs `stmt`: how many rows it returned (the rows are not decoded).
    pub(crate) fn query_count(&mut self, stmt: &Statement, params: &[&(dyn ToSql + Sync)]) -> WireResult<usize> {
        self.bind_execute(stmt, params)?;
        let mut rows = 0;
        self.results(|_| {
            rows += 1;
            Ok(())
        })?;
        Ok(rows)
    }

    /// Runs `stmt`, giving each row's column values (binary) to `row`.
    pub(crate) fn query_each(
        &mut self,
        stmt: &Statement,
        params: &[&(dyn ToSql + Sync)],
        mut row: impl FnMut(&RowValues<'_>) -> WireResult<()>,
    ) -> WireResult<usize> {
        self.bind_execute(stmt, params)?;
        let mut rows = 0;
        self.results(|values| {
            rows += 1;
            row(values)
        })?;
        Ok(rows)
    }

    /// Runs `sql` through the simple query protocol (several statements allowed).
    pub(crate) fn simple_query(&mut self, sql: &str) -> WireResult<SimpleResult> {
        frontend::query(sql, &mut self.out)?;
        self.send()?;
        let mut rows = Vec::new();
        let affected = self.results(|values| {
            let row = (0..values.ranges.len())
                .map(|i| values.value(i).map(|v| String::from_utf8_lossy(v).into_owned()))
                .collect();
            rows.push(row);
            Ok(())
        })?;
        Ok(SimpleResult { rows, affected })
    }

    /// Runs `sql` (simple protocol): the rows its last command tag counts
    /// (rows returned or changed), the rows themselves not decoded.
    pub(crate) fn simple_count(&mut self, sql: &str) -> WireResult<u64> {
        frontend::query(sql, &mut self.out)?;
        self.send()?;
        self.results(|_| Ok(()))
    }

    /// Runs `sql` (simple protocol), ignoring what it returns.
    pub(crate) fn batch_execute(&mut self, sql: &str) -> WireResult<()> {
        frontend::query(sql, &mut self.out)?;
        self.send()?;
        self.results(|_| Ok(())).map(|_| ())
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        // Terminate, so the server ends the backend at once (and flushes its statistics).
        self.out.clear();
        frontend::terminate(&mut self.out);
        let _ = self.send();
    }
}

/// The first column of a simple query's first row, parsed.
pub(crate) fn first_value<T: std::str::FromStr>(result: &SimpleResult) -> Option<T> {
    result.rows.first()?.first()?.as_deref()?.parse().ok()
}

/// A binary column value decoded as `T`.
pub(crate) fn decode<'a, T: postgres::types::FromSql<'a>>(ty: &Type, raw: Option<&'a [u8]>) -> WireResult<T> {
    if !T::accepts(ty) {
        return Err(WireError::client(format!(
            "a {ty} column read as {}",
            std::any::type_name::<T>()
        )));
    }
    let decoded = match raw {
        Some(raw) => T::from_sql(ty, raw),
        None => T::from_sql_null(ty),
    };
    decoded.map_err(|e| WireError::client(format!("a {ty} column: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DSN: &str = "postgres://postgres@127.0.0.1:5432/test";

    /// A connection to the local server; None (skip) when it is down outside CI, a failure in CI.
    fn connect() -> Option<Wire> {
        let config: Config = DSN.parse().unwrap();
        match Wire::connect(&config, None) {
            Ok(w) => Some(w),
            Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("PostgreSQL, and CI=true: {e}"),
            Err(e) => {
                eprintln!("note: PostgreSQL is not reachable ({e}); skipping (CI would fail)");
                None
            }
        }
    }

    #[test]
    fn binary_parameters_and_results_round_trip_and_rows_are_counted() {
        let Some(mut w) = connect() else { return };
        let stmt = w
            .prepare("SELECT g, (g * $2::float4)::float4, 'v' || g FROM generate_series(1::int8, $1) g")
            .unwrap();
        assert_eq!(w.query_count(&stmt, &[&10i64, &0.5f32]).unwrap(), 10);
        let mut seen = Vec::new();
        let n = w
            .query_each(&stmt, &[&3i64, &2.0f32], |v| {
                let cols = stmt.columns();
                let (k, x, s): (i64, f32, String) = (
                    decode(&cols[0], v.value(0))?,
                    decode(&cols[1], v.value(1))?,
                    decode(&cols[2], v.value(2))?,
                );
                seen.push((k, x, s));
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 3);
        let expected: Vec<(i64, f32, String)> =
            vec![(1, 2.0, "v1".into()), (2, 4.0, "v2".into()), (3, 6.0, "v3".into())];
        assert_eq!(seen, expected);
        // A column read as the wrong type is an error naming both.
        let e = w
            .query_each(&stmt, &[&1i64, &1.0f32], |v| {
                decode::<i32>(&stmt.columns()[0], v.value(0)).map(|_| ())
            })
            .unwrap_err();
        assert!(e.message.contains("int8") && e.message.contains("i32"), "{e}");
        // The command tag's count.
        let r = w.simple_query("SELECT 1 UNION ALL SELECT NULL").unwrap();
        assert_eq!(r.affected, 2);
        assert_eq!(r.rows, [vec![Some("1".to_string())], vec![None]]);
        // A wrong parameter count is refused before anything is sent.
        assert!(w.query_count(&stmt, &[&1i64]).unwrap_err().message.contains("2"));
        assert_eq!(w.query_count(&stmt, &[&1i64, &1.0f32]).unwrap(), 1);
    }

    #[test]
    fn rows_of_parameters_are_written_as_the_server_reads_them() {
        let Some(mut w) = connect() else { return };
        w.batch_execute("CREATE TEMP TABLE rows_params (k int8, t timestamp, i int4, d varchar(20))")
            .unwrap();
        let insert = w
            .prepare("INSERT INTO rows_params VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)")
            .unwrap();
        // 2025-01-01T00:00:01.000002 and 1999-12-31T23:59:59 (before PostgreSQL's epoch).
        let rows = [
            (7i64, 1_735_689_601_000_002i64, -3i32, "abc"),
            (-1, 946_684_799_000_000, i32::MAX, ""),
        ];
        let row = |i: usize| {
            let (k, t, n, d) = rows[i];
            [
                Param::Int8(k),
                Param::Timestamp(t),
                Param::Int4(n),
                Param::Text(d.as_bytes()),
            ]
        };
        assert_eq!(w.execute_rows(&insert, 2, row).unwrap(), 2);
        let r = w
            .simple_query("SELECT k, t, i, d FROM rows_params ORDER BY k DESC")
            .unwrap();
        let text = |i: usize| {
            r.rows[i]
                .iter()
                .map(|v| v.clone().unwrap_or_default())
                .collect::<Vec<_>>()
        };
        assert_eq!(text(0), ["7", "2025-01-01 00:00:01.000002", "-3", "abc"]);
        assert_eq!(text(1), ["-1", "1999-12-31 23:59:59", "2147483647", ""]);
        // A parameter of the wrong type, or count, is refused naming it; the connection goes on.
        let wrong = |_| [Param::Int4(1), Param::Timestamp(0), Param::Int4(0), Param::Text(b"x")];
        let e = w.execute_rows(&insert, 2, wrong).unwrap_err();
        assert!(e.message.contains("Int4(1)") && e.message.contains("int8"), "{e}");
        let e = w.execute_rows(&insert, 1, row).unwrap_err();
        assert!(e.message.contains("4 parameters given, the statement takes 8"), "{e}");
        assert_eq!(w.execute_rows(&insert, 2, row).unwrap(), 2);
    }

    #[test]
    fn a_server_error_names_its_sqlstate_and_the_connection_goes_on() {
        let Some(mut w) = connect() else { return };
        let stmt = w
            .prepare("SELECT 1 / ($1::int - g) FROM generate_series(1, 3) g")
            .unwrap();
        // Rows, then the error in the middle of them: the error, not a count.
        let e = w.query_count(&stmt, &[&2i32]).unwrap_err();
        assert_eq!(e.code.as_deref(), Some("22012"), "{e}");
        assert!(e.message.contains("division by zero"), "{e}");
        let e = w.prepare("SELECT FROM no_such_table_here").unwrap_err();
        assert_eq!(e.code.as_deref(), Some("42P01"), "{e}");
        assert_eq!(w.query_count(&stmt, &[&9i32]).unwrap(), 3);
    }

    #[test]
    fn a_message_larger_than_the_read_buffer_is_read_whole() {
        let Some(mut w) = connect() else { return };
        let r = w
            .simple_query(&format!("SELECT repeat('x', {}), 7", READ_SIZE * 5 + 3))
            .unwrap();
        assert_eq!(r.rows[0][0].as_ref().map(String::len), Some(READ_SIZE * 5 + 3));
        assert_eq!(r.rows[0][1].as_deref(), Some("7"));
        // Many small messages across reads.
        let stmt = w.prepare("SELECT g FROM generate_series(1, 20000) g").unwrap();
        assert_eq!(w.query_count(&stmt, &[]).unwrap(), 20000);
    }

    #[test]
    fn a_cancel_request_stops_the_running_statement() {
        let Some(mut w) = connect() else { return };
        let key = w.cancel_key();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            key.cancel();
        });
        let t = std::time::Instant::now();
        let e = w.batch_execute("SELECT pg_sleep(20)").unwrap_err();
        canceller.join().unwrap();
        assert_eq!(e.code.as_deref(), Some("57014"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));
        assert!(w.batch_execute("SELECT 1").is_ok());
    }

    #[test]
    fn sslmode_require_encrypts_over_tcp_and_not_over_a_unix_socket() {
        let Some(_) = connect() else { return };
        let (_, tls) = super::super::tls::connector(super::super::tls::SslMode::Require, None, None)
            .unwrap()
            .unwrap();
        let ssl = |w: &mut Wire| {
            let r = w
                .simple_query("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .unwrap();
            (r.rows[0][0].clone(), r.rows[0][1].clone())
        };
        let config: Config = DSN.parse().unwrap();
        let mut w = Wire::connect(&config, Some((&tls, true))).unwrap();
        let (on, version) = ssl(&mut w);
        assert_eq!(on.as_deref(), Some("t"));
        assert!(version.unwrap_or_default().starts_with("TLS"));
        // Prepared statements and binary results over TLS.
        let stmt = w.prepare("SELECT g FROM generate_series(1, $1) g").unwrap();
        assert_eq!(w.query_count(&stmt, &[&1000i32]).unwrap(), 1000);
        // As libpq: no TLS over a Unix socket.
        let socket: Config = "host=/var/run/postgresql user=postgres dbname=test".parse().unwrap();
        let mut w = Wire::connect(&socket, Some((&tls, true))).unwrap();
        assert_eq!(ssl(&mut w).0.as_deref(), Some("f"));
    }

    #[test]
    fn a_terminated_backend_reports_the_servers_reason_not_a_broken_pipe() {
        let Some(mut admin) = connect() else { return };
        let socket: Config = "host=/var/run/postgresql user=postgres dbname=test".parse().unwrap();
        for mut w in [connect().unwrap(), Wire::connect(&socket, None).unwrap()] {
            let pid: i32 = first_value(&w.simple_query("SELECT pg_backend_pid()").unwrap()).unwrap();
            admin
                .batch_execute(&format!("SELECT pg_terminate_backend({pid})"))
                .unwrap();
            std::thread::sleep(Duration::from_millis(200));
            let e = w.batch_execute("SELECT 1").unwrap_err();
            assert_eq!(e.code.as_deref(), Some("57P01"), "{e}");
        }
    }
}
