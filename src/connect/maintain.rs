//! What the backends' wait steps share: a privileged statement skipped with
//! a note when the user lacks the privilege, and the reference scripts'
//! statement per table run at once on connections of their own (`vac_pg`'s
//! VACUUMs, `vac_my`'s ANALYZEs), each cancelled once on a stop request.

use crate::error::{Error, Result};
use crate::stop::Stop;
use std::sync::Mutex;
use std::time::Duration;

/// Runs a privileged maintenance statement: a missing privilege is a note
/// of what was skipped, not a failure. True when it ran.
pub(crate) fn privileged(what: &str, result: Result<()>, notes: &mut Vec<String>) -> Result<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(e) if e.is_privilege() => {
            notes.push(format!("{what} skipped: {e}"));
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Runs `run(table, register)` for every table at once, each on a thread
/// of its own (`run` opens its own connection and registers what cancels
/// its statement), and `meanwhile` on this thread. Until every thread is
/// done, a stop request cancels each registered statement once (those
/// registered later too). Returns what `meanwhile` returned and the first
/// error of the threads, a statement cancelled by a stop being none; a
/// thread that panicked is an error naming `statement`.
pub(crate) fn per_table<H: Send, R>(
    tables: &[String],
    stop: &Stop,
    target: &str,
    statement: &str,
    run: impl Fn(&str, &dyn Fn(H)) -> Result<()> + Sync,
    cancel: impl Fn(&H),
    meanwhile: impl FnOnce() -> R,
) -> (R, Result<()>) {
    let handles: Mutex<Vec<H>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let threads: Vec<_> = tables
            .iter()
            .map(|t| {
                let (handles, run) = (&handles, &run);
                scope.spawn(move || {
                    let register = |h: H| handles.lock().unwrap_or_else(|p| p.into_inner()).push(h);
                    run(t, &register)
                })
            })
            .collect();
        let meant = meanwhile();
        let mut cancelled = 0;
        while !threads.iter().all(|h| h.is_finished()) {
            if stop.requested() {
                let handles = handles.lock().unwrap_or_else(|p| p.into_inner());
                for h in &handles[cancelled..] {
                    cancel(h);
                }
                cancelled = handles.len();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut outcome = Ok(());
        for h in threads {
            let result = h
                .join()
                .unwrap_or_else(|_| Err(Error::database(target, format!("a {statement} thread panicked"))));
            match result {
                Err(e) if e.is_canceled() && stop.requested() => {}
                other => outcome = outcome.and(other),
            }
        }
        (meant, outcome)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn every_table_runs_at_once_and_a_stop_cancels_each_running_statement() {
        let tables: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let stop = Stop::new();
        let flags: Vec<AtomicBool> = (0..3).map(|_| AtomicBool::new(false)).collect();
        let (meant, outcome) = per_table(
            &tables,
            &stop,
            "t",
            "TEST",
            |t, register| {
                let i = (t.as_bytes()[0] - b'a') as usize;
                register(i);
                while !flags[i].load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                match t {
                    "b" => Err(Error::database("t", "boom")),
                    _ => Err(Error::database_kind(
                        "t",
                        "cancelled",
                        crate::error::DbErrorKind::Canceled,
                    )),
                }
            },
            |&i: &usize| flags[i].store(true, Ordering::SeqCst),
            || {
                stop.request();
                7
            },
        );
        assert_eq!(meant, 7);
        // The cancelled ones are no error after a stop; the other one is.
        assert!(outcome.unwrap_err().to_string().contains("boom"));
    }
}
