//! Number literals: Go's `parse.newNumber` on top of `strconv.ParseUint`/`ParseInt` with base 0
//! (`0x`, `0o`, `0b`, legacy `0377` octal, `_` separators) and `ParseFloat` (decimal and hex
//! floats), then the typing rule of `idealConstant`: a literal spelled with `.`, `e` or `p` is a
//! float, anything else an int.

use crate::escape::{Piece, quote, unquote_char};

/// A number literal resolved the way Go's `idealConstant` resolves it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Literal {
    Int(i64),
    Float(f64),
    /// Fits uint64 but not int: Go fails with "overflows int" when evaluated.
    Overflow,
}

impl Literal {
    /// The JSON value of the literal; `None` for [`Literal::Overflow`].
    pub(crate) fn to_value(self) -> Option<serde_json::Value> {
        match self {
            Literal::Int(i) => Some(i.into()),
            Literal::Float(f) => serde_json::Number::from_f64(f).map(serde_json::Value::Number),
            Literal::Overflow => None,
        }
    }
}

/// Resolves a `Number` or `CharConstant` token. Complex literals are refused: JSON has none
/// and no built-in takes one.
pub(crate) fn parse_number(text: &str, is_char: bool) -> Result<Literal, String> {
    if is_char {
        return parse_char(text);
    }
    if let Some(imag) = text.strip_suffix('i') {
        // Go accepts complex literals; nothing here can use one, so refuse them clearly.
        let imag = imag.rsplit_once(['+', '-']).map_or(imag, |(_, im)| im);
        if parse_float(imag).is_some() || parse_uint(imag).is_some() {
            return Err(format!("complex number {text} is not supported"));
        }
        return Err(format!("illegal number syntax: {}", quote(text)));
    }
    let as_uint = parse_uint(text);
    let as_int = parse_int(text);
    if let Some(i) = as_int {
        return Ok(if is_float_spelling(text) {
            Literal::Float(i as f64)
        } else {
            Literal::Int(i)
        });
    }
    if let Some(u) = as_uint {
        return Ok(if is_float_spelling(text) {
            Literal::Float(u as f64)
        } else {
            Literal::Overflow
        });
    }
    match parse_float(text) {
        Some(_) if !text.contains(['.', 'e', 'E', 'p', 'P']) => {
            Err(format!("integer overflow: {}", quote(text)))
        }
        Some(f) => Ok(Literal::Float(f)),
        None => Err(format!("illegal number syntax: {}", quote(text))),
    }
}

/// `idealConstant`'s test: floats are spelled with `.`, `e` or `p`, but hex ints (`0xef`)
/// contain `e` without being floats.
fn is_float_spelling(text: &str) -> bool {
    let body = text.trim_start_matches(['+', '-']);
    let hex_int = body.len() > 2
        && (body.starts_with("0x") || body.starts_with("0X"))
        && !body.contains(['p', 'P']);
    !hex_int && text.contains(['.', 'e', 'E', 'p', 'P'])
}

fn parse_char(text: &str) -> Result<Literal, String> {
    let malformed = || format!("malformed character constant: {text}");
    let inner = text.strip_prefix('\'').ok_or_else(malformed)?;
    let (piece, tail) = unquote_char(inner, '\'').map_err(|_| malformed())?;
    if tail != "'" {
        return Err(malformed());
    }
    let c = match piece {
        Piece::Char(c) => c as i64,
        Piece::Byte(b) => i64::from(b),
    };
    Ok(Literal::Int(c))
}

/// Go's `underscoreOK`: `_` only between digits, or between a base prefix and a digit.
fn underscore_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// `strconv.ParseUint(s, 0, 64)`.
fn parse_uint(s0: &str) -> Option<u64> {
    if s0.is_empty() {
        return None;
    }
    let b = s0.as_bytes();
    let (base, digits) = if b[0] == b'0' && b.len() >= 3 && matches!(b[1], b'b' | b'B') {
        (2, &s0[2..])
    } else if b[0] == b'0' && b.len() >= 3 && matches!(b[1], b'o' | b'O') {
        (8, &s0[2..])
    } else if b[0] == b'0' && b.len() >= 3 && matches!(b[1], b'x' | b'X') {
        (16, &s0[2..])
    } else if b[0] == b'0' {
        (8, &s0[1..])
    } else {
        (10, s0)
    };
    let mut n: u64 = 0;
    let mut underscores = false;
    for c in digits.bytes() {
        if c == b'_' {
            underscores = true;
            continue;
        }
        let d = (c as char).to_digit(36)?;
        if d >= base {
            return None;
        }
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    if underscores && !underscore_ok(s0) {
        return None;
    }
    Some(n)
}

/// `strconv.ParseInt(s, 0, 64)`.
fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let u = parse_uint(body)?;
    if neg {
        0i64.checked_sub_unsigned(u)
    } else {
        i64::try_from(u).ok()
    }
}

