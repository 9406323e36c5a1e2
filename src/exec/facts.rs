//! What a run records about where it ran: host facts, the build, the
//! server's settings (secrets hidden), the disks it counts, and the warnings
//! they call for.

use super::plan::Probe;
use crate::connect::{redact_setting, Connector};
use crate::metrics::{host_facts, warnings, Disks, ServerProcesses, Setting};

/// The settings to record, the warnings, and where host counters come from.
pub(super) fn environment(connector: &dyn Connector) -> (Vec<Setting>, Vec<String>, Probe) {
    let mut server = Vec::new();
    let mut trouble = connector.recovered();
    match connector.configuration() {
        Ok(rows) => server.extend(rows.into_iter().map(|s| Setting {
            value: redact_setting(&s.name, &s.value),
            ..s
        })),
        Err(e) => trouble.push(format!("the server's configuration could not be read: {e}")),
    }
    let names = connector.server_processes();
    let local = !names.is_empty();
    let root = if local { connector.server_pid() } else { None };
    if local && root.is_none() {
        trouble.push(format!(
            "the server's main process was not found on this host: its CPU and memory are those of every {} process here, another server's too",
            names.join(" or ")
        ));
    }
    let servers = ServerProcesses { names, root };
    let data = connector.data_path();
    if local && data.is_none() {
        trouble.push(
            "the server's data directory is unknown (data_directory needs superuser or pg_read_all_settings): \
             disk counters cover all disks and the data directory's size is not measured"
                .into(),
        );
    }
    let disks = Disks::for_path(data.as_deref());
    let facts = host_facts(data.as_deref(), &disks);
    let mut warnings = warnings(&facts, local, connector.over_network());
    warnings.extend(trouble);
    (
        facts.into_iter().chain(server).collect(),
        warnings,
        Probe { servers, disks },
    )
}

/// The host's name.
pub(super) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}
