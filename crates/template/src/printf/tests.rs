//! `printf` expectations taken from Go's `fmt` documentation and `fmt_test.go`; they also cover
//! the per-type formatting in `format`.

use super::*;
use serde_json::json;

fn f(format: &str, args: &[Value]) -> String {
    let vals: Vec<Val<'_>> = args.iter().map(Val::Ref).collect();
    match sprintf(format, &vals) {
        Ok(s) => s,
        Err(e) => panic!("{format}: {e}"),
    }
}

fn with_nil(format: &str) -> String {
    sprintf(format, &[Val::Missing]).unwrap_or_default()
}

#[test]
fn integers() {
    for (fmt, v, want) in [
        ("%d", json!(12345), "12345"),
        ("%v", json!(-12345), "-12345"),
        ("%5d", json!(12), "   12"),
        ("%-5d|", json!(12), "12   |"),
        ("%05d", json!(12), "00012"),
        ("%05d", json!(-12), "-0012"),
        ("%+d", json!(12), "+12"),
        ("% d", json!(12), " 12"),
        ("%.3d", json!(7), "007"),
        ("%6.2d", json!(7), "    07"),
        ("%.0d", json!(0), ""),
        ("%x", json!(255), "ff"),
        ("%X", json!(255), "FF"),
        ("%#x", json!(255), "0xff"),
        ("%x", json!(-255), "-ff"),
        ("%o", json!(8), "10"),
        ("%#o", json!(8), "010"),
        ("%O", json!(8), "0o10"),
        ("%b", json!(5), "101"),
        ("%#b", json!(5), "0b101"),
        ("%c", json!(120), "x"),
        ("%q", json!(120), "'x'"),
        ("%+q", json!(0x263a), "'\\u263a'"),
        ("%U", json!(0x263a), "U+263A"),
        ("%#U", json!(0x263a), "U+263A '☺'"),
        ("%d", json!(u64::MAX), "18446744073709551615"),
        ("%x", json!(i64::MIN), "-8000000000000000"),
    ] {
        assert_eq!(f(fmt, &[v]), want, "{fmt}");
    }
}

#[test]
fn floats() {
    for (fmt, v, want) in [
        ("%v", json!(456.0), "456"),
        ("%v", json!(1e21), "1e+21"),
        ("%v", json!(1000000.0), "1e+06"),
        ("%f", json!(1.0), "1.000000"),
        ("%.2f", json!(1.23456), "1.23"),
        ("%F", json!(3.5), "3.500000"),
        ("%e", json!(1234.5678), "1.234568e+03"),
        ("%E", json!(1234.5678), "1.234568E+03"),
        ("%g", json!(1234.5678), "1234.5678"),
        ("%g", json!(3.5), "3.5"),
        ("%G", json!(1e-7), "1E-07"),
        ("%.3g", json!(100.0), "100"),
        ("%8.3f", json!(1.23456), "   1.235"),
        ("%-8.3f|", json!(1.23456), "1.235   |"),
        ("%08.3f", json!(1.23456), "0001.235"),
        ("%08.3f", json!(-1.23456), "-001.235"),
        ("%+.3f", json!(1.23456), "+1.235"),
        ("% .3f", json!(1.0), " 1.000"),
        ("%#g", json!(1.0), "1.00000"),
        ("%#.3g", json!(1.0), "1.00"),
        ("%#g", json!(1e6), "1.00000e+06"),
        ("%#.0f", json!(1.0), "1."),
        ("%#.0e", json!(1.0), "1.e+00"),
        ("%d", json!(1.5), "%!d(float64=1.5)"),
        ("%x", json!(1.5), "%!x(float64=1.5)"),
    ] {
        assert_eq!(f(fmt, &[v]), want, "{fmt}");
    }
}

#[test]
fn strings() {
    for (fmt, v, want) in [
        ("%s", "abc", "abc"),
        ("%v", "abc", "abc"),
        ("%5s", "abc", "  abc"),
        ("%-5s|", "abc", "abc  |"),
        ("%05s", "abc", "00abc"),
        ("%.2s", "abc", "ab"),
        ("%5.1s", "abc", "    a"),
        ("%5s", "é", "    é"),
        ("%.1s", "日本", "日"),
        ("%x", "xyz", "78797a"),
        ("%X", "xyz", "78797A"),
        ("% x", "xyz", "78 79 7a"),
        ("%#x", "xyz", "0x78797a"),
        ("%# x", "xyz", "0x78 0x79 0x7a"),
        ("%q", "abc", "\"abc\""),
        ("%q", "\"", "\"\\\"\""),
        ("%#q", "abc", "`abc`"),
        ("%#q", "`", "\"`\""),
        ("%q", "☺", "\"☺\""),
        ("%+q", "☺", "\"\\u263a\""),
        ("%#v", "abc", "\"abc\""),
        ("%d", "abc", "%!d(string=abc)"),
        ("%5d", "abc", "%!d(string=  abc)"),
    ] {
        assert_eq!(f(fmt, &[json!(v)]), want, "{fmt}");
    }
}

