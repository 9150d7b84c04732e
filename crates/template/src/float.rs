//! Go's `strconv.FormatFloat` for the `e`, `E`, `f`, `g` and `G` formats.
//!
//! Digits come from Rust's formatter, which like Go's is exact: `{:e}` gives the shortest digits
//! that round-trip, `{:.N}`/`{:.Ne}` round the exact binary value half-to-even. The layout is
//! Go's `formatDigits`. The rule that decides `%v` (read in Go's `src/fmt/print.go`, `format.go`
//! and `src/strconv/ftoa.go`): `%v` of a float64 is `FormatFloat(f, 'g', -1, 64)`, and with the
//! shortest precision `'g'` switches to exponent form when the decimal exponent is below -4 or
//! at least **6** ("if precision was the shortest possible, use precision 6 for this
//! decision"), so `1000000.0` prints `1e+06` and `123456.0` prints `123456`. The threshold of
//! 21 belongs to `encoding/json` (see `json`), not to `fmt`.

/// Digits after which every float64's decimal expansion is exact (more only adds zeros).
const EXACT: usize = 1100;

/// Decimal digits of |f|: the value is `0.d[0]d[1]… × 10^dp`. No digits means zero.
struct Digits {
    d: Vec<u8>,
    dp: i64,
}

/// Parses Rust's `{:e}` output (`1.2345e-7`), dropping trailing zeros.
fn digits_from_exp(s: &str) -> Digits {
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let mut d: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    while d.last() == Some(&b'0') {
        d.pop();
    }
    if d.is_empty() {
        return Digits { d, dp: 0 };
    }
    Digits { d, dp: exp + 1 }
}

/// `strconv.FormatFloat(f, fmt, prec, 64)`; `prec < 0` means the shortest representation.
pub(crate) fn format_float(f: f64, fmt: u8, prec: i64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let neg = f.is_sign_negative();
    let a = f.abs();
    let shortest = prec < 0;
    // Go caps nothing here, but fmt already limits precision to about a million digits. Rust's
    // formatter panics past 65,535, so it gets at most EXACT digits (every float64 is exact
    // within them: at most 767 significant and 1,074 fractional), and the zeros that follow
    // are added here. Found by fuzzing: `printf "%.884444f"` panicked.
    let p = usize::try_from(prec).unwrap_or(0);
    let (p, zeros) = (p.min(EXACT), p.saturating_sub(EXACT));
    match fmt {
        b'e' | b'E' => {
            let digs = if shortest {
                digits_from_exp(&format!("{a:e}"))
            } else {
                digits_from_exp(&format!("{a:.p$e}"))
            };
            let prec = if shortest {
                digs.d.len().saturating_sub(1) as i64
            } else {
                prec
            };
            fmt_e(neg, &digs, prec, fmt)
        }
        b'f' => {
            if shortest {
                let digs = digits_from_exp(&format!("{a:e}"));
                let prec = (digs.d.len() as i64 - digs.dp).max(0);
                fmt_f(neg, &digs, prec)
            } else {
                let mut body = format!("{a:.p$}");
                body.extend(std::iter::repeat_n('0', zeros));
                if neg { format!("-{body}") } else { body }
            }
        }
        _ => {
            let (digs, prec) = if shortest {
                let digs = digits_from_exp(&format!("{a:e}"));
                let n = digs.d.len() as i64;
                (digs, n)
            } else {
                let sig = p.max(1);
                (digits_from_exp(&format!("{a:.*e}", sig - 1)), sig as i64)
            };
            fmt_g(neg, &digs, prec, shortest, fmt)
        }
    }
}

/// Go's `formatDigits` for `g`/`G`: exponent form when the exponent is < -4 or >= the
/// precision (6 when shortest).
fn fmt_g(neg: bool, digs: &Digits, prec: i64, shortest: bool, fmt: u8) -> String {
    let nd = digs.d.len() as i64;
    let mut eprec = prec;
    if eprec > nd && nd >= digs.dp {
        eprec = nd;
    }
    if shortest {
        eprec = 6;
    }
    let exp = digs.dp - 1;
    let efmt = if fmt == b'G' { b'E' } else { b'e' };
    if exp < -4 || exp >= eprec {
        let prec = prec.min(nd);
        return fmt_e(neg, digs, prec - 1, efmt);
    }
    let prec = if prec > digs.dp { nd } else { prec };
    fmt_f(neg, digs, (prec - digs.dp).max(0))
}

