//! Go-style duration strings (`30s`, `1m30s`, `1.5h`, `500ms`, `250us`, `10ns`), parsed
//! into [`std::time::Duration`] and formatted back in a form the parser accepts.
//!
//! The grammar is Go's `time.ParseDuration`: a sequence of decimal numbers, each with
//! an optional fraction and a unit (`ns`, `us`/`µs`, `ms`, `s`, `m`, `h`); a bare `0`
//! is allowed. Negative durations parse in Go but mean nothing for a timeout, so they
//! are rejected here with their own message.

use std::time::Duration;

const UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parses a Go-style duration string.
///
/// ```
/// use std::time::Duration;
/// use vmcp_config::parse_duration;
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
/// assert!(parse_duration("30").is_err());
/// ```
///
/// # Errors
///
/// A message naming the problem: empty input, a missing or unknown unit, a number
/// without digits, a negative value, or a value too large (over ~584 years).
pub fn parse_duration(input: &str) -> Result<Duration, String> {
    let s = input.trim();
    let bad =
        |why: &str| format!("invalid duration {input:?}: {why} (examples: 30s, 1m30s, 500ms)");
    let s = match s.strip_prefix('-') {
        Some(rest) if rest.chars().any(|c| c != '0') => {
            return Err(bad("must not be negative"));
        }
        Some(rest) => rest,
        None => s.strip_prefix('+').unwrap_or(s),
    };
    if s.is_empty() {
        return Err(bad("empty"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let int_len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
                a.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(bad("expected a number"));
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(bad("missing unit"));
        }
        let Some(&(_, scale)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(bad(&format!("unknown unit {unit:?}")));
        };
        total = total
            .checked_add(component(int_part, frac_part, scale).ok_or_else(|| bad("too large"))?)
            .ok_or_else(|| bad("too large"))?;
        rest = after;
    }
    if total > u128::from(u64::MAX) {
        return Err(bad("too large"));
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| bad("too large"))?;
    let nanos = u32::try_from(total % 1_000_000_000).map_err(|_| bad("too large"))?;
    Ok(Duration::new(secs, nanos))
}

/// Nanoseconds of one `<int>.<frac><unit>` component; `None` on overflow.
fn component(int_part: &str, frac_part: &str, scale: u128) -> Option<u128> {
    let mut whole: u128 = 0;
    for d in int_part.bytes() {
        whole = whole.checked_mul(10)?.checked_add(u128::from(d - b'0'))?;
    }
    let mut nanos = whole.checked_mul(scale)?;
    // Digits past the 19th cannot change a nanosecond count; ignore them as Go does.
    let frac: String = frac_part.chars().take(19).collect();
    if !frac.is_empty() {
        let mut value: u128 = 0;
        for d in frac.bytes() {
            value = value * 10 + u128::from(d - b'0');
        }
        let denom = 10u128.pow(u32::try_from(frac.len()).ok()?);
        nanos = nanos.checked_add(value * scale / denom)?;
    }
    Some(nanos)
}

/// Formats a duration as a Go-style string that [`parse_duration`] reads back exactly.
///
/// ```
/// use std::time::Duration;
/// use vmcp_config::format_duration;
/// assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
/// assert_eq!(format_duration(Duration::from_millis(500)), "500ms");
/// assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
/// ```
pub fn format_duration(d: Duration) -> String {
    let total = d.as_nanos();
    if total == 0 {
        return "0s".to_owned();
    }
    if total < 1_000_000_000 {
        return match total {
            n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
            n if n % 1_000 == 0 => format!("{}us", n / 1_000),
            n => format!("{n}ns"),
        };
    }
    let hours = total / 3_600_000_000_000;
    let minutes = (total / 60_000_000_000) % 60;
    let secs = (total / 1_000_000_000) % 60;
    let sub = total % 1_000_000_000;
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    if secs > 0 || sub > 0 {
        out.push_str(&secs.to_string());
        if sub > 0 {
            let frac = format!("{sub:09}");
            out.push('.');
            out.push_str(frac.trim_end_matches('0'));
        }
        out.push('s');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Duration {
        parse_duration(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_go_examples() {
        assert_eq!(ok("30s"), Duration::from_secs(30));
        assert_eq!(ok("1m30s"), Duration::from_secs(90));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok("500ms"), Duration::from_millis(500));
        assert_eq!(ok("250us"), Duration::from_micros(250));
        assert_eq!(ok("250µs"), Duration::from_micros(250));
        assert_eq!(ok("250μs"), Duration::from_micros(250));
        assert_eq!(ok("10ns"), Duration::from_nanos(10));
        assert_eq!(ok("2h45m"), Duration::from_secs(2 * 3600 + 45 * 60));
        assert_eq!(ok(".5s"), Duration::from_millis(500));
        assert_eq!(ok("1.s"), Duration::from_secs(1));
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("-0"), Duration::ZERO);
        assert_eq!(ok("+5m"), Duration::from_secs(300));
        assert_eq!(ok("1.000000001s"), Duration::new(1, 1));
    }

    #[test]
    fn rejects_bad_input_with_reason() {
        for (input, why) in [
            ("", "empty"),
            ("30", "missing unit"),
            ("5x", "unknown unit \"x\""),
            ("1d", "unknown unit \"d\""),
            (".s", "expected a number"),
            ("s", "expected a number"),
            ("-5s", "negative"),
            ("1m 30s", "unknown unit \"m \""),
            ("99999999999999h", "too large"),
        ] {
            let err = parse_duration(input).expect_err(input);
            assert!(err.contains(why), "{input}: {err}");
        }
    }

    #[test]
    fn format_round_trips() {
        for d in [
            Duration::ZERO,
            Duration::from_nanos(7),
            Duration::from_micros(250),
            Duration::from_millis(500),
            Duration::from_millis(1500),
            Duration::from_secs(30),
            Duration::from_secs(90),
            Duration::from_secs(3600),
            Duration::from_secs(5400),
            Duration::new(3661, 1),
        ] {
            let s = format_duration(d);
            assert_eq!(ok(&s), d, "{s}");
        }
        assert_eq!(format_duration(Duration::from_secs(3600)), "1h");
        assert_eq!(format_duration(Duration::from_secs(1800)), "30m");
    }
}