#[test]
fn bools_nil_and_types() {
    assert_eq!(
        f("%t %v %5t", &[json!(true), json!(false), json!(true)]),
        "true false  true"
    );
    assert_eq!(f("%d", &[json!(true)]), "%!d(bool=true)");
    assert_eq!(with_nil("%v"), "<nil>");
    assert_eq!(with_nil("%6v"), " <nil>");
    assert_eq!(with_nil("%d"), "%!d(<nil>)");
    assert_eq!(with_nil("%s"), "%!s(<nil>)");
    assert_eq!(with_nil("%T"), "<nil>");
    assert_eq!(
        f(
            "%T %T %T %T %T %T",
            &[
                json!(1),
                json!(1.5),
                json!("s"),
                json!(true),
                json!([]),
                json!({})
            ]
        ),
        "int float64 string bool []interface {} map[string]interface {}"
    );
}

#[test]
fn arrays_and_objects_apply_the_verb_to_elements() {
    assert_eq!(
        f("%v", &[json!([1, "a", null, [true]])]),
        "[1 a <nil> [true]]"
    );
    assert_eq!(f("%d", &[json!([1, 2])]), "[1 2]");
    assert_eq!(f("%5d", &[json!([1, 2])]), "[    1     2]");
    assert_eq!(f("%q", &[json!(["a", "b"])]), "[\"a\" \"b\"]");
    assert_eq!(f("%s", &[json!([1])]), "[%!s(int=1)]");
    assert_eq!(f("%x", &[json!(["ab"])]), "[6162]");
    assert_eq!(
        f("%v", &[json!({"b": 2, "a": {"c": [1]}})]),
        "map[a:map[c:[1]] b:2]"
    );
    assert_eq!(f("%d", &[json!({"a": 1})]), "map[%!d(string=a):1]");
    assert_eq!(
        f("%#v", &[json!([1, "a", null])]),
        "[]interface {}{1, \"a\", interface {}(nil)}"
    );
    assert_eq!(
        f("%#v", &[json!({"a": 1, "b": "x"})]),
        "map[string]interface {}{\"a\":1, \"b\":\"x\"}"
    );
    assert_eq!(f("%#v", &[json!(u64::MAX)]), "0xffffffffffffffff");
}

#[test]
fn format_errors_are_in_band() {
    assert_eq!(f("%d %d", &[json!(1)]), "1 %!d(MISSING)");
    assert_eq!(f("%d", &[json!(1), json!(2)]), "1%!(EXTRA int=2)");
    assert_eq!(
        f("hi", &[json!(1), json!("x")]),
        "hi%!(EXTRA int=1, string=x)"
    );
    assert_eq!(
        sprintf("hi", &[Val::Missing]).ok().as_deref(),
        Some("hi%!(EXTRA <nil>)")
    );
    assert_eq!(f("%", &[]), "%!(NOVERB)");
    assert_eq!(f("%!", &[]), "%!!(MISSING)");
    assert_eq!(f("%z", &[json!(1)]), "%!z(int=1)");
    assert_eq!(f("100%%", &[]), "100%");
    assert_eq!(f("%5%", &[]), "%");
}

#[test]
fn star_widths_and_argument_indexes() {
    assert_eq!(f("%*d", &[json!(5), json!(12)]), "   12");
    assert_eq!(f("%-*d|", &[json!(5), json!(12)]), "12   |");
    assert_eq!(f("%*d|", &[json!(-5), json!(12)]), "12   |");
    assert_eq!(f("%.*d", &[json!(3), json!(7)]), "007");
    assert_eq!(f("%*d", &[json!("x"), json!(1)]), "%!(BADWIDTH)1");
    assert_eq!(f("%.*d", &[json!(-1), json!(7)]), "%!(BADPREC)7");
    assert_eq!(f("%[2]d %[1]d", &[json!(1), json!(2)]), "2 1");
    assert_eq!(f("%[3]d", &[json!(1), json!(2)]), "%!d(BADINDEX)");
    assert_eq!(f("%[1]d %d", &[json!(5), json!(6)]), "5 6");
    // Go gives up on numbers past a million once a further digit follows.
    assert_eq!(f("%99999999d", &[json!(1)]), "%!(NOVERB)%!(EXTRA int=1)");
    assert_eq!(f("%9999999d", &[json!(1)]).len(), 9_999_999);
}

#[test]
fn huge_results_are_refused() {
    let big = Value::String("x".repeat(crate::MAX_OUTPUT_BYTES));
    let vals = [Val::Ref(&big), Val::Ref(&big)];
    assert_eq!(
        sprintf("%s%s", &vals).err().as_deref(),
        Some("result exceeds 10 MiB")
    );
}
