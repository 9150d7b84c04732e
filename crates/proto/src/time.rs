//! RFC 3339 timestamps in UTC, in the two precisions the gateway writes.

use std::time::SystemTime;

use chrono::{DateTime, SecondsFormat, Utc};

/// `t` as `2026-12-01T11:16:10.123456789Z` (audit events).
pub fn rfc3339_nanos(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// `t` as `2026-12-01T11:16:10Z` (health status, workflow start times).
pub fn rfc3339(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_instants_format_as_rfc3339() {
        let at = |s: u64, n: u32| SystemTime::UNIX_EPOCH + Duration::new(s, n);
        assert_eq!(rfc3339_nanos(at(0, 0)), "1970-01-01T00:00:00.000000000Z");
        // 2000-02-29 (leap day of a century leap year) 12:34:56.
        assert_eq!(
            rfc3339_nanos(at(951_827_696, 7)),
            "2000-02-29T12:34:56.000000007Z"
        );
        // 2026-12-01T11:16:10Z.
        assert_eq!(
            rfc3339_nanos(at(1_796_123_770, 123_456_789)),
            "2026-12-01T11:16:10.123456789Z"
        );
        assert_eq!(rfc3339(at(1_796_123_770, 5)), "2026-12-01T11:16:10Z");
    }

    /// Before 1970 `SystemTime` still converts (the hand-written version clamped it to 1970).
    #[test]
    fn instants_before_the_epoch_format_too() {
        let t = SystemTime::UNIX_EPOCH - Duration::from_secs(86_400);
        assert_eq!(rfc3339(t), "1969-12-31T00:00:00Z");
    }
}