/// `-d.ddddde±dd`
fn fmt_e(neg: bool, digs: &Digits, prec: i64, fmt: u8) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push(digs.d.first().map_or('0', |&c| c as char));
    if prec > 0 {
        out.push('.');
        let prec = usize::try_from(prec).unwrap_or(0);
        let m = digs.d.len().min(prec + 1);
        let mut i = 1;
        if i < m {
            out.extend(digs.d[i..m].iter().map(|&c| c as char));
            i = m;
        }
        while i <= prec {
            out.push('0');
            i += 1;
        }
    }
    out.push(fmt as char);
    let mut exp = if digs.d.is_empty() { 0 } else { digs.dp - 1 };
    if exp < 0 {
        out.push('-');
        exp = -exp;
    } else {
        out.push('+');
    }
    if exp < 10 {
        out.push('0');
    }
    out.push_str(&exp.to_string());
    out
}

/// `-ddddd.ddd`
fn fmt_f(neg: bool, digs: &Digits, prec: i64) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let nd = digs.d.len() as i64;
    if digs.dp > 0 {
        let m = nd.min(digs.dp);
        out.extend(digs.d[..m as usize].iter().map(|&c| c as char));
        for _ in m..digs.dp {
            out.push('0');
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 1..=prec {
            let j = digs.dp + i - 1;
            let ch = if (0..nd).contains(&j) {
                digs.d[j as usize] as char
            } else {
                '0'
            };
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::format_float;

    fn v(f: f64) -> String {
        format_float(f, b'g', -1)
    }

    #[test]
    fn shortest_g_switches_to_exponent_at_1e6_and_below_1e_minus_4() {
        assert_eq!(v(456.0), "456");
        assert_eq!(v(123456.0), "123456");
        assert_eq!(v(999999.0), "999999");
        assert_eq!(v(1000000.0), "1e+06");
        assert_eq!(v(1234567.0), "1.234567e+06");
        assert_eq!(v(1e20), "1e+20");
        assert_eq!(v(1e21), "1e+21");
        assert_eq!(v(1e100), "1e+100");
        assert_eq!(v(0.0001), "0.0001");
        assert_eq!(v(0.00001), "1e-05");
        assert_eq!(v(15.1), "15.1");
        assert_eq!(v(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(v(0.0), "0");
        assert_eq!(v(-0.0), "-0");
        assert_eq!(v(-2.5), "-2.5");
        assert_eq!(v(5e-324), "5e-324");
    }

    #[test]
    fn fixed_precision_formats() {
        assert_eq!(format_float(1.23456, b'f', 2), "1.23");
        assert_eq!(format_float(0.125, b'f', 2), "0.12");
        assert_eq!(format_float(2.5, b'f', 0), "2");
        assert_eq!(format_float(-1.0, b'f', 3), "-1.000");
        assert_eq!(format_float(1234.5678, b'e', 6), "1.234568e+03");
        assert_eq!(format_float(0.0, b'e', 6), "0.000000e+00");
        assert_eq!(format_float(1e-10, b'E', 2), "1.00E-10");
        assert_eq!(format_float(1e100, b'e', 1), "1.0e+100");
        assert_eq!(format_float(100.0, b'g', 3), "100");
        assert_eq!(format_float(1000.0, b'g', 3), "1e+03");
        assert_eq!(format_float(1.0, b'g', 3), "1");
        assert_eq!(format_float(1.23456, b'g', 3), "1.23");
        assert_eq!(format_float(0.0, b'g', 3), "0");
        assert_eq!(format_float(123456789.0, b'G', 4), "1.235E+08");
        assert_eq!(format_float(1e20, b'f', -1), "100000000000000000000");
        assert_eq!(format_float(1e-7, b'e', -1), "1e-07");
        assert_eq!(format_float(1.5, b'e', -1), "1.5e+00");
    }

    /// Found by fuzzing (fuzz/fuzz_targets/template.rs): a precision past 65,535 made Rust's
    /// formatter panic. Digits past a float64's exact expansion are zeros, as in Go.
    #[test]
    fn regression_precisions_past_rusts_formatter_bound() {
        let f = format_float(0.1, b'f', 70_000);
        assert_eq!(f.len(), 2 + 70_000);
        assert!(
            f.starts_with("0.1000000000000000055511151231257827"),
            "{}",
            &f[..60]
        );
        assert_eq!(f, format!("{:.1100}{}", 0.1, "0".repeat(70_000 - 1100)));
        assert_eq!(format_float(-2.0, b'f', 884_444).len(), 3 + 884_444);
        let e = format_float(1e300, b'e', 70_000);
        assert!(
            e.starts_with("1.00000000000000005250") && e.ends_with("0e+300"),
            "{}",
            &e[..30]
        );
        assert_eq!(e.len(), 2 + 70_000 + 5);
        assert_eq!(
            format_float(1e300, b'g', 70_000),
            format_float(1e300, b'g', 1100)
        );
        assert_eq!(
            format_float(0.1, b'g', 70_000),
            format_float(0.1, b'g', 1100)
        );
    }
}
