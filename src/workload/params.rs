//! How a run parameter reaches [`Config`](super::Config) from every front
//! end. The parameters themselves are declared once, in `config.rs`, with
//! [`params!`]: each declaration gives the configuration's field and its
//! default, the partial layer ([`Overrides`](super::Overrides)) that presets,
//! TOML files, Python keywords and campaign files fill, the command-line flag
//! ([`Flags`](super::Flags)), the name and documentation listed by
//! [`PARAMETERS`](super::PARAMETERS), and its own range check.
//!
//! Written by hand on purpose: the crate that derives clap and serde from one
//! struct (clap-serde-derive) is AGPL-licensed, and clap_config (0.1) cannot
//! refuse unknown keys; a declarative macro over clap's and serde's derives
//! is ~100 lines (ARCHITECTURE.md).

use serde::de::DeserializeOwned;
use serde_json::Value;

/// One run parameter, as [`PARAMETERS`](super::PARAMETERS) lists it.
#[derive(Clone, Copy, Debug)]
pub struct Parameter {
    /// Its name: the TOML key and Python keyword, and `--name-with-dashes` as a flag.
    pub name: &'static str,
    /// Its documentation, as the flag's help shows it.
    pub doc: &'static str,
}

/// A type a run parameter can have: how it is read from a JSON value (a
/// TOML file, Python keywords, a campaign's `[run]`) and from a flag.
pub trait Param: Sized {
    /// What a flag's text parses to (clap's value parser of this type).
    type Flag: Clone + Send + Sync + 'static;
    /// The value a flag gives.
    fn from_flag(flag: Self::Flag) -> Self;
    /// The value of `value`; the error says why (the caller names the parameter).
    fn from_json(value: Value) -> Result<Self, String>;
}

/// `value` as `T`, through serde; the error quotes the value.
pub(crate) fn deserialized<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_json::from_value(value.clone()).map_err(|e| format!("{value} is not valid here: {e}"))
}

/// Types whose flag is their own text, read through serde as a JSON value.
macro_rules! plain_params {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::workload::params::Param for $t {
            type Flag = $t;
            fn from_flag(flag: $t) -> $t {
                flag
            }
            fn from_json(value: serde_json::Value) -> std::result::Result<$t, String> {
                $crate::workload::params::deserialized(value)
            }
        }
    )*};
}
pub(crate) use plain_params;

plain_params!(bool, u8, u32, u64, f64, String);

/// An optional parameter: a flag sets it; JSON `null` (Python `None`) unsets it.
impl<T: Param + DeserializeOwned> Param for Option<T> {
    type Flag = T::Flag;
    fn from_flag(flag: T::Flag) -> Self {
        Some(T::from_flag(flag))
    }
    fn from_json(value: Value) -> Result<Self, String> {
        match value {
            Value::Null => Ok(None),
            v => T::from_json(v).map(Some),
        }
    }
}

impl Param for std::path::PathBuf {
    type Flag = std::path::PathBuf;
    fn from_flag(flag: Self::Flag) -> Self {
        flag
    }
    fn from_json(value: Value) -> Result<Self, String> {
        deserialized(value)
    }
}

/// A length range `[min, max]`: `N` or `MIN..MAX` as a flag, `N` or `[MIN, MAX]` in JSON.
impl Param for [u32; 2] {
    type Flag = crate::gen::Length;
    fn from_flag(flag: crate::gen::Length) -> Self {
        match flag {
            crate::gen::Length::Fixed(n) => [n, n],
            crate::gen::Length::Uniform { min, max } => [min, max],
        }
    }
    fn from_json(value: Value) -> Result<Self, String> {
        match value {
            Value::Number(_) => deserialized::<u32>(value).map(|n| [n, n]),
            v => deserialized(v),
        }
    }
}

/// Implements `FromStr` through serde for enums of named choices, so clap
/// parses their flags (`--pacing sleep`) with the same names and messages
/// as the TOML file and Python.
macro_rules! choice_flags {
    ($($t:ty),* $(,)?) => {$(
        impl std::str::FromStr for $t {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                $crate::workload::params::deserialized(serde_json::Value::from(text))
            }
        }
        $crate::workload::params::plain_params!($t);
    )*};
}
pub(crate) use choice_flags;

/// A range check of a declaration: `check = within(1, 4096)`.
pub(crate) fn within<T: PartialOrd + std::fmt::Display + Copy>(min: T, max: T) -> impl Fn(&T) -> Result<(), String> {
    move |&v| {
        if v < min || v > max {
            Err(format!("must be in [{min}, {max}], got {v}"))
        } else {
            Ok(())
        }
    }
}

