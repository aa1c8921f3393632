//! Flags that take one of a few names (`--format`, `--outcome`): read by the
//! command's own parse function, whose error says what it expects, while
//! the names are offered to `--help` and to the shell completion scripts,
//! which a plain parse function leaves without them.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;

/// The value parser of a flag that takes one of `names`.
#[derive(Clone)]
pub(crate) struct Choice<T> {
    names: Vec<&'static str>,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> Choice<T> {
    /// A flag that takes one of `names`, read by `parse`.
    pub(crate) fn new(names: impl IntoIterator<Item = &'static str>, parse: fn(&str) -> Result<T, String>) -> Self {
        Choice {
            names: names.into_iter().collect(),
            parse,
        }
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Choice<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let flag = arg.map_or_else(String::new, |arg| format!(" for '{arg}'"));
        let Some(text) = value.to_str() else {
            return Err(
                clap::Error::raw(ErrorKind::InvalidUtf8, format!("invalid UTF-8 in the value{flag}\n")).with_cmd(cmd),
            );
        };
        (self.parse)(text).map_err(|problem| {
            clap::Error::raw(
                ErrorKind::InvalidValue,
                format!("invalid value '{text}'{flag}: {problem}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(|name| PossibleValue::new(*name))))
    }
}
