use super::*;
use serde_json::json;

fn run(name: &str, args: &[Value]) -> Result<Value, String> {
    let vals = args.iter().map(Val::Ref).collect();
    match call(name, vals) {
        Ok(v) => Ok(v.get().cloned().unwrap_or(json!("<missing>"))),
        Err(FuncError::Plain(m)) => Err(m),
        Err(FuncError::Call(m)) => Err(format!("error calling {name}: {m}")),
    }
}

#[test]
fn builtin_names_and_arity() {
    for name in [
        "and", "or", "not", "len", "index", "slice", "eq", "ne", "lt", "le", "gt", "ge", "print",
        "printf",
    ] {
        assert!(is_builtin(name), "{name}");
    }
    for name in [
        "println", "html", "js", "urlquery", "call", "json", "quote", "fromJson",
    ] {
        assert!(is_builtin(name), "{name}");
    }
    assert!(!is_builtin("foo"));
    assert!(!is_builtin("toJson"));
    assert_eq!(
        check_arity("not", 2).err().as_deref(),
        Some("wrong number of args for not: want 1 got 2")
    );
    assert_eq!(
        check_arity("index", 0).err().as_deref(),
        Some("wrong number of args for index: want at least 1 got 0")
    );
    assert_eq!(
        check_arity("lt", 1).err().as_deref(),
        Some("wrong number of args for lt: want 2 got 1")
    );
    assert!(check_arity("print", 0).is_ok());
    assert!(check_arity("eq", 5).is_ok());
}

#[test]
fn len_index_slice() {
    assert_eq!(run("len", &[json!("héllo")]), Ok(json!(6)));
    assert_eq!(run("len", &[json!([1, 2])]), Ok(json!(2)));
    assert_eq!(run("len", &[json!({"a": 1})]), Ok(json!(1)));
    assert_eq!(
        run("len", &[json!(3)]),
        Err("error calling len: len of type int".into())
    );
    assert_eq!(
        run("len", &[json!(null)]),
        Err("error calling len: len of nil pointer".into())
    );

    let smsi = json!([{"one": 1}, {"eleven": 11}]);
    assert_eq!(
        run("index", &[smsi.clone(), json!(1), json!("eleven")]),
        Ok(json!(11))
    );
    assert_eq!(run("index", std::slice::from_ref(&smsi)), Ok(smsi.clone()));
    assert_eq!(
        run("index", &[smsi.clone(), json!(0), json!("nope")]),
        Ok(json!("<missing>"))
    );
    assert_eq!(run("index", &[json!("hi"), json!(1)]), Ok(json!(105)));
    assert_eq!(
        run("index", &[json!("hi"), json!(5)]),
        Err("error calling index: index out of range: 5".into())
    );
    assert_eq!(
        run("index", &[json!([3]), json!(10)]),
        Err("error calling index: index out of range: 10".into())
    );
    assert_eq!(
        run("index", &[json!([3]), json!(-1)]),
        Err("error calling index: index out of range: -1".into())
    );
    assert_eq!(
        run("index", &[json!([3]), json!("x")]),
        Err("error calling index: cannot index slice/array with type string".into())
    );
    assert_eq!(
        run("index", &[json!([3]), json!(null)]),
        Err("error calling index: cannot index slice/array with nil".into())
    );
    assert_eq!(
        run("index", &[json!([3]), json!(0.0)]),
        Err("error calling index: cannot index slice/array with type float64".into())
    );
    assert_eq!(
        run("index", &[json!({"a": 1}), json!(10)]),
        Err("error calling index: value has type int; should be string".into())
    );
    assert_eq!(
        run("index", &[json!(null), json!(1)]),
        Err("error calling index: index of untyped nil".into())
    );
    assert_eq!(
        run("index", &[json!({"a": null}), json!("a"), json!("b")]),
        Err("error calling index: index of nil pointer".into())
    );
    assert_eq!(
        run("index", &[json!(true), json!(1)]),
        Err("error calling index: can't index item of type bool".into())
    );

    let si = json!([3, 4, 5]);
    assert_eq!(
        run("slice", std::slice::from_ref(&si)),
        Ok(json!([3, 4, 5]))
    );
    assert_eq!(run("slice", &[si.clone(), json!(1)]), Ok(json!([4, 5])));
    assert_eq!(
        run("slice", &[si.clone(), json!(1), json!(2)]),
        Ok(json!([4]))
    );
    assert_eq!(
        run("slice", &[si.clone(), json!(1), json!(2), json!(3)]),
        Ok(json!([4]))
    );
    assert_eq!(
        run("slice", &[si.clone(), json!(2), json!(1)]),
        Err("error calling slice: invalid slice index: 2 > 1".into())
    );
    assert_eq!(
        run("slice", &[si.clone(), json!(4), json!(5)]),
        Err("error calling slice: index out of range: 4".into())
    );
    assert_eq!(
        run("slice", &[si.clone(), json!(2), json!(2), json!(1)]),
        Err("error calling slice: invalid slice index: 2 > 1".into())
    );
    assert_eq!(
        run("slice", &[json!("xyz"), json!(1), json!(2)]),
        Ok(json!("y"))
    );
    assert_eq!(
        run("slice", &[json!("xyz"), json!(1), json!(2), json!(2)]),
        Err("error calling slice: cannot 3-index slice a string".into())
    );
    assert_eq!(run("slice", &[json!("é"), json!(1)]), Ok(json!("\u{FFFD}")));
    assert_eq!(
        run("slice", &[json!(1)]),
        Err("error calling slice: can't slice item of type int".into())
    );
    assert_eq!(
        run("slice", &[json!(null)]),
        Err("error calling slice: slice of untyped nil".into())
    );
}

