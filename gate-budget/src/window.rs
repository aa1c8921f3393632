//! The rolling window of [`RetryBudget`](crate::RetryBudget).
//!
//! tower and Finagle keep ten slots over `ttl` and forget a slot as a whole,
//! which makes expiry cheap (no per-event timestamps) and predictable: an
//! amount counts for at least `ttl − ttl/10` and less than `ttl`. Unlike
//! tower's, slots here are aligned to the window's creation instant, so a
//! slot's lifetime does not drift with the times at which it was touched, and
//! a long idle gap clears at most ten slots instead of looping once per
//! elapsed slot.
//!
//! The window itself is not synchronised: each owner wraps it in a mutex so
//! that "read the sum, then add" is one atomic step.

use std::time::Duration;

use tokio::time::Instant;

/// The number of slots, as in tower and Finagle.
pub(crate) const SLOTS: u64 = 10;

#[derive(Clone, Debug)]
pub(crate) struct SlotWindow {
    origin: Instant,
    slot_nanos: u128,
    slots: [i64; SLOTS as usize],
    /// The absolute index of the newest slot; `slots[head % SLOTS]` is current.
    head: u64,
}

impl SlotWindow {
    /// `ttl` is validated by the owners (at least one second), so a slot is
    /// never zero-length.
    pub(crate) fn new(ttl: Duration, now: Instant) -> Self {
        let slot_nanos = (ttl.as_nanos() / u128::from(SLOTS)).max(1);
        SlotWindow {
            origin: now,
            slot_nanos,
            slots: [0; SLOTS as usize],
            head: 0,
        }
    }

    pub(crate) fn epoch_of(&self, now: Instant) -> u64 {
        let since = now.saturating_duration_since(self.origin).as_nanos() / self.slot_nanos;
        u64::try_from(since).unwrap_or(u64::MAX)
    }

    /// Moves the head to `now`, zeroing every slot that fell out of the window.
    pub(crate) fn advance(&mut self, now: Instant) -> u64 {
        let epoch = self.epoch_of(now);
        if epoch > self.head {
            let gap = epoch - self.head;
            if gap >= SLOTS {
                self.slots = [0; SLOTS as usize];
            } else {
                for k in 1..=gap {
                    self.slots[Self::index(self.head + k)] = 0;
                }
            }
            self.head = epoch;
        }
        self.head
    }

    fn index(epoch: u64) -> usize {
        // `epoch % SLOTS` is below 10, so the cast cannot truncate.
        (epoch % SLOTS) as usize
    }

    /// The sum of the live slots at `now`.
    pub(crate) fn sum(&mut self, now: Instant) -> i64 {
        self.advance(now);
        self.slots.iter().fold(0i64, |acc, v| acc.saturating_add(*v))
    }

    /// Adds `amount` (negative to take) to the current slot; returns its epoch.
    pub(crate) fn add(&mut self, now: Instant, amount: i64) -> u64 {
        let head = self.advance(now);
        let slot = &mut self.slots[Self::index(head)];
        *slot = slot.saturating_add(amount);
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amount_counts_for_nine_full_slots_and_is_gone_after_ten() {
        let t0 = Instant::now();
        let mut w = SlotWindow::new(Duration::from_secs(10), t0);
        w.add(t0 + Duration::from_millis(500), 7);
        assert_eq!(w.sum(t0 + Duration::from_millis(9_999)), 7);
        assert_eq!(w.sum(t0 + Duration::from_secs(10)), 0);
    }

    #[test]
    fn long_idle_gap_clears_everything() {
        let t0 = Instant::now();
        let mut w = SlotWindow::new(Duration::from_secs(1), t0);
        w.add(t0, 5);
        assert_eq!(w.sum(t0 + Duration::from_secs(86_400 * 365)), 0);
    }
}
