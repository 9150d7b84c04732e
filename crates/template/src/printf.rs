//! The `printf` built-in: Go's `fmt.Sprintf` format-string interpreter (`doPrintf`), with its
//! flags (`#0+- `), widths and precisions (literal, `*`, explicit `[n]` argument indexes) and
//! its in-band errors: `%!d(MISSING)`, `%!(EXTRA int=1)`, `%!(NOVERB)`, `%!(BADWIDTH)`,
//! `%!(BADPREC)`, `%!d(BADINDEX)`. Per-type formatting is in `format`.

use serde_json::Value;

use crate::format::{Arg, Formatter};
use crate::print::fmt_arg;
use crate::value::{Num, Val, num};

/// Go rejects widths and precisions beyond a million as "crazy long numbers".
const TOO_LARGE: i64 = 1_000_000;

fn too_large(x: i64) -> bool {
    !(-TOO_LARGE..=TOO_LARGE).contains(&x)
}

/// Go's `parsenum`: digits from `start`, or `(0, false, end)` when absurdly long.
fn parse_num(b: &[u8], start: usize, end: usize) -> (i64, bool, usize) {
    if start >= end {
        return (0, false, end);
    }
    let mut num = 0i64;
    let mut is_num = false;
    let mut i = start;
    while i < end && b[i].is_ascii_digit() {
        if too_large(num) {
            return (0, false, end);
        }
        num = num * 10 + i64::from(b[i] - b'0');
        is_num = true;
        i += 1;
    }
    (num, is_num, i)
}

struct State<'a, 'v> {
    f: Formatter,
    args: &'a [Val<'v>],
    reordered: bool,
    good_arg_num: bool,
}

impl State<'_, '_> {
    /// Go's `argNumber`: an explicit `[n]` index at `i`, if any.
    fn arg_number(&mut self, arg_num: usize, format: &[u8], i: usize) -> (usize, usize, bool) {
        if format.len() <= i || format[i] != b'[' {
            return (arg_num, i, false);
        }
        self.reordered = true;
        let rest = &format[i..];
        let (index, wid, ok) = parse_arg_number(rest);
        if ok && index >= 1 && (index as usize) <= self.args.len() {
            return (index as usize - 1, i + wid, true);
        }
        self.good_arg_num = false;
        (arg_num, i + wid, ok)
    }

    /// Go's `intFromArg`: a `*` width or precision taken from an integer argument.
    fn int_from_arg(&self, arg_num: usize) -> (i64, bool, usize) {
        let Some(a) = self.args.get(arg_num) else {
            return (0, false, arg_num);
        };
        let n = match a.get() {
            Some(Value::Number(n)) => match num(n) {
                Num::Int(i) => i64::try_from(i).ok(),
                Num::Float(_) => None,
            },
            _ => None,
        };
        match n {
            Some(n) if !too_large(n) => (n, true, arg_num + 1),
            _ => (0, false, arg_num + 1),
        }
    }
}

/// `[n]` at the start of `b`: the 1-based index, bytes consumed, and whether it parsed.
fn parse_arg_number(b: &[u8]) -> (i64, usize, bool) {
    if b.len() < 3 {
        return (0, 1, false);
    }
    for i in 1..b.len() {
        if b[i] == b']' {
            let (width, ok, newi) = parse_num(b, 1, i);
            if !ok || newi != i {
                return (0, i + 1, false);
            }
            return (width, i + 1, true);
        }
    }
    (0, 1, false)
}

