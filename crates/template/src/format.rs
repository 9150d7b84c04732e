//! Go's `fmt` formatter state and per-type formatting (`fmt/print.go` `printArg`/`printValue`
//! and `fmt/format.go`): flags, width, precision, padding, integers in every base, floats,
//! strings, and the `[a b]` / `map[k:v]` forms of arrays and objects, which apply the verb to
//! each element as Go does (`%5d` of `[1 2]` is `[    1     2]`).
//!
//! Not supported, printed as a bad verb (`%!x(float64=1.5)`): `%b`/`%x`/`%X` of floats and `%p`.

use serde_json::Value;

use crate::MAX_OUTPUT_BYTES;
use crate::escape::{can_backquote, quote_rune, quote_with};
use crate::float::format_float;
use crate::value::type_name;

/// One `fmt` argument: a JSON value or Go's untyped `nil`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'v> {
    Nil,
    Value(&'v Value),
}

/// Deeper nesting is printed as `...`: only hand-built values get this deep.
const MAX_PRINT_DEPTH: usize = 512;

#[derive(Debug, Default)]
pub(crate) struct Formatter {
    buf: String,
    pub(crate) wid: i64,
    pub(crate) prec: i64,
    pub(crate) wid_present: bool,
    pub(crate) prec_present: bool,
    pub(crate) minus: bool,
    pub(crate) plus: bool,
    pub(crate) sharp: bool,
    pub(crate) space: bool,
    pub(crate) zero: bool,
    pub(crate) sharp_v: bool,
}

impl Formatter {
    pub(crate) fn push(&mut self, c: char) {
        self.buf.push(c);
    }

    pub(crate) fn push_str(&mut self, s: &str) {
        self.buf.push_str(s);
    }

    pub(crate) fn finish(self) -> String {
        self.buf
    }

    /// Stops a formatting call from building a string beyond the output limit.
    pub(crate) fn check_size(&self) -> Result<(), String> {
        if self.buf.len() > MAX_OUTPUT_BYTES {
            return Err("result exceeds 10 MiB".into());
        }
        Ok(())
    }

    pub(crate) fn clear_flags(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        *self = Formatter {
            buf,
            ..Formatter::default()
        };
    }

    /// Go's `printArg`.
    pub(crate) fn print_arg(&mut self, arg: Arg<'_>, verb: char) {
        match (arg, verb) {
            (Arg::Nil, 'T' | 'v') => self.pad("<nil>"),
            (Arg::Nil, _) => self.bad_verb(arg, verb),
            (Arg::Value(v), 'T') => self.fmt_s(type_name(v)),
            (Arg::Value(v), _) => self.print_value(v, verb, 0),
        }
    }

    /// Go's `badVerb`: `%!d(string=abc)`, the value printed with `%v` and the same flags.
    fn bad_verb(&mut self, arg: Arg<'_>, verb: char) {
        self.buf.push_str("%!");
        self.buf.push(verb);
        self.buf.push('(');
        match arg {
            Arg::Nil => self.buf.push_str("<nil>"),
            Arg::Value(v) => {
                self.buf.push_str(type_name(v));
                self.buf.push('=');
                self.print_arg(arg, 'v');
            }
        }
        self.buf.push(')');
    }

