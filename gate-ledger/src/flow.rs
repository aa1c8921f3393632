//! What the information-flow guard remembers of a task, as stored.
//!
//! The guard asks whether an argument came from text a third party wrote,
//! or carries the user's private data out; it answers from what the task
//! has read. That memory is part of the task's state so that it survives a
//! restart and holds on every worker: which labels the task has seen, and
//! a fingerprint of every value it read since (never the text itself), each
//! with where it was seen. The memory is bounded ([`MAX_FLOW_MARKS`] values,
//! [`MAX_FLOW_SOURCES`] untrusted results); past the bound the task keeps
//! what it has, stops recording, and the guard treats it as `strict`. Of
//! the user's own messages it keeps, beside their identifiers, the
//! fingerprints of their short phrases ([`MAX_USER_PHRASES`]), so that a
//! value the user wrote is theirs whatever its length.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most value fingerprints a task keeps: 2048, at most 40 KiB of
/// stored state (10 bytes each, hex-encoded). A task that reads more falls
/// back to the strict guard.
pub const MAX_FLOW_MARKS: usize = 2048;
/// The most untrusted results a task names as sources: 255.
pub const MAX_FLOW_SOURCES: usize = 255;
/// The most phrases of the user's own messages a task keeps: 4096, at most
/// 64 KiB of stored state (8 bytes each, hex-encoded). Past it, what else
/// the user writes is remembered by its identifiers only, so the guard can
/// only ask more.
pub const MAX_USER_PHRASES: usize = 4096;

/// Where a value was seen, as bits of [`FlowMark::seen`].
pub mod seen {
    /// In the user's own message.
    pub const USER: u8 = 1;
    /// In the result of a tool that is not `untrusted`.
    pub const TRUSTED: u8 = 2;
    /// In the result of an `untrusted` tool (text a third party wrote).
    pub const UNTRUSTED: u8 = 4;
    /// In the result of a `private` tool (the user's private data).
    pub const PRIVATE: u8 = 8;
}

/// One value the task has read: its fingerprint, where it was seen, and
/// the untrusted result it first came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowMark {
    /// The value's fingerprint (64 bits of the SHA-256 of its normal form).
    pub fp: u64,
    /// Where it was seen: the bits of [`seen`].
    pub seen: u8,
    /// Index into [`FlowState::sources`] of the first untrusted result that
    /// held it; meaningful only with [`seen::UNTRUSTED`].
    pub source: u8,
}

/// The guard's memory of one task.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FlowState {
    /// The task has read a result of a `private` or `untrusted` tool: from
    /// then on every result is fingerprinted.
    pub labelled: bool,
    /// The task has read a result of an `untrusted` tool.
    pub untrusted_seen: bool,
    /// The memory reached its bound: values read since were not recorded,
    /// and the guard is `strict` for the task.
    pub overflowed: bool,
    /// The untrusted results values came from, as `tool (call id)`.
    pub sources: Vec<String>,
    /// The values read, sorted by fingerprint.
    #[serde(serialize_with = "pack", deserialize_with = "unpack")]
    pub marks: Vec<FlowMark>,
    /// Fingerprints of the phrases (runs of up to a few words) of the
    /// user's own messages, sorted: a value the user wrote (a channel's
    /// name, an event's title) is theirs even when it is too short or too
    /// common to be an identifier.
    #[serde(serialize_with = "pack_phrases", deserialize_with = "unpack_phrases")]
    pub user_phrases: Vec<u64>,
}

impl FlowState {
    /// The mark of the value with fingerprint `fp`, if the task read it.
    pub fn mark(&self, fp: u64) -> Option<&FlowMark> {
        self.marks
            .binary_search_by_key(&fp, |m| m.fp)
            .ok()
            .map(|at| &self.marks[at])
    }

