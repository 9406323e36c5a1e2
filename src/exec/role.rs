//! The roles of a step's threads (docs/harness.md's table): which threads a
//! step runs, the operation each times, and which are paced.

use crate::metrics::Op;
use crate::workload::{Config, KvOp, Microbenchmark, QueryKind, SbStep, Step};

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
    /// sysbench's load: this connection's share of the tables.
    SbLoad,
    /// The index on k of this connection's share of the tables.
    SbIndex,
    /// A postwrite pause.
    SbPause,
    /// A client running a microbenchmark's events.
    SbEvents(Microbenchmark),
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
            Role::Wait | Role::KvMaintain(_) | Role::SbPause => Op::Maintenance,
            Role::SbLoad => Op::Insert,
            Role::SbIndex => Op::CreateIndex,
            Role::SbEvents(_) => Op::Event,
        }
    }

    /// The operations the role times: its own, and the statements of a
    /// sysbench event.
    pub(super) fn ops(self) -> &'static [Op] {
        match self {
            Role::SbEvents(_) => &[Op::Event, Op::Statement],
            _ => match self.op() {
                Op::Insert => &[Op::Insert],
                Op::Delete => &[Op::Delete],
                Op::Query => &[Op::Query],
                Op::CreateIndex => &[Op::CreateIndex],
                Op::Maintenance => &[Op::Maintenance],
                Op::Event => &[Op::Event],
                Op::Statement => &[Op::Statement],
            },
        }
    }

    /// True for roles whose one statement may run for long: a stop cancels it at once.
    pub(super) fn long(self) -> bool {
        matches!(
            self,
            Role::CreateIndex | Role::Wait | Role::KvMaintain(_) | Role::SbIndex | Role::SbPause
        )
    }

    pub(super) fn kv(self) -> bool {
        matches!(self, Role::KvWrite(_) | Role::KvRead(_) | Role::KvMaintain(_))
    }

    /// A short name of the role, for its threads' names.
    pub(super) fn short(self) -> &'static str {
        match self {
            Role::Insert => "ins",
            Role::Delete => "del",
            Role::Query(_) => "qry",
            Role::CreateIndex => "idx",
            Role::Wait => "wait",
            Role::KvWrite(_) => "kvw",
            Role::KvRead(_) => "kvr",
            Role::KvMaintain(_) => "kvm",
            Role::SbLoad => "load",
            Role::SbIndex => "sbix",
            Role::SbPause => "pause",
            Role::SbEvents(_) => "ev",
        }
    }

    /// True for the sysbench family's roles (they work on its tables).
    pub(super) fn sb(self) -> bool {
        matches!(self, Role::SbLoad | Role::SbIndex | Role::SbPause | Role::SbEvents(_))
    }
}

/// True when `role` of `step` is an open-loop paced stream.
pub(super) fn paced(c: &Config, step: Step, role: Role) -> bool {
    match role {
        Role::Insert | Role::Delete => c.writes(step).is_some_and(|w| w.rate.is_some()),
        Role::KvWrite(op) => op == KvOp::ReadWhileWriting,
        Role::SbEvents(_) => c.events_per_second.is_some(),
        _ => false,
    }
}

/// The roles of `step` on `tables` tables: (client, table or thread, role).
pub(super) fn roles(c: &Config, step: Step, tables: u32) -> Vec<(u32, Role)> {
    match step {
        Step::CreateIndexes => (0..tables).map(|t| (t, Role::CreateIndex)).collect(),
        Step::Wait => vec![(0, Role::Wait)],
        Step::Kv(op) => kv_roles(c, op),
        Step::Sysbench(sb) => sb_roles(c, sb),
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

/// The roles of a sysbench step: (client or load connection, role). The
/// load and the index use `load_connections` connections (at most one per
/// table), each its share of the tables.
fn sb_roles(c: &Config, step: SbStep) -> Vec<(u32, Role)> {
    let loaders = c.load_connections.min(c.tables);
    match step {
        SbStep::Load => (0..loaders).map(|i| (i, Role::SbLoad)).collect(),
        SbStep::CreateIndex => (0..loaders).map(|i| (i, Role::SbIndex)).collect(),
        SbStep::Postwrite(_) => vec![(0, Role::SbPause)],
        SbStep::Run(m) => (0..c.clients).map(|client| (client, Role::SbEvents(m))).collect(),
    }
}
