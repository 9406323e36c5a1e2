//! The states of runs, steps and a campaign's runs, as types. Each is
//! written as the lower-case text the result files have always held.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Declares a status enum: its variants with their recorded text.
macro_rules! status {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// The text the result files hold.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                match text {
                    $($text => Ok($name::$variant),)*
                    _ => Err(format!("unknown {} {text:?}", stringify!($name))),
                }
            }
        }
    };
}

status! {
    /// Where a run is: `runs.parquet`'s `status`.
    #[derive(Default)]
    RunStatus {
        /// Under way.
        #[default]
        Running = "running",
        /// Every step ran its course.
        Ok = "ok",
        /// A step or the run failed.
        Error = "error",
        /// A stop request (Ctrl-C, SIGTERM) ended it.
        Interrupted = "interrupted",
        /// Its process died while it ran (a reader's verdict on a run that
        /// says `running` and that no live process holds).
        Killed = "killed",
    }
}

status! {
    /// How a step ended: `steps.parquet`'s `status`.
    #[derive(Default)]
    StepStatus {
        /// It ran its course.
        #[default]
        Ok = "ok",
        /// An operation failed.
        Error = "error",
        /// A stop request ended it.
        Interrupted = "interrupted",
        /// `max_seconds` ended it.
        Timeout = "timeout",
        /// Under way: a provisional row, written while the step runs.
        Running = "running",
        /// Its run's process died while it ran (a reader's verdict on a
        /// provisional row no live process holds).
        Killed = "killed",
    }
}

status! {
    /// How one run of a campaign ended: `campaign.json`'s `status`.
    CampaignRunStatus {
        /// The run ended ok.
        Ok = "ok",
        /// The run failed.
        Error = "error",
        /// A stop request ended it.
        Interrupted = "interrupted",
        /// Its server did not start.
        ServerError = "server error",
        /// The campaign's process died while it ran.
        Killed = "killed",
    }
}

impl From<RunStatus> for CampaignRunStatus {
    fn from(s: RunStatus) -> Self {
        match s {
            RunStatus::Ok => CampaignRunStatus::Ok,
            RunStatus::Interrupted => CampaignRunStatus::Interrupted,
            RunStatus::Killed => CampaignRunStatus::Killed,
            RunStatus::Error | RunStatus::Running => CampaignRunStatus::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_written_as_the_files_have_always_held_them() {
        assert_eq!(
            serde_json::to_string(&CampaignRunStatus::ServerError).unwrap(),
            "\"server error\""
        );
        assert_eq!(RunStatus::Interrupted.to_string(), "interrupted");
        assert_eq!("timeout".parse::<StepStatus>(), Ok(StepStatus::Timeout));
        assert!("finished".parse::<RunStatus>().is_err());
    }
}