    /// The source a mark names, when it was seen in an untrusted result.
    pub fn source_of(&self, mark: &FlowMark) -> Option<&str> {
        (mark.seen & seen::UNTRUSTED != 0)
            .then(|| self.sources.get(usize::from(mark.source)))
            .flatten()
            .map(String::as_str)
    }

    /// Records that each of `fps` was seen `how` (bits of [`seen`]), in the
    /// untrusted result `source` when `how` says untrusted. Past the bound
    /// nothing more is recorded and the state is marked overflowed; returns
    /// whether anything changed.
    pub fn note(&mut self, fps: impl IntoIterator<Item = u64>, how: u8, source: Option<&str>) -> bool {
        let mut changed = false;
        let source_index = match source.filter(|_| how & seen::UNTRUSTED != 0) {
            Some(name) => match self.sources.iter().position(|s| s == name) {
                Some(at) => Some(at),
                None if self.sources.len() < MAX_FLOW_SOURCES => {
                    self.sources.push(name.to_owned());
                    changed = true;
                    Some(self.sources.len() - 1)
                }
                None => return self.overflow() || changed,
            },
            None => None,
        };
        let source = source_index.and_then(|at| u8::try_from(at).ok()).unwrap_or(0);
        for fp in fps {
            match self.marks.binary_search_by_key(&fp, |m| m.fp) {
                Ok(at) => {
                    let mark = &mut self.marks[at];
                    if mark.seen & how != how {
                        if mark.seen & seen::UNTRUSTED == 0 && how & seen::UNTRUSTED != 0 {
                            mark.source = source;
                        }
                        mark.seen |= how;
                        changed = true;
                    }
                }
                Err(_) if self.marks.len() >= MAX_FLOW_MARKS => return self.overflow() || changed,
                Err(at) => {
                    self.marks.insert(at, FlowMark { fp, seen: how, source });
                    changed = true;
                }
            }
        }
        changed
    }

    /// Whether the user wrote the phrase with fingerprint `fp`.
    pub fn user_wrote(&self, fp: u64) -> bool {
        self.user_phrases.binary_search(&fp).is_ok()
    }

    /// Records fingerprints of phrases of the user's own messages, up to
    /// [`MAX_USER_PHRASES`]; returns whether anything changed.
    pub fn note_user_phrases(&mut self, fps: impl IntoIterator<Item = u64>) -> bool {
        let mut changed = false;
        for fp in fps {
            if let Err(at) = self.user_phrases.binary_search(&fp)
                && self.user_phrases.len() < MAX_USER_PHRASES
            {
                self.user_phrases.insert(at, fp);
                changed = true;
            }
        }
        changed
    }

    /// Marks the memory as full; whether that is news.
    fn overflow(&mut self) -> bool {
        !std::mem::replace(&mut self.overflowed, true)
    }
}

/// The marks as one hex string, 10 bytes each (fingerprint big-endian,
/// where seen, source): a twentieth of their size as JSON objects.
fn pack<S: Serializer>(marks: &[FlowMark], serializer: S) -> Result<S::Ok, S::Error> {
    let mut bytes = Vec::with_capacity(marks.len() * 11);
    for mark in marks {
        bytes.extend_from_slice(&mark.fp.to_be_bytes());
        bytes.extend_from_slice(&[mark.seen, mark.source]);
    }
    serializer.serialize_str(&hex::encode(bytes))
}

fn unpack<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<FlowMark>, D::Error> {
    use serde::de::Error;
    let text = String::deserialize(deserializer)?;
    let bytes = hex::decode(text).map_err(D::Error::custom)?;
    if bytes.len() % 10 != 0 {
        return Err(D::Error::custom("flow marks: not a whole number of 10-byte marks"));
    }
    let mut marks: Vec<FlowMark> = bytes
        .chunks_exact(10)
        .map(|chunk| {
            let mut fp = [0u8; 8];
            fp.copy_from_slice(&chunk[..8]);
            FlowMark {
                fp: u64::from_be_bytes(fp),
                seen: chunk[8],
                source: chunk[9],
            }
        })
        .collect();
    // The lookups binary-search: a stored list is sorted whatever wrote it.
    marks.sort_by_key(|m| m.fp);
    marks.dedup_by_key(|m| m.fp);
    Ok(marks)
}