    fn print_value(&mut self, v: &Value, verb: char, depth: usize) {
        if depth > MAX_PRINT_DEPTH {
            self.buf.push_str("...");
            return;
        }
        match v {
            // Only reachable inside arrays and objects: a nil interface element.
            Value::Null if self.sharp_v => self.buf.push_str("interface {}(nil)"),
            Value::Null if depth > 0 => self.buf.push_str("<nil>"),
            Value::Null => self.print_arg(Arg::Nil, verb),
            Value::Bool(b) => match verb {
                't' | 'v' => self.pad(if *b { "true" } else { "false" }),
                _ => self.bad_verb(Arg::Value(v), verb),
            },
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    self.fmt_int(v, i.unsigned_abs(), i < 0, false, verb);
                } else if let Some(u) = n.as_u64() {
                    self.fmt_int(v, u, false, true, verb);
                } else {
                    self.fmt_float_verb(v, n.as_f64().unwrap_or(0.0), verb);
                }
            }
            Value::String(s) => match verb {
                'v' if self.sharp_v => self.fmt_q(s),
                'v' | 's' => self.fmt_s(s),
                'x' => self.fmt_sx(s, false),
                'X' => self.fmt_sx(s, true),
                'q' => self.fmt_q(s),
                _ => self.bad_verb(Arg::Value(v), verb),
            },
            Value::Array(items) => {
                let sep = if self.sharp_v { ", " } else { " " };
                self.buf
                    .push_str(if self.sharp_v { "[]interface {}{" } else { "[" });
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.buf.push_str(sep);
                    }
                    self.print_value(item, verb, depth + 1);
                }
                self.buf.push(if self.sharp_v { '}' } else { ']' });
            }
            Value::Object(map) => {
                let sep = if self.sharp_v { ", " } else { " " };
                self.buf.push_str(if self.sharp_v {
                    "map[string]interface {}{"
                } else {
                    "map["
                });
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable();
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        self.buf.push_str(sep);
                    }
                    self.print_value(&Value::String(k.clone()), verb, depth + 1);
                    self.buf.push(':');
                    if let Some(item) = map.get(k) {
                        self.print_value(item, verb, depth + 1);
                    }
                }
                self.buf.push(if self.sharp_v { '}' } else { ']' });
            }
        }
    }

    fn fmt_int(&mut self, v: &Value, u: u64, neg: bool, unsigned: bool, verb: char) {
        match verb {
            'v' if self.sharp_v && unsigned => {
                let old = std::mem::replace(&mut self.sharp, true);
                self.fmt_integer(u, neg, 16, verb, false);
                self.sharp = old;
            }
            'v' | 'd' => self.fmt_integer(u, neg, 10, verb, false),
            'b' => self.fmt_integer(u, neg, 2, verb, false),
            'o' | 'O' => self.fmt_integer(u, neg, 8, verb, false),
            'x' => self.fmt_integer(u, neg, 16, verb, false),
            'X' => self.fmt_integer(u, neg, 16, verb, true),
            'c' => self.pad(&char_of(u, neg).to_string()),
            'q' => self.pad(&quote_rune(char_of(u, neg), self.plus)),
            'U' => self.fmt_unicode(u, neg),
            _ => self.bad_verb(Arg::Value(v), verb),
        }
    }

    fn fmt_float_verb(&mut self, v: &Value, f: f64, verb: char) {
        match verb {
            'v' => self.fmt_float(f, 'g', -1),
            'g' | 'G' => self.fmt_float(f, verb, -1),
            'f' | 'e' | 'E' => self.fmt_float(f, verb, 6),
            'F' => self.fmt_float(f, 'f', 6),
            _ => self.bad_verb(Arg::Value(v), verb),
        }
    }

    /// Go's `writePadding`: zeros only when padding on the left.
    fn write_padding(&mut self, n: i64) {
        let c = if self.zero && !self.minus { '0' } else { ' ' };
        for _ in 0..n.max(0) {
            self.buf.push(c);
        }
    }

    /// Go's `pad`/`padString`: width counts characters.
    fn pad(&mut self, s: &str) {
        if !self.wid_present || self.wid == 0 {
            self.buf.push_str(s);
            return;
        }
        let width = self.wid - s.chars().count() as i64;
        if self.minus {
            self.buf.push_str(s);
            self.write_padding(width);
        } else {
            self.write_padding(width);
            self.buf.push_str(s);
        }
    }

    /// Go's `fmtInteger`.
    fn fmt_integer(&mut self, u: u64, neg: bool, base: u32, verb: char, upper: bool) {
        let mut prec: i64 = 0;
        if self.prec_present {
            prec = self.prec;
            // Precision 0 and value 0 print nothing but padding.
            if prec == 0 && u == 0 {
                let old = self.zero;
                self.zero = false;
                self.write_padding(self.wid);
                self.zero = old;
                return;
            }
        } else if self.zero && !self.minus && self.wid_present {
            prec = self.wid;
            if neg || self.plus || self.space {
                prec -= 1;
            }
        }
        let mut digits = match (base, upper) {
            (2, _) => format!("{u:b}"),
            (8, _) => format!("{u:o}"),
            (16, false) => format!("{u:x}"),
            (16, true) => format!("{u:X}"),
            _ => u.to_string(),
        };
        let missing = usize::try_from(prec)
            .unwrap_or(0)
            .saturating_sub(digits.len());
        if missing > 0 {
            digits.insert_str(0, &"0".repeat(missing));
        }
        let mut prefix = String::new();
        if self.sharp {
            match base {
                2 => prefix.push_str("0b"),
                8 if !digits.starts_with('0') => prefix.push('0'),
                16 => prefix.push_str(if upper { "0X" } else { "0x" }),
                _ => {}
            }
        }
        if verb == 'O' {
            prefix.insert_str(0, "0o");
        }
        let sign = if neg {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        };
        let old = self.zero;
        self.zero = false;
        self.pad(&format!("{sign}{prefix}{digits}"));
        self.zero = old;
    }

    /// Go's `fmtUnicode`: `U+0041`, with `#` also `U+0041 'A'`.
    fn fmt_unicode(&mut self, u: u64, neg: bool) {
        let u = if neg { u.wrapping_neg() } else { u };
        let prec = if self.prec_present && self.prec > 4 {
            usize::try_from(self.prec).unwrap_or(4)
        } else {
            4
        };
        let mut s = format!("U+{u:0prec$X}");
        if self.sharp
            && let Some(c) = u32::try_from(u).ok().and_then(char::from_u32)
            && crate::escape::is_print(c)
        {
            s.push_str(&format!(" '{c}'"));
        }
        let old = self.zero;
        self.zero = false;
        self.pad(&s);
        self.zero = old;
    }

    /// Go's `fmtFloat`: sign, `#` handling, zero padding after the sign.
    pub(crate) fn fmt_float(&mut self, f: f64, verb: char, prec: i64) {
        let prec = if self.prec_present { self.prec } else { prec };
        let body = format_float(f, verb as u8, prec);
        let mut num = if body.starts_with(['-', '+']) {
            body
        } else {
            format!("+{body}")
        };
        if self.space && num.starts_with('+') && !self.plus {
            num.replace_range(..1, " ");
        }
        if num[1..].starts_with(['I', 'N']) {
            let old = self.zero;
            self.zero = false;
            if num[1..].starts_with('N') && !self.space && !self.plus {
                num.remove(0);
            }
            self.pad(&num);
            self.zero = old;
            return;
        }
        if self.sharp {
            num = sharp_float(num, verb, prec);
        }
        if self.plus || !num.starts_with('+') {
            let width = num.chars().count() as i64;
            if self.zero && !self.minus && self.wid_present && self.wid > width {
                let sign = num.remove(0);
                self.buf.push(sign);
                self.write_padding(self.wid - width);
                self.buf.push_str(&num);
                return;
            }
            self.pad(&num);
            return;
        }
        self.pad(&num[1..]);
    }

    fn fmt_s(&mut self, s: &str) {
        let s = self.truncate(s);
        self.pad(s);
    }

    fn truncate<'s>(&self, s: &'s str) -> &'s str {
        if self.prec_present {
            let n = usize::try_from(self.prec).unwrap_or(0);
            if let Some((i, _)) = s.char_indices().nth(n) {
                return &s[..i];
            }
        }
        s
    }

    /// Go's `fmtSbx` for strings: hex of the bytes, `% x` separates them, `#` adds `0x`.
    fn fmt_sx(&mut self, s: &str, upper: bool) {
        let mut length = s.len();
        if self.prec_present {
            length = length.min(usize::try_from(self.prec).unwrap_or(0));
        }
        let mut width = 2 * length as i64;
        if width == 0 {
            if self.wid_present {
                self.write_padding(self.wid);
            }
            return;
        }
        if self.space {
            if self.sharp {
                width *= 2;
            }
            width += length as i64 - 1;
        } else if self.sharp {
            width += 2;
        }
        if self.wid_present && self.wid > width && !self.minus {
            self.write_padding(self.wid - width);
        }
        let prefix = if upper { "0X" } else { "0x" };
        if self.sharp {
            self.buf.push_str(prefix);
        }
        for (i, b) in s.bytes().take(length).enumerate() {
            if self.space && i > 0 {
                self.buf.push(' ');
                if self.sharp {
                    self.buf.push_str(prefix);
                }
            }
            if upper {
                self.buf.push_str(&format!("{b:02X}"));
            } else {
                self.buf.push_str(&format!("{b:02x}"));
            }
        }
        if self.wid_present && self.wid > width && self.minus {
            self.write_padding(self.wid - width);
        }
    }

    /// Go's `fmtQ`: `%q`, `%+q` (ASCII only), `%#q` (backquoted when possible).
    fn fmt_q(&mut self, s: &str) {
        let s = self.truncate(s);
        if self.sharp && can_backquote(s) {
            self.pad(&format!("`{s}`"));
            return;
        }
        let q = quote_with(s, self.plus);
        self.pad(&q);
    }
}

fn char_of(u: u64, neg: bool) -> char {
    if neg {
        return '\u{FFFD}';
    }
    u32::try_from(u)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
}

/// The `#` flag on floats: keep a decimal point and, for `%g`, trailing zeros up to the
/// precision (6 when unspecified).
fn sharp_float(num: String, verb: char, prec: i64) -> String {
    let mut digits = match verb {
        'v' | 'g' | 'G' | 'x' => {
            if prec == -1 {
                6
            } else {
                prec
            }
        }
        _ => 0,
    };
    let (mut head, tail) = match num[1..].find(['e', 'E', 'p', 'P']) {
        Some(i) => (num[..i + 1].to_string(), num[i + 1..].to_string()),
        None => (num, String::new()),
    };
    let has_point = head.contains('.');
    let mut saw_nonzero = false;
    for c in head[1..].chars() {
        if c == '.' {
            continue;
        }
        if c != '0' {
            saw_nonzero = true;
        }
        if saw_nonzero {
            digits -= 1;
        }
    }
    if !has_point {
        if head.len() == 2 && head.ends_with('0') {
            digits -= 1;
        }
        head.push('.');
    }
    while digits > 0 {
        head.push('0');
        digits -= 1;
    }
    head + &tail
}
