//! What follows `sqlite:` in a DSN, parsed without I/O: a file's path
//! (percent-decoded) or `:memory:`.

use crate::error::{Error, Result};
use std::path::PathBuf;
use std::str::FromStr;

/// Where the database lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// A file, in WAL mode.
    File(PathBuf),
    /// A private in-memory database (`:memory:`).
    Memory,
}

impl FromStr for Place {
    type Err = Error;

    fn from_str(rest: &str) -> Result<Place> {
        match rest {
            "" => Err(Error::config(
                "db",
                "sqlite: needs a path (sqlite:PATH) or sqlite::memory:",
            )),
            ":memory:" => Ok(Place::Memory),
            path => Ok(Place::File(PathBuf::from(crate::connect::dsn::decode(path)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_percent_decoded_and_memory_is_named() {
        assert_eq!(
            "/tmp/my%20db".parse::<Place>().unwrap(),
            Place::File("/tmp/my db".into())
        );
        assert_eq!(":memory:".parse::<Place>().unwrap(), Place::Memory);
        assert!("".parse::<Place>().unwrap_err().to_string().contains("sqlite::memory:"));
    }
}
