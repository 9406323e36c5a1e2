//! Writing record batches to a Parquet file.

use crate::error::{Error, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::path::{Path, PathBuf};

/// A Parquet file being written: created (and so checked) before any work,
/// written batch by batch, and complete only after [`ParquetFile::finish`].
pub struct ParquetFile {
    path: PathBuf,
    writer: ArrowWriter<File>,
}

impl ParquetFile {
    /// Creates `path` for batches of `schema` (zstd-compressed columns).
    pub fn create(path: &Path, schema: SchemaRef) -> Result<Self> {
        let file = File::create(path).map_err(|source| Error::Io {
            action: "cannot create",
            path: path.to_owned(),
            source,
        })?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let writer = ArrowWriter::try_new(file, schema, Some(props))
            .map_err(|e| Error::format(format!("cannot write {}", path.display()), e))?;
        Ok(ParquetFile {
            path: path.to_owned(),
            writer,
        })
    }

    /// Appends one batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.writer
            .write(batch)
            .map_err(|e| Error::format(format!("cannot write {}", self.path.display()), e))
    }

    /// Writes the footer, then syncs the file to its disk: a caller that
    /// renames it into place afterwards never leaves an empty or partial
    /// file behind a power loss.
    pub fn finish(self) -> Result<()> {
        let file = self
            .writer
            .into_inner()
            .map_err(|e| Error::format(format!("cannot finish {}", self.path.display()), e))?;
        file.sync_all().map_err(|source| Error::Io {
            action: "cannot sync",
            path: self.path,
            source,
        })
    }
}
