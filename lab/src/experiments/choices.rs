//! Options that name choices from a registry (variants, wait strategies, schedulers,
//! payloads): one clap value parser that keeps the option's own parsing (lists, `all`) and
//! tells clap every name it accepts, so `--help` lists them (`-h`: `[possible values: …]`;
//! `--help`: a line per name with its description) from the registry itself, never from
//! a hand-written list that can fall behind. `tests/help.rs` checks each help against
//! what the option accepts.

use crate::measure::variants::{self, VariantInfo, WAITS};
use crate::units::parse_list;
use clap::builder::{PossibleValue, TypedValueParser};

/// A value parser: `parse` decides (its error is the one-line message), `values` are the
/// names `--help` lists.
#[derive(Clone, Copy)]
pub struct Choices<T> {
    parse: fn(&str) -> Result<T, String>,
    values: fn() -> Vec<PossibleValue>,
}

impl<T> Choices<T> {
    /// A parser from its parse function and the names it accepts.
    pub const fn new(
        parse: fn(&str) -> Result<T, String>,
        values: fn() -> Vec<PossibleValue>,
    ) -> Self {
        Choices { parse, values }
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Choices<T> {
    type Value = T;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        (self.parse)(&value.to_string_lossy())
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{e}\n")))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.values)().into_iter()))
    }
}

/// The possible values of a variant list: each variant with its description (and what it
/// needs), then `all`.
pub fn variant_values(list: &[VariantInfo], all: Option<&'static str>) -> Vec<PossibleValue> {
    let mut v: Vec<PossibleValue> =
        list.iter().map(|i| PossibleValue::new(i.name).help(i.help())).collect();
    v.extend(all.map(|help| PossibleValue::new("all").help(help)));
    v
}

/// disruptor-vs-lbq's `--variants`: a comma list of the registry's names, or `all`; kept
/// as given (the plan expands `all` and checks what can run here).
pub fn variant_list(s: &str) -> Result<String, String> {
    if s.trim() != "all" {
        for name in parse_list(s) {
            variants::find(&name).ok_or_else(|| variants::unknown_variant(&name))?;
        }
    }
    Ok(s.to_string())
}

/// Every variant of this process, then `all`.
pub fn all_variants() -> Vec<PossibleValue> {
    variant_values(&variants::all(), Some(variants::ALL_HELP))
}

/// `--wait` of the ring: a comma list of the ring's wait strategies, or `all`; kept as
/// given.
pub fn wait_list(s: &str) -> Result<String, String> {
    if s.trim() != "all" {
        for w in parse_list(s) {
            variants::check_wait(&w)?;
        }
    }
    Ok(s.to_string())
}

/// The ring's wait strategies, then `all`.
pub fn waits_and_all() -> Vec<PossibleValue> {
    waits()
        .into_iter()
        .chain([PossibleValue::new("all").help("every wait strategy above")])
        .collect()
}

/// The ring's wait strategies, each with its description.
pub fn waits() -> Vec<PossibleValue> {
    WAITS.iter().map(|(w, d)| PossibleValue::new(*w).help(*d)).collect()
}
