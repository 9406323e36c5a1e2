//! Deterministic generators: what a workload's keys, values, rows and query
//! parameters are. Pure functions of `(seed, table, stream, index)`: no I/O,
//! no clocks, nothing that knows about a database.

mod keys;
mod kv;
mod parallel;
mod permutation;
mod pool;
mod prefetch;
mod query;
mod rows;
mod stream;
mod sysbench;
mod values;
mod window;
mod zipf;

pub use keys::{check_key_size, encode_key, encode_keys, KeyCursor, KeyGen, KeyKind, KeySpec};
pub use kv::{decode_key, KvBatch, KvValues};
pub use parallel::{par_fill, try_resize, try_vec, CHUNK};
pub use permutation::Permutation;
pub use pool::{Pool, ValueSource, PIECE, POOL_BYTES};
pub use query::{PointQueries, RangeQueries, RangeQuery, SecondaryIndex, POINT_KEYS};
pub use rows::{Domains, Row, RowCursor, RowGen, RowSpec, Rows, EPOCH_MICROS};
pub use stream::{Purpose, Stream, StreamRng, BLOCK};
pub use sysbench::{SbDraws, SbIds, SbRowGen, SbRowSpec, SbRows, SbStatement, C_LEN, PAD_LEN, SB_EVENTS, SB_TABLES};
pub use values::{Alphabet, Compressible, Length, ValueGen, ValueSpec, Values, MAX_LENGTH, TEXT_ALPHABET};
pub use window::Window;
