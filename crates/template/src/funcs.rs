//! The built-in functions: Go's (`and`, `or`, `not`, `len`, `index`, `slice`, the comparisons,
//! `print`, `printf`, `println`, `html`, `js`, `urlquery`, `call`) and ToolHive's (`json`,
//! `quote`, `fromJson`). `and` and `or` short-circuit, so `exec` evaluates them itself.
//!
//! ToolHive's three, as its `template_expander.go` defines them: `json` is `json.Marshal` (see
//! `json`), `fromJson` is `json.Unmarshal` of a string argument, `quote` is `%q`. One
//! deliberate difference: ToolHive's `quote` takes only a string; here any value is quoted in
//! its `%v` form (`quote 5` gives `"5"`, a missing value `"<nil>"`), which is what a config
//! author means and cannot break a working template.
//!
//! `call` exists so templates that mention it parse, but JSON holds no functions, so it always
//! fails.
//!
//! Every string a function returns is held to [`MAX_OUTPUT_BYTES`], so a template cannot grow
//! a value without bound by feeding results back through variables.

use serde_json::Value;

use crate::MAX_OUTPUT_BYTES;
use crate::compare;
use crate::escape::{html_escape, js_escape, quote, url_query_escape};
use crate::json::marshal;
use crate::print::{eval_args, go_print, sprint, sprintln};
use crate::printf::sprintf;
use crate::value::{Num, Val, num, type_name};

/// Function names the parser accepts (Go reports unknown names at parse time).
const BUILTINS: &[&str] = &[
    "and", "call", "eq", "fromJson", "ge", "gt", "html", "index", "js", "json", "le", "len", "lt",
    "ne", "not", "or", "print", "printf", "println", "quote", "slice", "urlquery",
];

pub(crate) fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
}

/// Why a call failed: `Plain` messages stand alone (argument checks, as Go reports them),
/// `Call` messages get Go's "error calling NAME: " prefix.
#[derive(Debug)]
pub(crate) enum FuncError {
    Plain(String),
    Call(String),
}

/// Go checks argument counts against the function's signature when calling.
pub(crate) fn check_arity(name: &str, got: usize) -> Result<(), String> {
    let (min, max) = match name {
        "not" | "len" | "json" | "quote" | "fromJson" => (1, Some(1)),
        "ne" | "lt" | "le" | "gt" | "ge" => (2, Some(2)),
        "print" | "println" | "html" | "js" | "urlquery" => (0, None),
        _ => (1, None),
    };
    match max {
        Some(max) if got != max => Err(format!(
            "wrong number of args for {name}: want {max} got {got}"
        )),
        None if got < min => Err(format!(
            "wrong number of args for {name}: want at least {min} got {got}"
        )),
        _ => Ok(()),
    }
}

/// Calls built-in `name` (anything but `and`/`or`) with evaluated arguments; the count has
/// been checked.
pub(crate) fn call<'a>(name: &str, args: Vec<Val<'a>>) -> Result<Val<'a>, FuncError> {
    let plain = FuncError::Plain;
    let failed = FuncError::Call;
    let first = args.first().cloned().unwrap_or(Val::Missing);
    let second = args.get(1).cloned().unwrap_or(Val::Missing);
    let rest = args.get(1..).unwrap_or(&[]);
    match name {
        "not" => Ok(Val::bool(!first.truth())),
        "len" => length(&first).map(|n| Val::int(n as i64)).map_err(failed),
        "index" => index(first, rest).map_err(failed),
        "slice" => slice(&first, rest).map_err(failed),
        "eq" => compare::eq(&args).map(Val::bool).map_err(failed),
        "ne" => compare::ne(&first, &second).map(Val::bool).map_err(failed),
        "lt" => compare::lt(&first, &second).map(Val::bool).map_err(failed),
        "le" => compare::le(&first, &second).map(Val::bool).map_err(failed),
        "gt" => compare::gt(&first, &second).map(Val::bool).map_err(failed),
        "ge" => compare::ge(&first, &second).map(Val::bool).map_err(failed),
        "print" => string(sprint(&args).map_err(failed)?),
        "println" => string(sprintln(&args).map_err(failed)?),
        "printf" => {
            let format = expect_string(&first).map_err(plain)?;
            string(sprintf(format, rest).map_err(failed)?)
        }
        "html" => string(html_escape(&eval_args(&args).map_err(failed)?)),
        "js" => string(js_escape(&eval_args(&args).map_err(failed)?)),
        "urlquery" => string(url_query_escape(&eval_args(&args).map_err(failed)?)),
        "call" => Err(failed(
            "call is not supported: no function values in data".into(),
        )),
        "json" => string(marshal(first.get())),
        "quote" => string(quote(&match first.get() {
            Some(Value::String(s)) => s.clone(),
            None => "<nil>".into(),
            Some(v) => go_print(v),
        })),
        "fromJson" => {
            let text = expect_string(&first).map_err(plain)?;
            serde_json::from_str::<Value>(text)
                .map(Val::owned)
                .map_err(|e| plain(format!("fromJson: {e}")))
        }
        _ => Err(plain(format!("{name:?} is not a defined function"))),
    }
}