/// A lower bound: `check = at_least(1)`.
pub(crate) fn at_least<T: PartialOrd + std::fmt::Display + Copy>(min: T) -> impl Fn(&T) -> Result<(), String> {
    move |&v| {
        if v < min {
            Err(format!("must be at least {min}"))
        } else {
            Ok(())
        }
    }
}

/// A finite number above zero, when given: `check = positive`.
pub(crate) fn positive<T: Copy + Into<Option<f64>>>(v: &T) -> Result<(), String> {
    match (*v).into() {
        Some(v) if !(v.is_finite() && v > 0.0) => Err(format!("must be > 0, got {v}")),
        _ => Ok(()),
    }
}

/// Declares the run parameters: for each, its documentation, its flag's
/// clap attributes, its name and type, its default, and optionally a check
/// of its value alone (`check = FN`, an `Fn(&T) -> Result<(), String>`).
/// Generates [`Config`](super::Config) and its `Default`,
/// [`Overrides`](super::Overrides), [`Flags`](super::Flags) and
/// [`PARAMETERS`](super::PARAMETERS).
macro_rules! params {
    ($(
        $(#[doc = $doc:literal])*
        #[arg($($arg:tt)*)]
        $name:ident : $ty:ty = $default:expr $(, check = $check:expr)? ;
    )*) => {
        /// Every parameter of a run (of the Insert Benchmark or the
        /// key/value steps). Row counts are per table. Serialized, it is the
        /// configuration a run records.
        #[derive(Clone, Debug, PartialEq, serde::Serialize)]
        pub struct Config {
            $( $(#[doc = $doc])* pub $name: $ty, )*
        }

        /// The defaults: the `quick` preset.
        impl Default for Config {
            fn default() -> Self {
                Config { $( $name: $default, )* }
            }
        }

        /// The parameters one layer gives (a preset, a TOML file, flags,
        /// Python keywords, a campaign's `[run]`); None: not given.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct Overrides {
            $( $(#[doc = $doc])* pub $name: Option<$ty>, )*
        }

        impl Overrides {
            /// Sets parameter `name` from a JSON value; an error names it.
            pub fn set(&mut self, name: &str, value: serde_json::Value) -> $crate::error::Result<()> {
                use $crate::workload::params::Param;
                let bad = |message: String| $crate::error::Error::config(name, message);
                match name {
                    $( stringify!($name) => self.$name = Some(<$ty as Param>::from_json(value).map_err(bad)?), )*
                    _ => return Err($crate::error::Error::config(name, "unknown parameter")),
                }
                Ok(())
            }

            /// These overrides, then `later`'s over them.
            pub fn then(mut self, later: Overrides) -> Overrides {
                $( if later.$name.is_some() { self.$name = later.$name; } )*
                self
            }

            /// Sets the parameters given here in `config`.
            pub fn apply_to(self, config: &mut Config) {
                $( if let Some(v) = self.$name { config.$name = v; } )*
            }

            /// The names of the parameters given here.
            pub fn given(&self) -> Vec<&'static str> {
                let mut names = Vec::new();
                $( if self.$name.is_some() { names.push(stringify!($name)); } )*
                names
            }
        }

        /// The parameters as `ibench run`'s flags.
        #[derive(Clone, Debug, Default, clap::Args)]
        #[command(next_help_heading = "Run parameters (also TOML keys and Python keywords, with '_')")]
        pub struct Flags {
            $( $(#[doc = $doc])* #[arg($($arg)*)] pub $name: Option<<$ty as $crate::workload::params::Param>::Flag>, )*
        }

        impl Flags {
            /// The flags given, as a layer.
            pub fn overrides(self) -> Overrides {
                use $crate::workload::params::Param;
                Overrides { $( $name: self.$name.map(<$ty as Param>::from_flag), )* }
            }
        }

        /// Every run parameter, in declaration order.
        pub const PARAMETERS: &[$crate::workload::params::Parameter] = &[
            $( $crate::workload::params::Parameter {
                name: stringify!($name),
                doc: concat!($($doc, "\n",)*),
            }, )*
        ];

        impl Config {
            /// Each value's own check (the declarations' `check =`); errors name the parameter.
            fn check_each(&self) -> $crate::error::Result<()> {
                $( $(
                    ($check)(&self.$name).map_err(|m| $crate::error::Error::config(stringify!($name), m))?;
                )? )*
                Ok(())
            }
        }
    };
}
pub(crate) use params;
