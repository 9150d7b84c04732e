//! Which states were already used, so each opens once on this replica. Entries are kept until
//! their state can no longer open (its expiry plus the grace), so forgetting one early would let a
//! replay through; the memory is therefore bounded by caller, not by evicting: a caller who floods
//! the gateway with questions fills only their own share and is refused, while everyone else's
//! answers still open.

use std::collections::HashMap;

/// Identifies a caller (a hash of issuer and subject): what a share is counted by.
pub(super) type Caller = u64;

/// Most remembered uses of one caller, whatever the total.
const PER_CALLER: usize = 10_000;
/// Total above which a caller holding more than an equal share of it is refused. Callers below
/// their share still get in, so the total stays under twice this.
const TOTAL: usize = 1_000_000;

/// The used states' nonces with the second until which each is remembered.
pub(super) struct Used<N> {
    until: HashMap<N, (u64, Caller)>,
    per_caller: HashMap<Caller, usize>,
    /// Size at which expired entries are next swept (sweeping on every insert would cost a
    /// flood O(n) each).
    sweep_at: usize,
    /// The second of the last sweep: a refusal sweeps first (its entries may have expired), at
    /// most once a second.
    swept: u64,
}

/// Why a use could not be recorded.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    AlreadyUsed,
    CallerOverShare,
}

impl<N: std::hash::Hash + Eq + Copy> Used<N> {
    pub(super) fn new() -> Self {
        Self {
            until: HashMap::new(),
            per_caller: HashMap::new(),
            sweep_at: 1024,
            swept: 0,
        }
    }

    /// Records `nonce` as used by `caller` until `until` (seconds); `now` sweeps what expired.
    pub(super) fn record(
        &mut self,
        nonce: N,
        caller: Caller,
        until: u64,
        now: u64,
    ) -> Result<(), Refused> {
        if self.until.contains_key(&nonce) {
            return Err(Refused::AlreadyUsed);
        }
        if self.until.len() >= self.sweep_at || (self.over_share(caller) && now > self.swept) {
            self.sweep(now);
        }
        if self.over_share(caller) {
            return Err(Refused::CallerOverShare);
        }
        self.until.insert(nonce, (until, caller));
        *self.per_caller.entry(caller).or_default() += 1;
        Ok(())
    }

    fn over_share(&self, caller: Caller) -> bool {
        let held = self.per_caller.get(&caller).copied().unwrap_or(0);
        let share = TOTAL / self.per_caller.len().max(1);
        held >= PER_CALLER || (self.until.len() >= TOTAL && held >= share)
    }

    fn sweep(&mut self, now: u64) {
        let per_caller = &mut self.per_caller;
        self.until.retain(|_, (until, caller)| {
            let keep = *until >= now;
            if !keep && let Some(n) = per_caller.get_mut(caller) {
                *n -= 1;
            }
            keep
        });
        per_caller.retain(|_, n| *n > 0);
        self.sweep_at = (self.until.len() * 2).max(1024);
        self.swept = now;
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.until.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flooding_caller_fills_only_its_own_share_and_no_replay_passes() {
        let mut used = Used::new();
        let (flooder, honest) = (1, 2);
        let mut refused = 0;
        for n in 0..(PER_CALLER as u64 + 500) {
            if used.record(n, flooder, 100, 0).is_err() {
                refused += 1;
            }
        }
        assert_eq!(refused, 500, "the flooder is refused past its share");
        // The honest caller's answers still open, once each.
        let first = u64::MAX;
        assert_eq!(used.record(first, honest, 100, 0), Ok(()));
        assert_eq!(
            used.record(first, honest, 100, 0),
            Err(Refused::AlreadyUsed)
        );
        // Replays of the flooder's recorded states are refused, never forgotten early.
        assert_eq!(used.record(0, flooder, 100, 50), Err(Refused::AlreadyUsed));
        // Once they expire they are swept and the flooder's share frees.
        assert_eq!(used.record(u64::MAX - 1, flooder, 300, 101), Ok(()));
        assert!(
            used.len() < 10,
            "expired entries were swept: {}",
            used.len()
        );
    }

    #[test]
    fn many_callers_at_the_total_leave_room_for_a_new_caller() {
        let mut used = Used::new();
        let callers = (TOTAL / PER_CALLER) as u64;
        for c in 0..callers {
            for i in 0..PER_CALLER as u64 {
                used.record(c << 32 | i, c, 100, 0).unwrap();
            }
        }
        assert_eq!(used.len(), TOTAL);
        assert_eq!(
            used.record(u64::MAX, 0, 100, 0),
            Err(Refused::CallerOverShare)
        );
        assert_eq!(used.record(u64::MAX, callers + 1, 100, 0), Ok(()));
    }
}
