//! The one exponential backoff behind every wait that grows with failures: a database
//! operation tried again (`retry`), a worker reconnecting, an HTTP request asked again, a
//! host's penalty after a 429 or 503, a site's next try after a transient failure
//! (`complete`, from `--retry-delay`). Each keeps its own numbers, as named consts where it is
//! used; the formula, and the bound on it, are here once.
//!
//! The bound is [`MAX_DELAY`], the cap on every delay that an answer can stretch: however
//! many failures, and whatever cap or jitter a caller gives, no delay computed here is
//! longer, and none overflows.

use std::time::Duration;

use rand::Rng;

/// The longest any delay computed from a server's answer may be: a `Retry-After` (in seconds or
/// as an HTTP date) and the retry backoff are capped at this, with saturating arithmetic, so no
/// answer can push a time past what the database stores. Thirty days: past that, a site is
/// simply checked again by the next round.
pub const MAX_DELAY: Duration = Duration::from_secs(30 * 24 * 3600);

/// A delay of `base` after the first failure, doubling after each one after, up to `cap`;
/// then, if asked, scaled by a random factor, so that clients failing together do not come
/// back together. Never more than [`MAX_DELAY`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    /// At most [`MAX_DELAY`]; bounds the delay before the jitter.
    cap: Duration,
    /// The factor's range, in percent (`low..high`); `None`: no jitter.
    jitter: Option<(u32, u32)>,
}

impl Backoff {
    /// `base` doubling to `cap` (lowered to [`MAX_DELAY`] if above), without jitter. Checked
    /// when the const is built: `base` must be positive and at most `cap`.
    pub const fn new(base: Duration, cap: Duration) -> Backoff {
        assert!(!base.is_zero(), "a backoff starts above zero");
        assert!(
            base.as_nanos() <= cap.as_nanos(),
            "a backoff's base is at most its cap"
        );
        let cap = if cap.as_nanos() > MAX_DELAY.as_nanos() {
            MAX_DELAY
        } else {
            cap
        };
        let base = if base.as_nanos() > cap.as_nanos() {
            cap
        } else {
            base
        };
        Backoff {
            base,
            cap,
            jitter: None,
        }
    }

    /// Scales each delay by a factor drawn from `low..high` percent, after the cap: with
    /// `50..100` a delay is between half and all of the capped one ("equal jitter"); with
    /// `50..150` it may pass the cap by half (still never [`MAX_DELAY`]).
    pub const fn with_jitter(self, low: u32, high: u32) -> Backoff {
        assert!(low < high, "a jitter range is not empty");
        Backoff {
            jitter: Some((low, high)),
            ..self
        }
    }

    /// The wait after `failures` failures in a row (the first failure is 1; 0 counts as 1).
    pub fn delay(&self, failures: u32) -> Duration {
        let full = self.unjittered(failures);
        match self.jitter {
            None => full,
            Some((low, high)) => {
                let factor = rand::rng().random_range(percent(low)..percent(high));
                full.mul_f64(factor).min(MAX_DELAY)
            }
        }
    }

    /// The wait that follows `previous` (zero: none yet): doubled, at least the base, at most
    /// the cap; no jitter. For a wait kept as state, which also shrinks on success (a host's
    /// penalty).
    pub fn after(&self, previous: Duration) -> Duration {
        previous.saturating_mul(2).clamp(self.base, self.cap)
    }

    /// `base · 2^(failures − 1)`, at most the cap, saturating rather than overflowing.
    fn unjittered(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1);
        let factor = 2u32.saturating_pow(doublings);
        self.base.saturating_mul(factor).min(self.cap)
    }
}

fn percent(p: u32) -> f64 {
    f64::from(p) / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_delay_doubles_from_the_base_up_to_the_cap() {
        let backoff = Backoff::new(100 * MS, 1000 * MS);
        let seen: Vec<u128> = (1..=6).map(|n| backoff.delay(n).as_millis()).collect();
        assert_eq!(seen, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(
            backoff.delay(0),
            100 * MS,
            "no failure yet waits like the first"
        );
    }

    #[test]
    fn each_wait_after_the_last_is_the_same_sequence() {
        let backoff = Backoff::new(500 * MS, Duration::from_secs(30));
        let mut wait = Duration::ZERO;
        for n in 1..=10 {
            wait = backoff.after(wait);
            assert_eq!(wait, backoff.delay(n), "failure {n}");
        }
        assert_eq!(backoff.after(Duration::MAX), Duration::from_secs(30));
    }

    #[test]
    fn huge_failure_counts_neither_overflow_nor_pass_the_cap() {
        let backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(30));
        for n in [31, 32, 64, 1_000, u32::MAX] {
            assert_eq!(backoff.delay(n), Duration::from_secs(30), "failure {n}");
        }
        let jittered = backoff.with_jitter(50, 150);
        assert!(jittered.delay(u32::MAX) < Duration::from_secs(45));
    }

    #[test]
    fn no_cap_or_jitter_reaches_past_the_maximum_delay() {
        let backoff = Backoff::new(Duration::from_secs(3600), Duration::MAX);
        assert_eq!(backoff.delay(u32::MAX), MAX_DELAY);
        assert_eq!(backoff.after(Duration::MAX), MAX_DELAY);
        let jittered = backoff.with_jitter(100, 1000);
        for _ in 0..100 {
            assert!(jittered.delay(u32::MAX) <= MAX_DELAY);
        }
        let huge_base = Backoff::new(Duration::MAX, Duration::MAX);
        assert_eq!(huge_base.delay(1), MAX_DELAY);
    }

    #[test]
    fn jitter_stays_within_its_range() {
        let backoff =
            Backoff::new(Duration::from_secs(1), Duration::from_secs(8)).with_jitter(50, 100);
        for n in 1..=5 {
            let full = Duration::from_secs(1 << (n - 1).min(3));
            for _ in 0..200 {
                let wait = backoff.delay(n);
                assert!(wait >= full / 2 && wait < full, "failure {n}: {wait:?}");
            }
        }
        let wide = Backoff::new(10 * MS, 1000 * MS).with_jitter(50, 150);
        let waits: Vec<Duration> = (0..500).map(|_| wide.delay(8)).collect();
        assert!(waits.iter().all(|w| *w >= 500 * MS && *w < 1500 * MS));
        assert!(waits.iter().any(|w| *w > 1000 * MS), "it may pass the cap");
        assert!(waits.iter().any(|w| *w < 1000 * MS));
    }
}
