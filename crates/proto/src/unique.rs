//! Ids that must be unique, not secret (audit event ids, workflow run ids): a per-thread SplitMix64
//! generator seeded once from the OS, so minting one costs no system call (a system call per id
//! showed in the request profile). Never for anything an attacker must not guess: session ids and
//! sealing keys take the OS generator directly.

use std::cell::Cell;
use std::time::SystemTime;

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let mut seed = [0u8; 8];
    if getrandom::fill(&mut seed).is_err() {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        return nanos as u64 ^ u64::from(std::process::id());
    }
    u64::from_le_bytes(seed)
}

fn next() -> u64 {
    STATE.with(|s| {
        let x = s.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        s.set(x);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

/// 128 bits, unique across threads and processes with overwhelming probability.
#[must_use]
pub fn unique_bits() -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&next().to_le_bytes());
    b[8..].copy_from_slice(&next().to_le_bytes());
    b
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::unique_bits;

    #[test]
    fn ids_differ_within_and_across_threads() {
        let here: Vec<_> = (0..1000).map(|_| unique_bits()).collect();
        let there = std::thread::spawn(|| (0..1000).map(|_| unique_bits()).collect::<Vec<_>>())
            .join()
            .unwrap();
        let all: HashSet<_> = here.iter().chain(&there).collect();
        assert_eq!(all.len(), 2000);
    }
}
