//! MyRocks' RocksDB event log (`#rocksdb/LOG` of a local server): which
//! compactions and flushes are running now. MariaDB's MyRocks has no
//! `information_schema.rocksdb_active_compaction_stats`, and its counters
//! move only when a compaction ends, but every job writes an
//! `EVENT_LOG_v1 {"job": N, "event": "compaction_started", "files_L3": [..]}`
//! line when it starts and a `compaction_finished` one when it ends.
//!
//! The LOG is buffered: RocksDB writes it out only when a later line comes
//! at least seconds after the last write-out, so the finish line of the last
//! compaction can stay unwritten for as long as the server is idle. A
//! compaction whose finish line is missing is therefore also over once one
//! of its input files is gone from the data directory (inputs are deleted
//! only after the compaction's result is installed). Flushes are left to the
//! column families' pending-flush counters.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// Follows a RocksDB LOG file from its start.
#[derive(Debug)]
pub(super) struct EventLog {
    path: PathBuf,
    /// How far the file has been read.
    offset: u64,
    /// A line not yet ended.
    partial: String,
    /// Compactions started and not yet finished: job → input file numbers.
    running: HashMap<u64, Vec<u64>>,
}

impl EventLog {
    /// The log at `path`; None when it cannot be read (a remote server, no permission).
    pub(super) fn open(path: PathBuf) -> Option<EventLog> {
        std::fs::File::open(&path).ok()?;
        Some(EventLog {
            path,
            offset: 0,
            partial: String::new(),
            running: HashMap::new(),
        })
    }

    /// The compactions running now, after reading what the log gained since
    /// the last call (from the start again if it was replaced).
    pub(super) fn running(&mut self) -> std::io::Result<usize> {
        let mut f = std::fs::File::open(&self.path)?;
        let len = f.metadata()?.len();
        if len < self.offset {
            // A new LOG (the server restarted, or the old one was rolled).
            self.offset = 0;
            self.partial.clear();
            self.running.clear();
        }
        f.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        self.offset += bytes.len() as u64;
        self.partial.push_str(&String::from_utf8_lossy(&bytes));
        if let Some(end) = self.partial.rfind('\n') {
            let complete = self.partial[..end].to_string();
            self.partial.drain(..=end);
            for line in complete.lines() {
                self.read_line(line);
            }
        }
        let dir = self.path.parent().map(PathBuf::from).unwrap_or_default();
        self.running
            .retain(|_, inputs| inputs.iter().all(|n| dir.join(format!("{n:06}.sst")).exists()));
        Ok(self.running.len())
    }

    fn read_line(&mut self, line: &str) {
        let Some(at) = line.find("EVENT_LOG_v1 ") else { return };
        let Ok(event) = serde_json::from_str::<serde_json::Value>(&line[at + "EVENT_LOG_v1 ".len()..]) else {
            return;
        };
        let (Some(job), Some(kind)) = (event["job"].as_u64(), event["event"].as_str()) else {
            return;
        };
        match kind {
            "compaction_started" => {
                let inputs = event
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(key, _)| key.starts_with("files_L"))
                    .filter_map(|(_, files)| files.as_array())
                    .flatten()
                    .filter_map(|n| n.as_u64())
                    .collect();
                self.running.insert(job, inputs);
            }
            "compaction_finished" => {
                self.running.remove(&job);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn compactions_run_from_their_start_line_to_their_finish_line_or_until_an_input_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOG");
        let mut f = std::fs::File::create(&path).unwrap();
        let line = |job: u64, event: &str, files: &str| {
            format!("2026/12/01-11:57:47.390466 25996 EVENT_LOG_v1 {{\"time_micros\": 1, \"job\": {job}, \"event\": \"{event}\"{files}}}\n")
        };
        for n in [12, 13, 20] {
            std::fs::write(dir.path().join(format!("{n:06}.sst")), "").unwrap();
        }
        let started = |job, files| line(job, "compaction_started", files);
        write!(
            f,
            "{}{}{}",
            line(6, "flush_started", ""),
            started(7, ", \"files_L0\": [12], \"files_L1\": [13]"),
            started(8, ", \"files_L2\": [20]")
        )
        .unwrap();
        let mut log = EventLog::open(path.clone()).unwrap();
        assert_eq!(log.running().unwrap(), 2, "flushes are not counted");
        // Half a line is kept until its end arrives.
        let finish = line(7, "compaction_finished", "");
        write!(f, "{}", &finish[..20]).unwrap();
        assert_eq!(log.running().unwrap(), 2);
        writeln!(f, "{}2026/12/01 other text", &finish[20..]).unwrap();
        assert_eq!(log.running().unwrap(), 1);
        // The finish line still buffered in the server, but an input deleted.
        std::fs::remove_file(dir.path().join("000020.sst")).unwrap();
        assert_eq!(log.running().unwrap(), 0);
        // A new, shorter LOG is read from its start.
        std::fs::write(&path, started(9, ", \"files_L0\": [12]")).unwrap();
        assert_eq!(log.running().unwrap(), 1);
        assert!(EventLog::open(dir.path().join("missing")).is_none());
    }
}
