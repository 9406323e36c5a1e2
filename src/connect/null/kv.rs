//! The key/value steps on the null connector: puts are inserts (they
//! write and fsync when asked to), gets and scans queries, deletes
//! deletes; nothing is kept.

use super::session::NullSession;
use crate::connect::{KvSession, Session};
use crate::error::Result;
use crate::gen::{KvBatch, Rows};
use crate::stop::Stop;

impl KvSession for NullSession {
    fn create(&mut self, _: &str, _: usize) -> Result<()> {
        Ok(())
    }
    fn put(&mut self, table: &str, _: &KvBatch) -> Result<()> {
        self.insert(table, &Rows::default()).map(|_| ())
    }
    fn get(&mut self, _: &str, _: &[u8], _: &mut Vec<u8>) -> Result<bool> {
        self.count(2)?;
        self.operate(2)?;
        Ok(false)
    }
    fn scan(&mut self, _: &str, _: &[u8], _: usize, out: &mut KvBatch) -> Result<usize> {
        out.clear();
        self.count(2)?;
        self.operate(2)?;
        Ok(0)
    }
    fn scan_reverse(&mut self, table: &str, start: &[u8], limit: usize, out: &mut KvBatch) -> Result<usize> {
        self.scan(table, start, limit, out)
    }
    fn delete_keys(&mut self, _: &str, _: &KvBatch) -> Result<()> {
        self.count(1)?;
        self.operate(1)
    }
    fn count(&mut self, _: &str) -> Result<u64> {
        Ok(0)
    }
    fn flush(&mut self, _: &str, _: &Stop) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    fn wait_for_compaction(&mut self, _: &str, _: &Stop) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}
