//! The rolling window shared by [`RetryBudget`](crate::RetryBudget) and
//! [`RepairTokenBudget`](crate::RepairTokenBudget).
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

    /// Adds `amount` to the slot of `epoch` if that slot is still in the
    /// window; returns whether it was.
    pub(crate) fn add_at(&mut self, now: Instant, epoch: u64, amount: i64) -> bool {
        let head = self.advance(now);
        if epoch > head || head - epoch >= SLOTS {
            return false;
        }
        let slot = &mut self.slots[Self::index(epoch)];
        *slot = slot.saturating_add(amount);
        true
    }

    /// How long until at least `need` of the positive amounts now in the
    /// window have expired, oldest first; `None` if they never add up to it.
    pub(crate) fn time_until_freed(&mut self, now: Instant, need: i64) -> Option<Duration> {
        let head = self.advance(now);
        let oldest = head.saturating_sub(SLOTS - 1);
        let mut freed = 0i64;
        for epoch in oldest..=head {
            freed = freed.saturating_add(self.slots[Self::index(epoch)].max(0));
            if freed >= need {
                let expires_nanos = u128::from(epoch + SLOTS).saturating_mul(self.slot_nanos);
                let since = now.saturating_duration_since(self.origin).as_nanos();
                let wait = expires_nanos.saturating_sub(since);
                return Some(Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX)));
            }
        }
        None
    }

    /// True when nothing is left in the window: the owner may forget it.
    pub(crate) fn is_idle(&mut self, now: Instant) -> bool {
        self.advance(now);
        self.slots.iter().all(|v| *v == 0)
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
        assert!(w.is_idle(t0 + Duration::from_secs(86_400 * 365)));
    }

    #[test]
    fn add_at_refuses_expired_and_future_slots() {
        let t0 = Instant::now();
        let mut w = SlotWindow::new(Duration::from_secs(1), t0);
        let e = w.add(t0, 5);
        assert!(!w.add_at(t0, e + 1, 1));
        assert!(w.add_at(t0 + Duration::from_millis(950), e, -2));
        assert_eq!(w.sum(t0 + Duration::from_millis(950)), 3);
        assert!(!w.add_at(t0 + Duration::from_secs(1), e, -3));
    }

    #[test]
    fn time_until_freed_names_the_expiry_of_the_slot_that_frees_enough() {
        let t0 = Instant::now();
        let mut w = SlotWindow::new(Duration::from_secs(10), t0);
        w.add(t0, 3); // slot 0, expires at 10 s
        w.add(t0 + Duration::from_secs(4), 5); // slot 4, expires at 14 s
        let now = t0 + Duration::from_secs(5);
        assert_eq!(w.time_until_freed(now, 3), Some(Duration::from_secs(5)));
        assert_eq!(w.time_until_freed(now, 4), Some(Duration::from_secs(9)));
        assert_eq!(w.time_until_freed(now, 9), None);
    }
}