#[test]
fn toolhive_functions() {
    assert_eq!(
        run("json", &[json!({"b": [1, 2.5], "a": "<x>"})]),
        Ok(json!(r#"{"a":"\u003cx\u003e","b":[1,2.5]}"#))
    );
    assert_eq!(run("json", &[json!(null)]), Ok(json!("null")));
    assert_eq!(run("quote", &[json!("a\"b\n")]), Ok(json!("\"a\\\"b\\n\"")));
    assert_eq!(run("quote", &[json!(5)]), Ok(json!("\"5\"")));
    assert_eq!(run("quote", &[json!([1, "a"])]), Ok(json!("\"[1 a]\"")));
    assert_eq!(
        run("fromJson", &[json!("{\"a\":[1,true]}")]),
        Ok(json!({"a": [1, true]}))
    );
    assert_eq!(run("fromJson", &[json!("null")]), Ok(json!(null)));
    let bad = run("fromJson", &[json!("{oops")]).err().unwrap_or_default();
    assert!(bad.starts_with("fromJson: key must be a string"), "{bad}");
    assert_eq!(
        run("fromJson", &[json!(1)]),
        Err("wrong type for value; expected string; got int".into())
    );
    assert_eq!(
        run("fromJson", &[json!(null)]),
        Err("invalid value; expected string".into())
    );
}

#[test]
fn printing_and_escaping_functions() {
    assert_eq!(
        run("print", &[json!(1), json!(2), json!("a"), json!(null)]),
        Ok(json!("1 2a<nil>"))
    );
    assert_eq!(run("println", &[json!(1), json!("a")]), Ok(json!("1 a\n")));
    assert_eq!(
        run("printf", &[json!("%d-%s"), json!(1), json!("a")]),
        Ok(json!("1-a"))
    );
    assert_eq!(
        run("printf", &[json!(1)]),
        Err("wrong type for value; expected string; got int".into())
    );
    assert_eq!(run("html", &[json!("<a>")]), Ok(json!("&lt;a&gt;")));
    assert_eq!(run("html", &[json!(null)]), Ok(json!("&lt;no value&gt;")));
    assert_eq!(run("html", &[json!(1), json!(2)]), Ok(json!("1 2")));
    assert_eq!(
        run("js", &[json!("It'd be nice.")]),
        Ok(json!("It\\'d be nice."))
    );
    assert_eq!(run("urlquery", &[json!("a b")]), Ok(json!("a+b")));
    assert_eq!(run("not", &[json!(0)]), Ok(json!(true)));
    assert_eq!(
        run("call", &[json!(1)]),
        Err("error calling call: call is not supported: no function values in data".into())
    );
}