/// The phrases' fingerprints as one hex string, 8 bytes each.
fn pack_phrases<S: Serializer>(fps: &[u64], serializer: S) -> Result<S::Ok, S::Error> {
    let bytes: Vec<u8> = fps.iter().flat_map(|fp| fp.to_be_bytes()).collect();
    serializer.serialize_str(&hex::encode(bytes))
}

fn unpack_phrases<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u64>, D::Error> {
    use serde::de::Error;
    let bytes = hex::decode(String::deserialize(deserializer)?).map_err(D::Error::custom)?;
    if bytes.len() % 8 != 0 {
        return Err(D::Error::custom(
            "user phrases: not a whole number of 8-byte fingerprints",
        ));
    }
    let mut fps: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|chunk| {
            let mut fp = [0u8; 8];
            fp.copy_from_slice(chunk);
            u64::from_be_bytes(fp)
        })
        .collect();
    fps.sort_unstable();
    fps.dedup();
    Ok(fps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_round_trip_through_their_packed_form() {
        let mut flow = FlowState::default();
        assert!(flow.note([30, 10, 20], seen::UNTRUSTED, Some("read_inbox (c1)")));
        assert!(flow.note([20, 40], seen::USER, None));
        assert!(!flow.note([20], seen::USER, None), "nothing new");
        let text = serde_json::to_string(&flow).unwrap();
        let back: FlowState = serde_json::from_str(&text).unwrap();
        assert_eq!(back, flow);
        let mark = back.mark(20).unwrap();
        assert_eq!(mark.seen, seen::UNTRUSTED | seen::USER);
        assert_eq!(back.source_of(mark), Some("read_inbox (c1)"));
        assert_eq!(back.source_of(back.mark(40).unwrap()), None);
        assert!(back.mark(50).is_none());
    }

    #[test]
    fn a_full_memory_stops_recording_and_says_so() {
        let mut flow = FlowState::default();
        flow.note(0..MAX_FLOW_MARKS as u64, seen::TRUSTED, None);
        assert!(!flow.overflowed);
        assert!(flow.note([u64::MAX], seen::TRUSTED, None));
        assert!(flow.overflowed && flow.marks.len() == MAX_FLOW_MARKS);
        assert!(!flow.note([u64::MAX - 1], seen::TRUSTED, None), "already overflowed");
    }

    #[test]
    fn user_phrases_round_trip_sorted_and_stop_at_their_bound() {
        let mut flow = FlowState::default();
        assert!(flow.note_user_phrases([9, 3, 5]));
        assert!(!flow.note_user_phrases([3]), "nothing new");
        let back: FlowState = serde_json::from_str(&serde_json::to_string(&flow).unwrap()).unwrap();
        assert_eq!(back.user_phrases, [3, 5, 9]);
        assert!(back.user_wrote(5) && !back.user_wrote(4));
        let mut full = FlowState::default();
        full.note_user_phrases(0..MAX_USER_PHRASES as u64 + 10);
        assert_eq!(full.user_phrases.len(), MAX_USER_PHRASES);
        assert!(!full.overflowed, "fewer phrases only make the guard ask more");
        assert!(serde_json::from_str::<FlowState>(r#"{"user_phrases":"abcd"}"#).is_err());
    }

    #[test]
    fn a_malformed_packed_list_is_an_error() {
        let err = serde_json::from_str::<FlowState>(r#"{"marks":"abcd"}"#).unwrap_err();
        assert!(err.to_string().contains("10-byte"), "{err}");
        assert!(serde_json::from_str::<FlowState>(r#"{"marks":"zz"}"#).is_err());
    }
}
