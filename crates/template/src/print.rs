//! Go's default printing of values: `fmt.Sprint`/`Sprintln` as the `print`/`println` built-ins
//! use them, the `%v` form behind [`crate::go_print`], and what an action writes for the value of
//! its pipeline.
//!
//! All of it goes through the `format` formatter with verb `v`, so `{{.}}`, `print` and
//! `printf "%v"` cannot drift apart.

use serde_json::Value;

use crate::format::{Arg, Formatter};
use crate::value::Val;

/// `fmt.Sprint(v)` of one JSON value.
pub(crate) fn go_print(v: &Value) -> String {
    let mut f = Formatter::default();
    f.print_arg(Arg::Value(v), 'v');
    f.finish()
}

/// What `{{pipeline}}` writes: Go's `printableValue` turns a nil interface (missing key, JSON
/// null) into `<no value>`; everything else prints with `%v`.
pub(crate) fn action_text(v: &Val<'_>) -> String {
    match v.get() {
        None | Some(Value::Null) => "<no value>".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => go_print(v),
    }
}

/// A function argument as `fmt` sees it: nil interfaces are `nil`.
pub(crate) fn fmt_arg<'v>(v: &'v Val<'_>) -> Arg<'v> {
    match v.get() {
        None | Some(Value::Null) => Arg::Nil,
        Some(v) => Arg::Value(v),
    }
}

/// `fmt.Sprint(args...)`: a space between operands when neither is a string.
pub(crate) fn sprint(args: &[Val<'_>]) -> Result<String, String> {
    let mut f = Formatter::default();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let is_string = matches!(a.get(), Some(Value::String(_)));
        if i > 0 && !is_string && !prev_string {
            f.push(' ');
        }
        f.print_arg(fmt_arg(a), 'v');
        f.check_size()?;
        prev_string = is_string;
    }
    Ok(f.finish())
}

/// `fmt.Sprintln(args...)`: always a space between operands, and a newline.
pub(crate) fn sprintln(args: &[Val<'_>]) -> Result<String, String> {
    let mut f = Formatter::default();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            f.push(' ');
        }
        f.print_arg(fmt_arg(a), 'v');
        f.check_size()?;
    }
    f.push('\n');
    Ok(f.finish())
}

/// Go's `evalArgs` behind `html`, `js` and `urlquery`: one string argument as-is, otherwise
/// `Sprint` with nil arguments shown as `<no value>`.
pub(crate) fn eval_args(args: &[Val<'_>]) -> Result<String, String> {
    if let [v] = args
        && let Some(Value::String(s)) = v.get()
    {
        return Ok(s.clone());
    }
    let shown: Vec<Val<'_>> = args
        .iter()
        .map(|a| {
            if a.is_nil() {
                Val::str("<no value>")
            } else {
                a.clone()
            }
        })
        .collect();
    sprint(&shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_print_matches_fmt_v() {
        assert_eq!(go_print(&json!("s")), "s");
        assert_eq!(go_print(&json!(null)), "<nil>");
        assert_eq!(go_print(&json!(true)), "true");
        assert_eq!(go_print(&json!(-12)), "-12");
        assert_eq!(go_print(&json!(u64::MAX)), "18446744073709551615");
        assert_eq!(go_print(&json!(456.0)), "456");
        assert_eq!(go_print(&json!(1e21)), "1e+21");
        assert_eq!(
            go_print(&json!([1, "a", null, [true]])),
            "[1 a <nil> [true]]"
        );
        assert_eq!(
            go_print(&json!({"b": 1, "a": {"c": []}})),
            "map[a:map[c:[]] b:1]"
        );
    }

    #[test]
    fn action_text_shows_no_value_for_nil() {
        let null = json!(null);
        assert_eq!(action_text(&Val::Missing), "<no value>");
        assert_eq!(action_text(&Val::Ref(&null)), "<no value>");
    }

    #[test]
    fn sprint_spaces_only_between_non_strings() {
        let args = [
            Val::int(1),
            Val::int(2),
            Val::str("a"),
            Val::int(3),
            Val::Missing,
        ];
        assert_eq!(sprint(&args).ok().as_deref(), Some("1 2a3 <nil>"));
        assert_eq!(sprintln(&args).ok().as_deref(), Some("1 2 a 3 <nil>\n"));
    }
}
