//! The roles of a step's threads (docs/harness.md's table): which threads a
//! step runs, the operation each times, and which are paced.

use crate::metrics::Op;
use crate::workload::{Config, KvOp, QueryKind, Step};

/// A thread's job in a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Role {
    Insert,
    Delete,
    Query(QueryKind),
    CreateIndex,
    Wait,
    KvWrite(KvOp),
    KvRead(KvOp),
    KvMaintain(KvOp),
}

impl Role {
    /// The operation the role times.
    pub(super) fn op(self) -> Op {
        match self {
            Role::KvWrite(op) if op.deletes() => Op::Delete,
            Role::Insert | Role::KvWrite(_) => Op::Insert,
            Role::Delete => Op::Delete,
            Role::Query(_) | Role::KvRead(_) => Op::Query,
            Role::CreateIndex => Op::CreateIndex,
            Role::Wait | Role::KvMaintain(_) => Op::Maintenance,
        }
    }

    /// True for roles whose one statement may run for long: a stop cancels it at once.
    pub(super) fn long(self) -> bool {
        matches!(self, Role::CreateIndex | Role::Wait | Role::KvMaintain(_))
    }

    pub(super) fn kv(self) -> bool {
        matches!(self, Role::KvWrite(_) | Role::KvRead(_) | Role::KvMaintain(_))
    }
}

/// True when `role` of `step` is an open-loop paced stream.
pub(super) fn paced(c: &Config, step: Step, role: Role) -> bool {
    match role {
        Role::Insert | Role::Delete => c.writes(step).is_some_and(|w| w.rate.is_some()),
        Role::KvWrite(op) => op == KvOp::ReadWhileWriting,
        _ => false,
    }
}

/// The roles of `step` on `tables` tables: (client, table or thread, role).
pub(super) fn roles(c: &Config, step: Step, tables: u32) -> Vec<(u32, Role)> {
    match step {
        Step::CreateIndexes => (0..tables).map(|t| (t, Role::CreateIndex)).collect(),
        Step::Wait => vec![(0, Role::Wait)],
        Step::Kv(op) => kv_roles(c, op),
        step => {
            let mut roles = Vec::new();
            for client in 0..c.clients {
                roles.push((client, Role::Insert));
                if c.deletes(step) {
                    roles.push((client, Role::Delete));
                }
                if let Step::Query { kind, .. } = step {
                    roles.push((client, Role::Query(kind)));
                }
            }
            roles
        }
    }
}

/// The roles of a key/value step: (thread, role).
fn kv_roles(c: &Config, op: KvOp) -> Vec<(u32, Role)> {
    let threads = c.threads;
    match op {
        _ if op.maintains() => vec![(0, Role::KvMaintain(op))],
        KvOp::ReadWhileWriting => (0..threads)
            .map(|t| (t, Role::KvRead(op)))
            .chain([(threads, Role::KvWrite(op))])
            .collect(),
        _ if op.reads() => (0..threads).map(|t| (t, Role::KvRead(op))).collect(),
        _ => (0..threads).map(|t| (t, Role::KvWrite(op))).collect(),
    }
}
