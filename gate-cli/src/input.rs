//! Reading the command's inputs with bounded memory.
//!
//! Inputs come from files and pipes nobody checked (`/dev/zero`, a tool's
//! binary error body, a log of unknown size), so nothing here reads without
//! a limit: a whole document stops at [`MAX_DOCUMENT_BYTES`], and JSON-lines
//! input is streamed one line at a time, each at most [`MAX_LINE_BYTES`].

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use crate::UsageError;

/// The most bytes read of one whole document (a tool list, a transcript, a
/// text to sanitize). 64 MiB is far above any real one (2,260 tool
/// definitions take a few MiB) while keeping the parsed copy in memory
/// within a few hundred MiB.
const MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// The most bytes of one line of JSON-lines input (`gate check`'s calls),
/// its line break excluded. A call is one model output, and no model API
/// returns more than about 128k tokens (under 1 MiB of text) in one turn, so
/// 4 MiB admits every real call with room for escaping.
const MAX_LINE_BYTES: usize = 4 << 20;

/// `n` bytes as the limits are written in docs/cli.md (`4 MiB`).
fn mib(n: usize) -> String {
    format!("{} MiB", n >> 20)
}

/// Where an input comes from: a file, or standard input for `-`.
fn open(path: &str) -> Result<Box<dyn BufRead>, UsageError> {
    if path == "-" {
        Ok(Box::new(std::io::stdin().lock()))
    } else {
        let file = File::open(path).map_err(|e| UsageError(format!("cannot read `{path}`: {e}")))?;
        Ok(Box::new(BufReader::new(file)))
    }
}

/// How an input is named in messages.
fn describe(path: &str) -> String {
    if path == "-" {
        "standard input".to_owned()
    } else {
        format!("`{path}`")
    }
}

/// The bytes of a file, or of standard input for `-`, refused past
/// [`MAX_DOCUMENT_BYTES`] without reading further.
pub(crate) fn read_bytes(path: &str) -> Result<Vec<u8>, UsageError> {
    let mut bytes = Vec::new();
    open(path)?
        .take(MAX_DOCUMENT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", describe(path))))?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(UsageError(format!(
            "{} is larger than {}, the most gate reads of one document; split it",
            describe(path),
            mib(MAX_DOCUMENT_BYTES)
        )));
    }
    Ok(bytes)
}

/// The text of a file, or of standard input for `-`: at most
/// [`MAX_DOCUMENT_BYTES`], and UTF-8 (JSON has no other encoding).
pub(crate) fn read_text(path: &str) -> Result<String, UsageError> {
    String::from_utf8(read_bytes(path)?).map_err(|e| {
        UsageError(format!(
            "{} is not UTF-8 text: invalid byte at offset {}",
            describe(path),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// JSON-lines input, one line at a time, each at most [`MAX_LINE_BYTES`].
pub(crate) struct Lines {
    reader: Box<dyn BufRead>,
    name: String,
    number: usize,
    line: Vec<u8>,
}

impl Lines {
    /// The lines of a file, or of standard input for `-`.
    pub(crate) fn open(path: &str) -> Result<Self, UsageError> {
        Ok(Lines {
            reader: open(path)?,
            name: describe(path),
            number: 0,
            line: Vec::new(),
        })
    }

    /// The next line (its number from 1, its bytes without the line break),
    /// or `None` at the end. A line longer than [`MAX_LINE_BYTES`] is an
    /// error as soon as the limit is passed, so an endless line costs no
    /// more memory than the limit.
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &[u8])>, UsageError> {
        self.line.clear();
        let read = (&mut self.reader)
            .take(MAX_LINE_BYTES as u64 + 2)
            .read_until(b'\n', &mut self.line)
            .map_err(|e| UsageError(format!("cannot read {}: {e}", self.name)))?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
        }
        if self.line.len() > MAX_LINE_BYTES {
            return Err(UsageError(format!(
                "line {} of {} is longer than {} ({MAX_LINE_BYTES} bytes), the most gate reads of one line; \
                 each call must be one JSON line",
                self.number,
                self.name,
                mib(MAX_LINE_BYTES)
            )));
        }
        Ok(Some((self.number, &self.line)))
    }
}
