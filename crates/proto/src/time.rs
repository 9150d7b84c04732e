//! RFC 3339 timestamps in UTC with nanoseconds, without a date library.

use std::time::SystemTime;

/// `t` as `2026-12-01T11:16:10.123456789Z`.
pub fn rfc3339_nanos(t: SystemTime) -> String {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_nanos()
    )
}

/// `t` as `2026-12-01T11:16:10Z` (whole seconds).
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
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
}
