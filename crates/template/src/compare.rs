//! `eq`, `ne`, `lt`, `le`, `gt`, `ge` with Go's rules and messages (`text/template/funcs.go`).
//!
//! One deliberate difference: Go refuses to compare an int with a float ("incompatible types
//! for comparison"). Here numbers compare by value whatever their JSON spelling, because JSON
//! does not say whether `2` and `2.0` are different types, and ToolHive's data (decoded by
//! `encoding/json`) has only float64 numbers, where `eq .n 2` works.

use std::cmp::Ordering;

use serde_json::Value;

use crate::print::go_print;
use crate::value::{Num, Val, cmp_num, num};

/// The comparable kinds of Go's `basicKind`; arrays and objects are `Other`.
#[derive(Debug, PartialEq)]
enum Kind<'v> {
    Nil,
    Bool(bool),
    Num(Num),
    Str(&'v str),
    Other(&'v Value),
}

fn kind<'v>(v: &'v Val<'_>) -> Kind<'v> {
    match v.get() {
        None | Some(Value::Null) => Kind::Nil,
        Some(Value::Bool(b)) => Kind::Bool(*b),
        Some(Value::Number(n)) => Kind::Num(num(n)),
        Some(Value::String(s)) => Kind::Str(s),
        Some(other) => Kind::Other(other),
    }
}

/// `eq a b c…`: a == b || a == c || …
pub(crate) fn eq(args: &[Val<'_>]) -> Result<bool, String> {
    let Some((first, rest)) = args.split_first() else {
        return Err("missing argument for comparison".into());
    };
    if rest.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let a = kind(first);
    for other in rest {
        if equal(&a, first, &kind(other), other)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn equal(a: &Kind<'_>, av: &Val<'_>, b: &Kind<'_>, bv: &Val<'_>) -> Result<bool, String> {
    Ok(match (a, b) {
        (Kind::Nil, Kind::Nil) => true,
        // nil equals nothing else, and comparing with it is never an error.
        (Kind::Nil, _) | (_, Kind::Nil) => false,
        (Kind::Bool(x), Kind::Bool(y)) => x == y,
        (Kind::Num(x), Kind::Num(y)) => cmp_num(*x, *y) == Some(Ordering::Equal),
        (Kind::Str(x), Kind::Str(y)) => x == y,
        (Kind::Other(x), Kind::Other(y)) => {
            if std::mem::discriminant(*x) != std::mem::discriminant(*y) {
                return Err(format!(
                    "non-comparable types {}: {}, {}: {}",
                    go_print(x),
                    av.type_name(),
                    bv.type_name(),
                    go_print(y)
                ));
            }
            return Err(format!(
                "non-comparable type {}: {}",
                go_print(y),
                bv.type_name()
            ));
        }
        _ => return Err(incompatible(av, bv)),
    })
}

fn incompatible(a: &Val<'_>, b: &Val<'_>) -> String {
    format!(
        "incompatible types for comparison: {} and {}",
        a.type_name(),
        b.type_name()
    )
}

/// `ne a b`.
pub(crate) fn ne(a: &Val<'_>, b: &Val<'_>) -> Result<bool, String> {
    eq(&[a.clone(), b.clone()]).map(|e| !e)
}

/// `lt a b`: numbers and strings only.
pub(crate) fn lt(a: &Val<'_>, b: &Val<'_>) -> Result<bool, String> {
    let bad = || "invalid type for comparison".to_string();
    match (kind(a), kind(b)) {
        (Kind::Nil | Kind::Other(_), _) | (_, Kind::Nil | Kind::Other(_)) => Err(bad()),
        (Kind::Num(x), Kind::Num(y)) => Ok(cmp_num(x, y) == Some(Ordering::Less)),
        (Kind::Str(x), Kind::Str(y)) => Ok(x < y),
        (Kind::Bool(_), Kind::Bool(_)) => Err(bad()),
        _ => Err(incompatible(a, b)),
    }
}

/// `le a b`: lt or eq.
pub(crate) fn le(a: &Val<'_>, b: &Val<'_>) -> Result<bool, String> {
    if lt(a, b)? {
        return Ok(true);
    }
    eq(&[a.clone(), b.clone()])
}

/// `gt a b`: not le.
pub(crate) fn gt(a: &Val<'_>, b: &Val<'_>) -> Result<bool, String> {
    le(a, b).map(|x| !x)
}

/// `ge a b`: not lt.
pub(crate) fn ge(a: &Val<'_>, b: &Val<'_>) -> Result<bool, String> {
    lt(a, b).map(|x| !x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(j: Value) -> Val<'static> {
        Val::owned(j)
    }

    #[test]
    fn eq_compares_basic_kinds_and_nil() {
        assert_eq!(eq(&[v(json!(1)), v(json!(2)), v(json!(1))]), Ok(true));
        assert_eq!(eq(&[v(json!("xy")), v(json!("xyz"))]), Ok(false));
        assert_eq!(eq(&[v(json!(2)), v(json!(2.0))]), Ok(true));
        assert_eq!(eq(&[Val::Missing, v(json!(null))]), Ok(true));
        assert_eq!(eq(&[Val::Missing, v(json!("x"))]), Ok(false));
        assert_eq!(eq(&[v(json!({"a": 1})), Val::Missing]), Ok(false));
        assert_eq!(
            eq(&[v(json!(1))]).err().as_deref(),
            Some("missing argument for comparison")
        );
    }

    #[test]
    fn eq_errors_like_go() {
        assert_eq!(
            eq(&[v(json!("xy")), v(json!(1))]).err().as_deref(),
            Some("incompatible types for comparison: string and int")
        );
        assert_eq!(
            eq(&[v(json!([1])), v(json!([1]))]).err().as_deref(),
            Some("non-comparable type [1]: []interface {}")
        );
        assert_eq!(
            eq(&[v(json!([1])), v(json!({}))]).err().as_deref(),
            Some("non-comparable types [1]: []interface {}, map[string]interface {}: map[]")
        );
        assert_eq!(
            eq(&[v(json!({})), v(json!("x"))]).err().as_deref(),
            Some("incompatible types for comparison: map[string]interface {} and string")
        );
    }

    #[test]
    fn ordering() {
        assert_eq!(lt(&v(json!(1)), &v(json!(2))), Ok(true));
        assert_eq!(lt(&v(json!(1.5)), &v(json!(1))), Ok(false));
        assert_eq!(lt(&v(json!("xy")), &v(json!("xyz"))), Ok(true));
        assert_eq!(le(&v(json!(2)), &v(json!(2.0))), Ok(true));
        assert_eq!(gt(&v(json!(2)), &v(json!(1))), Ok(true));
        assert_eq!(ge(&v(json!("a")), &v(json!("b"))), Ok(false));
        assert_eq!(
            lt(&v(json!(true)), &v(json!(true))).err().as_deref(),
            Some("invalid type for comparison")
        );
        assert_eq!(
            lt(&Val::Missing, &v(json!(1))).err().as_deref(),
            Some("invalid type for comparison")
        );
        assert_eq!(
            lt(&v(json!(1)), &v(json!("1"))).err().as_deref(),
            Some("incompatible types for comparison: int and string")
        );
    }
}
