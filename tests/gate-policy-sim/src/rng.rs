//! The simulation's only source of chance. Every fault and every model
//! reaction is drawn from a stream keyed by seed, mix, task and purpose, so a
//! run is reproducible on any platform and each policy replays the same fault
//! schedule for a task.

use super::params::Mix;

/// SplitMix64: a tiny, well-mixed, seedable generator, so that the
/// simulation needs no `rand` dependency and gives the same numbers on every
/// platform.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// A generator for one stream (`salt`) of one task of one mix: streams
    /// are independent of each other and of the order tasks are run in.
    pub fn stream(seed: u64, mix: Mix, task: u64, salt: u64) -> Self {
        let mut g = SplitMix64::new(seed ^ 0x6a09_e667_f3bc_c908);
        let a = g.next_u64() ^ (mix as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut g = SplitMix64::new(a);
        let b = g.next_u64() ^ task.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let mut g = SplitMix64::new(b);
        SplitMix64::new(g.next_u64() ^ salt.wrapping_mul(0x94d0_49bb_1331_11eb))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p` (clamped to `[0, 1]`).
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p.clamp(0.0, 1.0)
    }
}

pub(super) const STREAM_FAULTS: u64 = 1;
pub(super) const STREAM_MODEL: u64 = 2;
