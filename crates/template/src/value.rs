//! The values an executing template handles: borrowed parts of the caller's data, values the
//! template computed, and Go's "no value".
//!
//! Go decodes JSON into `interface{}` values; a nil interface that reaches the end of a pipeline
//! becomes an invalid `reflect.Value`, which prints as `<no value>`. So JSON `null` and a missing
//! key behave alike almost everywhere: both are false, both print `<no value>` from an action,
//! both are `<nil>` when handed to `print` or `printf`, both compare equal to `nil`. They stay
//! separate variants here only because `null` can sit inside arrays and objects.

use std::cmp::Ordering;
use std::rc::Rc;

use serde_json::{Number, Value};

/// A value during execution.
#[derive(Debug, Clone)]
pub(crate) enum Val<'a> {
    /// Go's invalid `reflect.Value`: a missing key, the field of a missing value.
    Missing,
    /// Borrowed from the data passed to `render`.
    Ref(&'a Value),
    /// Computed by the template (literals, function results, parts of them).
    Owned(Rc<Value>),
}

impl<'a> Val<'a> {
    pub(crate) fn owned(v: Value) -> Val<'a> {
        Val::Owned(Rc::new(v))
    }

    pub(crate) fn str(s: impl Into<String>) -> Val<'a> {
        Val::owned(Value::String(s.into()))
    }

    pub(crate) fn int(i: i64) -> Val<'a> {
        Val::owned(Value::from(i))
    }

    pub(crate) fn bool(b: bool) -> Val<'a> {
        Val::owned(Value::Bool(b))
    }

    /// The JSON value, or `None` for [`Val::Missing`].
    pub(crate) fn get(&self) -> Option<&Value> {
        match self {
            Val::Missing => None,
            Val::Ref(v) => Some(v),
            Val::Owned(v) => Some(v),
        }
    }

    /// Missing or JSON `null`: what Go treats as a nil interface.
    pub(crate) fn is_nil(&self) -> bool {
        matches!(self.get(), None | Some(Value::Null))
    }

    /// A part of this value, borrowed when this value is borrowed (owned parts are copied:
    /// they can only come from values the template built, which are small in practice).
    pub(crate) fn project(&self, f: impl FnOnce(&Value) -> Option<&Value>) -> Option<Val<'a>> {
        match self {
            Val::Missing => None,
            Val::Ref(v) => f(v).map(Val::Ref),
            Val::Owned(v) => f(v).map(|p| Val::owned(p.clone())),
        }
    }

    /// Go's `isTrue`: false, 0, "", empty array/object, null and missing are false.
    pub(crate) fn truth(&self) -> bool {
        match self.get() {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(Value::Number(n)) => match num(n) {
                Num::Int(i) => i != 0,
                Num::Float(f) => f != 0.0,
            },
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Object(o)) => !o.is_empty(),
        }
    }

    /// The Go type of the value as decoded from JSON, for error messages.
    pub(crate) fn type_name(&self) -> &'static str {
        self.get().map_or("<nil>", type_name)
    }
}

/// Go's name for the type a JSON value has in a template. Integers are `int` (Go would see
/// `float64` for every JSON number; we keep integers, see `exec`).
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() => "int",
        Value::Number(n) if n.is_u64() => "uint64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// A JSON number as the template sees it: an integer (i64 or u64 range) or a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

pub(crate) fn num(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Num::Int(i128::from(u))
    } else {
        Num::Float(n.as_f64().unwrap_or(0.0))
    }
}

/// Numeric order across integers and floats without losing precision above 2^53.
pub(crate) fn cmp_num(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Float(y)) => cmp_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => cmp_int_float(y, x).map(Ordering::reverse),
    }
}

fn cmp_int_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Every i128 we hold fits in (-2^65, 2^65); floats beyond that are simply larger/smaller.
    if f >= 1e30 {
        return Some(Ordering::Less);
    }
    if f <= -1e30 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    // t is integral and below 1e30 in magnitude, so the conversion is exact.
    let ti = t as i128;
    Some(i.cmp(&ti).then(if f > t {
        Ordering::Less
    } else if f < t {
        Ordering::Greater
    } else {
        Ordering::Equal
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn truth_follows_go_is_true() {
        for (v, want) in [
            (json!(false), false),
            (json!(0), false),
            (json!(0.0), false),
            (json!(""), false),
            (json!([]), false),
            (json!({}), false),
            (json!(null), false),
            (json!(true), true),
            (json!(-1), true),
            (json!(0.5), true),
            (json!("x"), true),
            (json!([0]), true),
            (json!({"a": null}), true),
        ] {
            assert_eq!(Val::Ref(&v).truth(), want, "{v}");
        }
        assert!(!Val::Missing.truth());
    }

    #[test]
    fn numbers_compare_by_value_across_kinds() {
        let big = Num::Int(i128::from(u64::MAX));
        assert_eq!(cmp_num(Num::Int(2), Num::Float(2.0)), Some(Ordering::Equal));
        assert_eq!(cmp_num(Num::Int(2), Num::Float(2.5)), Some(Ordering::Less));
        assert_eq!(
            cmp_num(Num::Float(-2.5), Num::Int(-2)),
            Some(Ordering::Less)
        );
        assert_eq!(cmp_num(big, Num::Float(1e300)), Some(Ordering::Less));
        assert_eq!(
            cmp_num(Num::Int((1 << 53) + 1), Num::Float(9007199254740992.0)),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn type_names_are_go_names() {
        assert_eq!(type_name(&json!("a")), "string");
        assert_eq!(type_name(&json!(1)), "int");
        assert_eq!(type_name(&json!(1.5)), "float64");
        assert_eq!(type_name(&json!(u64::MAX)), "uint64");
        assert_eq!(type_name(&json!([])), "[]interface {}");
        assert_eq!(type_name(&json!({})), "map[string]interface {}");
        assert_eq!(Val::Missing.type_name(), "<nil>");
    }
}