fn string<'a>(s: String) -> Result<Val<'a>, FuncError> {
    if s.len() > MAX_OUTPUT_BYTES {
        return Err(FuncError::Call("result exceeds 10 MiB".into()));
    }
    Ok(Val::str(s))
}

/// Go's `validateType` for a `string` parameter.
fn expect_string<'v>(v: &'v Val<'_>) -> Result<&'v str, String> {
    match v.get() {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err("invalid value; expected string".into()),
        Some(other) => Err(format!(
            "wrong type for value; expected string; got {}",
            type_name(other)
        )),
    }
}

/// `len`: bytes of a string, elements of an array or object.
fn length(v: &Val<'_>) -> Result<usize, String> {
    match v.get() {
        None | Some(Value::Null) => Err("len of nil pointer".into()),
        Some(Value::String(s)) => Ok(s.len()),
        Some(Value::Array(a)) => Ok(a.len()),
        Some(Value::Object(o)) => Ok(o.len()),
        Some(other) => Err(format!("len of type {}", type_name(other))),
    }
}

/// Go's `indexArg`: an integer in `0..=cap`.
fn index_arg(ix: &Val<'_>, cap: usize) -> Result<usize, String> {
    match ix.get() {
        None | Some(Value::Null) => Err("cannot index slice/array with nil".into()),
        Some(Value::Number(n)) => match num(n) {
            Num::Int(i) => match usize::try_from(i) {
                Ok(x) if x <= cap => Ok(x),
                _ => Err(format!("index out of range: {i}")),
            },
            Num::Float(_) => Err("cannot index slice/array with type float64".into()),
        },
        Some(other) => Err(format!(
            "cannot index slice/array with type {}",
            type_name(other)
        )),
    }
}

/// `index x 1 2` is `x[1][2]`: arrays and strings by integer, objects by string key; a
/// missing key gives no value.
fn index<'a>(item: Val<'a>, indexes: &[Val<'a>]) -> Result<Val<'a>, String> {
    if item.is_nil() {
        return Err("index of untyped nil".into());
    }
    let mut cur = item;
    for ix in indexes {
        let next = match cur.get() {
            None | Some(Value::Null) => return Err("index of nil pointer".into()),
            Some(Value::Array(a)) => {
                let x = index_arg(ix, a.len())?;
                if x >= a.len() {
                    return Err(format!("index out of range: {x}"));
                }
                cur.project(|v| v.get(x)).unwrap_or(Val::Missing)
            }
            Some(Value::String(s)) => {
                let x = index_arg(ix, s.len())?;
                match s.as_bytes().get(x) {
                    // Go indexes bytes and yields a uint8.
                    Some(&b) => Val::int(i64::from(b)),
                    None => return Err(format!("index out of range: {x}")),
                }
            }
            Some(Value::Object(_)) => {
                let key = match ix.get() {
                    Some(Value::String(k)) => k.clone(),
                    None | Some(Value::Null) => {
                        return Err("value is nil; should be of type string".into());
                    }
                    Some(other) => {
                        return Err(format!(
                            "value has type {}; should be string",
                            type_name(other)
                        ));
                    }
                };
                cur.project(|v| v.get(key.as_str())).unwrap_or(Val::Missing)
            }
            Some(other) => return Err(format!("can't index item of type {}", type_name(other))),
        };
        cur = next;
    }
    Ok(cur)
}

/// `slice x 1 2` is `x[1:2]`; strings are sliced by bytes (a cut inside a UTF-8 sequence
/// yields U+FFFD, where Go would keep the raw bytes).
fn slice<'a>(item: &Val<'a>, indexes: &[Val<'a>]) -> Result<Val<'a>, String> {
    if item.is_nil() {
        return Err("slice of untyped nil".into());
    }
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let len = match item.get() {
        Some(Value::String(s)) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            s.len()
        }
        Some(Value::Array(a)) => a.len(),
        other => {
            return Err(format!(
                "can't slice item of type {}",
                other.map_or("<nil>", type_name)
            ));
        }
    };
    let mut idx = [0, len, len];
    for (i, ix) in indexes.iter().enumerate() {
        idx[i] = index_arg(ix, len)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match item.get() {
        Some(Value::String(s)) => {
            Val::str(String::from_utf8_lossy(&s.as_bytes()[idx[0]..idx[1]]).into_owned())
        }
        Some(Value::Array(a)) => Val::owned(Value::Array(a[idx[0]..idx[1]].to_vec())),
        _ => Val::Missing,
    })
}

#[cfg(test)]
mod tests;
