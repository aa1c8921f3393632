//! The id of a decision record, minted when the decision is made.
//!
//! Every decision, a successful read's included, gets one, so it is 16
//! bytes held inline rather than a string: minting it allocates nothing and
//! the memory store compares and hashes two numbers. Its written form (text,
//! JSON, the SQL stores' column) is the 32 lowercase hex digits it has
//! always had, rendered when the record is written.

use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;

use rand::SeedableRng;
use rand::rngs::SmallRng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::time::Timestamp;

/// A decision record's id: the milliseconds since the Unix epoch of the
/// decision (48 bits), then 80 random bits. Written as 32 lowercase hex
/// digits (`Display`, JSON, SQL), whose first 12 are the time, so that ids
/// of a process sort by time and a store's unique index on them grows at
/// its end instead of taking random inserts (which slow a large SQLite log
/// down several times over). Writing the same id twice stores it once.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DecisionId(u128);

impl DecisionId {
    /// A fresh id for a decision made now (the system clock).
    pub fn now() -> Self {
        DecisionId::at(Timestamp::now())
    }

    /// A fresh id for a decision made at `at`, for a caller that has just
    /// read the clock (the decision record's own time) and need not read
    /// it again. A time before the epoch counts as the epoch.
    pub fn at(at: Timestamp) -> Self {
        let millis = u64::try_from(at.as_millis()).unwrap_or(0);
        // Two draws of 64 bits, of which 80 are kept: `fill` on 10 bytes
        // would go through a byte loop and a copy for each call.
        let (high, low) = ID_BITS.with_borrow_mut(|rng| (rand::RngCore::next_u64(rng), rand::RngCore::next_u64(rng)));
        DecisionId((u128::from(millis & 0xFFFF_FFFF_FFFF) << 80) | (u128::from(high & 0xFFFF) << 64) | u128::from(low))
    }

    /// The id whose 128 bits are `bits` (an id kept elsewhere as a number,
    /// a test's fixed id).
    pub const fn from_u128(bits: u128) -> Self {
        DecisionId(bits)
    }

    /// The id's 128 bits.
    pub const fn as_u128(self) -> u128 {
        self.0
    }
}

thread_local! {
    /// The random bits of decision ids. An id needs uniqueness, not
    /// secrecy: a small generator seeded once per thread from the OS makes
    /// them in a few instructions, where the thread's CSPRNG (ChaCha, with
    /// its block refills) cost more than the rest of the id, on every call.
    static ID_BITS: RefCell<SmallRng> = RefCell::new(SmallRng::from_rng(&mut rand::rng()));
}

impl fmt::Display for DecisionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(hex::Buffer::<16>::new().format(&self.0.to_be_bytes()))
    }
}

impl fmt::Debug for DecisionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DecisionId({self})")
    }
}

/// Why a text is not a [`DecisionId`]: an id is exactly 32 hex digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDecisionIdError {
    text: String,
}

impl fmt::Display for ParseDecisionIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a decision id is 32 hex digits, not {:?}", self.text)
    }
}

impl std::error::Error for ParseDecisionIdError {}

impl FromStr for DecisionId {
    type Err = ParseDecisionIdError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        // `from_str_radix` alone would take a sign and fewer digits.
        let refused = || ParseDecisionIdError { text: text.to_owned() };
        if text.len() != 32 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(refused());
        }
        u128::from_str_radix(text, 16).map(DecisionId).map_err(|_| refused())
    }
}

impl Serialize for DecisionId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DecisionId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_written_as_32_lowercase_hex_digits_and_read_back() {
        let id = DecisionId::from_u128(0x019a_d735_8400_00ff_0123_4567_89ab_cdef);
        assert_eq!(id.to_string(), "019ad735840000ff0123456789abcdef");
        assert_eq!("019ad735840000ff0123456789abcdef".parse(), Ok(id));
        assert_eq!("019AD735840000FF0123456789ABCDEF".parse(), Ok(id));
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, r#""019ad735840000ff0123456789abcdef""#);
        assert_eq!(serde_json::from_str::<DecisionId>(&json).unwrap(), id);
        assert_eq!(format!("{id:?}"), "DecisionId(019ad735840000ff0123456789abcdef)");
    }

    #[test]
    fn a_text_that_is_not_32_hex_digits_is_refused() {
        for text in [
            "",
            "decision-1",
            "019ad735840000ff0123456789abcde",
            "019ad735840000ff0123456789abcdef0",
            "+19ad735840000ff0123456789abcdef",
            "019ad735840000ff0123456789abcdeg",
        ] {
            let refused = text.parse::<DecisionId>().unwrap_err();
            assert!(refused.to_string().contains("32 hex digits"), "{text}: {refused}");
        }
        assert!(serde_json::from_str::<DecisionId>(r#""decision-1""#).is_err());
    }
}