/// `strconv.ParseFloat(s, 64)` for the spellings the lexer produces; `None` on syntax errors
/// and on overflow to infinity (Go reports ErrRange and the template refuses the literal).
fn parse_float(s: &str) -> Option<f64> {
    if s.contains('_') && !underscore_ok(s) {
        return None;
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let (neg, body) = match clean.as_bytes().first() {
        Some(b'-') => (true, &clean[1..]),
        Some(b'+') => (false, &clean[1..]),
        _ => (false, clean.as_str()),
    };
    let v = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        parse_hex_float(hex)?
    } else {
        if !body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    if !v.is_finite() {
        return None;
    }
    Some(if neg { -v } else { v })
}

/// Hex mantissa with a mandatory binary exponent: `1.8p+3`.
fn parse_hex_float(s: &str) -> Option<f64> {
    let (mant, exp) = s.split_once(['p', 'P'])?;
    let exp: i32 = exp.parse().ok()?;
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars().chain(frac_part.chars()) {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    let shift = exp.checked_sub(i32::try_from(frac_part.len()).ok()?.checked_mul(4)?)?;
    Some(v * 2f64.powi(shift))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> i64 {
        match parse_number(s, false) {
            Ok(Literal::Int(i)) => i,
            other => panic!("{s}: {other:?}"),
        }
    }

    fn float(s: &str) -> f64 {
        match parse_number(s, false) {
            Ok(Literal::Float(f)) => f,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn integers_in_every_base() {
        assert_eq!(int("1234"), 1234);
        assert_eq!(int("12_34"), 1234);
        assert_eq!(int("0b101"), 5);
        assert_eq!(int("0b_1_0_1"), 5);
        assert_eq!(int("0B101"), 5);
        assert_eq!(int("0377"), 255);
        assert_eq!(int("0o377"), 255);
        assert_eq!(int("0o_3_7_7"), 255);
        assert_eq!(int("0x123"), 291);
        assert_eq!(int("0X123ABC"), 1194684);
        assert_eq!(int("0xef"), 239);
        assert_eq!(int("-7"), -7);
        assert_eq!(int("+7"), 7);
        assert_eq!(int("-9223372036854775808"), i64::MIN);
    }

    #[test]
    fn floats_decimal_and_hex() {
        assert_eq!(float("123.4"), 123.4);
        assert_eq!(float("0_0_1_2_3.4"), 123.4);
        assert_eq!(float("1e3"), 1000.0);
        assert_eq!(float("1.0"), 1.0);
        assert_eq!(float("+0x1.ep+2"), 7.5);
        assert_eq!(float("+0x_1.e_0p+0_2"), 7.5);
        assert_eq!(float("0x0_1.e_0p+02"), 7.5);
        assert_eq!(float(".5"), 0.5);
    }

    #[test]
    fn char_constants_are_ints() {
        assert_eq!(
            parse_number("'a'", true)
                .ok()
                .map(|l| matches!(l, Literal::Int(97))),
            Some(true)
        );
        assert!(matches!(parse_number("'\\n'", true), Ok(Literal::Int(10))));
        assert!(matches!(
            parse_number("'\\x41'", true),
            Ok(Literal::Int(65))
        ));
        assert!(matches!(parse_number("'é'", true), Ok(Literal::Int(233))));
        assert!(parse_number("'ab'", true).is_err());
        assert!(parse_number("''", true).is_err());
    }

    #[test]
    fn bad_numbers_use_go_messages() {
        assert_eq!(
            parse_number("089", false).err().as_deref(),
            Some("integer overflow: \"089\"")
        );
        assert_eq!(
            parse_number("1e400", false).err().as_deref(),
            Some("illegal number syntax: \"1e400\"")
        );
        assert_eq!(
            parse_number("1__0", false).err().as_deref(),
            Some("illegal number syntax: \"1__0\"")
        );
        assert_eq!(
            parse_number("0x", false).err().as_deref(),
            Some("illegal number syntax: \"0x\"")
        );
        assert!(matches!(
            parse_number("18446744073709551615", false),
            Ok(Literal::Overflow)
        ));
        assert!(parse_number("1i", false).is_err());
    }
}