/// `fmt.Sprintf(format, args...)`.
///
/// # Errors
/// Only when the result would exceed the output limit; format mistakes are reported in-band,
/// as Go does.
pub(crate) fn sprintf(format: &str, args: &[Val<'_>]) -> Result<String, String> {
    let b = format.as_bytes();
    let end = b.len();
    let mut st = State {
        f: Formatter::default(),
        args,
        reordered: false,
        good_arg_num: true,
    };
    let mut arg_num = 0usize;
    let mut after_index;
    let mut i = 0;
    while i < end {
        st.good_arg_num = true;
        let last = i;
        while i < end && b[i] != b'%' {
            i += 1;
        }
        if i > last {
            st.f.push_str(&format[last..i]);
        }
        if i >= end {
            break;
        }
        i += 1;
        st.f.clear_flags();
        while i < end {
            match b[i] {
                b'#' => st.f.sharp = true,
                // Zero padding only to the left.
                b'0' => st.f.zero = !st.f.minus,
                b'+' => st.f.plus = true,
                b'-' => {
                    st.f.minus = true;
                    st.f.zero = false;
                }
                b' ' => st.f.space = true,
                _ => break,
            }
            i += 1;
        }
        (arg_num, i, after_index) = st.arg_number(arg_num, b, i);
        // Width.
        if i < end && b[i] == b'*' {
            i += 1;
            let (wid, present, next) = st.int_from_arg(arg_num);
            arg_num = next;
            st.f.wid = wid;
            st.f.wid_present = present;
            if !present {
                st.f.push_str("%!(BADWIDTH)");
            }
            if wid < 0 {
                st.f.wid = -wid;
                st.f.minus = true;
                st.f.zero = false;
            }
            after_index = false;
        } else {
            let (wid, present, next) = parse_num(b, i, end);
            st.f.wid = wid;
            st.f.wid_present = present;
            i = next;
            if after_index && present {
                st.good_arg_num = false;
            }
        }
        // Precision.
        if i < end && b[i] == b'.' {
            i += 1;
            if after_index {
                st.good_arg_num = false;
            }
            (arg_num, i, after_index) = st.arg_number(arg_num, b, i);
            if i < end && b[i] == b'*' {
                i += 1;
                let (prec, present, next) = st.int_from_arg(arg_num);
                arg_num = next;
                st.f.prec = prec.max(0);
                st.f.prec_present = present && prec >= 0;
                if !st.f.prec_present {
                    st.f.push_str("%!(BADPREC)");
                }
                after_index = false;
            } else {
                let (prec, present, next) = parse_num(b, i, end);
                i = next;
                st.f.prec = if present { prec } else { 0 };
                st.f.prec_present = true;
            }
        }
        if !after_index {
            (arg_num, i, _) = st.arg_number(arg_num, b, i);
        }
        let Some(verb) = format.get(i..).and_then(|s| s.chars().next()) else {
            st.f.push_str("%!(NOVERB)");
            break;
        };
        i += verb.len_utf8();
        if verb == '%' {
            // A literal percent takes no operand and ignores width and precision.
            st.f.push('%');
        } else if !st.good_arg_num {
            st.f.push_str(&format!("%!{verb}(BADINDEX)"));
        } else if arg_num >= args.len() {
            st.f.push_str(&format!("%!{verb}(MISSING)"));
        } else {
            let arg = fmt_arg(&args[arg_num]);
            arg_num += 1;
            if verb == 'v' {
                // %#v is Go syntax; %+v only matters for structs, which JSON has not.
                st.f.sharp_v = st.f.sharp;
                st.f.sharp = false;
                st.f.plus = false;
            }
            st.f.print_arg(arg, verb);
        }
        st.f.check_size()?;
    }
    if !st.reordered && arg_num < args.len() {
        st.f.clear_flags();
        st.f.push_str("%!(EXTRA ");
        for (n, a) in args[arg_num..].iter().enumerate() {
            if n > 0 {
                st.f.push_str(", ");
            }
            match fmt_arg(a) {
                Arg::Nil => st.f.push_str("<nil>"),
                arg @ Arg::Value(v) => {
                    st.f.push_str(crate::value::type_name(v));
                    st.f.push('=');
                    st.f.print_arg(arg, 'v');
                }
            }
        }
        st.f.push(')');
    }
    st.f.check_size()?;
    Ok(st.f.finish())
}

#[cfg(test)]
mod tests;
