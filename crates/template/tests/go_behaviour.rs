//! Expectations taken from Go's `text/template` documentation and `exec_test.go`, with Go's test
//! struct replaced by the JSON a workflow would hold. Cases Go needs methods or custom functions
//! for are left out; cases whose Go answer depends on static Go types are adapted (noted inline).

use serde_json::{Value, json};
use vmcp_template::Template;

/// Output, or `Err` with the parse or render error text.
fn render(src: &str, data: &Value) -> Result<String, String> {
    let t = Template::parse(src).map_err(|e| format!("parse: {e}"))?;
    t.render(data).map_err(|e| e.message)
}

/// Go's `tVal` as JSON.
fn tval() -> Value {
    json!({
        "True": true,
        "I": 17,
        "U16": 16,
        "X": "x",
        "S": "xyz",
        "FloatZero": 0.0,
        "U": {"V": "v"},
        "SI": [3, 4, 5],
        "AI": [3, 4, 5],
        "SIEmpty": [],
        "SB": [true, false],
        "MSI": {"one": 1, "two": 2, "three": 3},
        "MSIone": {"one": 1},
        "MSIEmpty": {},
        "SMSI": [{"one": 1, "two": 2}, {"eleven": 11, "twelve": 12}],
        "Empty0": null,
        "Empty1": 3,
        "Empty2": "empty2",
        "Empty3": [7, 8],
        "Empty4": {"V": "UinEmpty"},
        "PSI": [21, 22, 23],
        "NIL": null,
    })
}

/// (name, template, expected output or None for an error), run against `tval()`.
const EXEC_TESTS: &[(&str, &str, Option<&str>)] = &[
    // Trivial cases.
    ("empty", "", Some("")),
    ("text", "some text", Some("some text")),
    ("nil action", "{{nil}}", None),
    // Fields of maps.
    (".X", "-{{.X}}-", Some("-x-")),
    (".U.V", "-{{.U.V}}-", Some("-v-")),
    ("map .one", "{{.MSI.one}}", Some("1")),
    ("map .two", "{{.MSI.two}}", Some("2")),
    ("map .NO", "{{.MSI.NO}}", Some("<no value>")),
    ("map .WRONG args", "{{.MSI.one 1}}", None),
    // Variables.
    ("$.I", "{{$.I}}", Some("17")),
    ("$.U.V", "{{$.U.V}}", Some("v")),
    ("declare in action", "{{$x := $.U.V}}{{$x}}", Some("v")),
    // Nil and empty interfaces (JSON null and values).
    ("NIL", "{{.NIL}}", Some("<no value>")),
    ("empty nil", "{{.Empty0}}", Some("<no value>")),
    ("empty with int", "{{.Empty1}}", Some("3")),
    ("empty with string", "{{.Empty2}}", Some("empty2")),
    ("empty with slice", "{{.Empty3}}", Some("[7 8]")),
    ("empty with struct", "{{.Empty4}}", Some("map[V:UinEmpty]")),
    (
        "empty with struct, field",
        "{{.Empty4.V}}",
        Some("UinEmpty"),
    ),
    ("*[]int", "{{.PSI}}", Some("[21 22 23]")),
    ("*[]int[1]", "{{index .PSI 1}}", Some("22")),
    // Pipelines and parentheses.
    (
        "parens in pipeline",
        "{{printf `%d %d %d` (1) (len .SI) (index .SI 2)}}",
        Some("1 3 5"),
    ),
    ("parens: $ in paren", "{{($).X}}", Some("x")),
    (
        "parens: $ in paren in pipe",
        "{{($ | print | printf \"%.4s\")}}",
        Some("map["),
    ),
    (
        "parens: field of index",
        "{{(index .SMSI 1).eleven}}",
        Some("11"),
    ),
    (
        "pipeline last arg",
        "{{\"aaa\" | printf \"%s-%s\" \"bbb\"}}",
        Some("bbb-aaa"),
    ),
    // If.
    ("if true", "{{if true}}TRUE{{end}}", Some("TRUE")),
    (
        "if false",
        "{{if false}}TRUE{{else}}FALSE{{end}}",
        Some("FALSE"),
    ),
    ("if nil", "{{if nil}}TRUE{{end}}", None),
    (
        "if 1",
        "{{if 1}}NON-ZERO{{else}}ZERO{{end}}",
        Some("NON-ZERO"),
    ),
    ("if 0", "{{if 0}}NON-ZERO{{else}}ZERO{{end}}", Some("ZERO")),
    (
        "if 1.5",
        "{{if 1.5}}NON-ZERO{{else}}ZERO{{end}}",
        Some("NON-ZERO"),
    ),
    (
        "if 0.0",
        "{{if .FloatZero}}NON-ZERO{{else}}ZERO{{end}}",
        Some("ZERO"),
    ),
    (
        "if nilPointer",
        "{{if .NIL}}NON-ZERO{{else}}ZERO{{end}}",
        Some("ZERO"),
    ),
    (
        "if emptystring",
        "{{if ``}}NON-EMPTY{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "if string",
        "{{if `notempty`}}NON-EMPTY{{else}}EMPTY{{end}}",
        Some("NON-EMPTY"),
    ),
    (
        "if emptyslice",
        "{{if .SIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "if slice",
        "{{if .SI}}NON-EMPTY{{else}}EMPTY{{end}}",
        Some("NON-EMPTY"),
    ),
    (
        "if emptymap",
        "{{if .MSIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "if map",
        "{{if .MSI}}NON-EMPTY{{else}}EMPTY{{end}}",
        Some("NON-EMPTY"),
    ),
    (
        "if map unset",
        "{{if .MSI.none}}NON-ZERO{{else}}ZERO{{end}}",
        Some("ZERO"),
    ),
    (
        "if map not unset",
        "{{if not .MSI.none}}ZERO{{else}}NON-ZERO{{end}}",
        Some("ZERO"),
    ),
    (
        "if $x with $y int",
        "{{if $x := true}}{{with $y := .I}}{{$x}},{{$y}}{{end}}{{end}}",
        Some("true,17"),
    ),
    (
        "if $x with $x int",
        "{{if $x := true}}{{with $x := .I}}{{$x}},{{end}}{{$x}}{{end}}",
        Some("17,true"),
    ),
    (
        "if else if",
        "{{if false}}FALSE{{else if true}}TRUE{{end}}",
        Some("TRUE"),
    ),
    (
        "if else chain",
        "{{if eq 1 3}}1{{else if eq 2 3}}2{{else if eq 3 3}}3{{end}}",
        Some("3"),
    ),
    // Print etc.
    ("print", "{{print \"hello, print\"}}", Some("hello, print")),
    ("print 123", "{{print 1 2 3}}", Some("1 2 3")),
    ("print nil", "{{print nil}}", Some("<nil>")),
    ("print missing", "{{print .Unknown}}", Some("<nil>")),
    ("println", "{{println 1 2 3}}", Some("1 2 3\n")),
    ("printf int", "{{printf \"%04x\" 127}}", Some("007f")),
    ("printf float", "{{printf \"%g\" 3.5}}", Some("3.5")),
    (
        "printf string",
        "{{printf \"%s\" \"hello\"}}",
        Some("hello"),
    ),
    ("printf field", "{{printf \"%s\" .U.V}}", Some("v")),
    (
        "printf dot",
        "{{with .I}}{{printf \"%d\" .}}{{end}}",
        Some("17"),
    ),
    (
        "printf var",
        "{{with $x := .I}}{{printf \"%d\" $x}}{{end}}",
        Some("17"),
    ),
    (
        "printf lots",
        "{{printf \"%d %s %g %s\" 127 \"hello\" 7.5 .X}}",
        Some("127 hello 7.5 x"),
    ),
    ("printf type", "{{printf \"%T\" 0xef}}", Some("int")),
    // HTML, JavaScript, URL query.
    (
        "html",
        "{{html \"<script>alert(\\\"XSS\\\");</script>\"}}",
        Some("&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;"),
    ),
    (
        "html pipeline",
        "{{printf \"<script>alert(\\\"XSS\\\");</script>\" | html}}",
        Some("&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;"),
    ),
    (
        "html untyped nil",
        "{{html .Empty0}}",
        Some("&lt;no value&gt;"),
    ),
    (
        "urlquery",
        "{{\"http://www.example.org/\"|urlquery}}",
        Some("http%3A%2F%2Fwww.example.org%2F"),
    ),
    // Booleans.
    ("not", "{{not true}} {{not false}}", Some("false true")),
    (
        "and",
        "{{and false 0}} {{and 1 0}} {{and 0 true}} {{and 1 1}}",
        Some("false 0 0 1"),
    ),
    (
        "or",
        "{{or 0 0}} {{or 1 0}} {{or 0 true}} {{or 1 1}}",
        Some("0 1 true 1"),
    ),
    ("or short-circuit", "{{or 0 1 (index .SI 10)}}", Some("1")),
    ("and short-circuit", "{{and 1 0 (index .SI 10)}}", Some("0")),
    ("or short-circuit2", "{{or 0 0 (index .SI 10)}}", None),
    ("and short-circuit2", "{{and 1 1 (index .SI 10)}}", None),
    ("and pipe-true", "{{1 | and 1}}", Some("1")),
    ("and pipe-false", "{{0 | and 1}}", Some("0")),
    ("or pipe-true", "{{1 | or 0}}", Some("1")),
    ("or pipe-false", "{{0 | or 0}}", Some("0")),
    ("and undef", "{{and 1 .Unknown}}", Some("<no value>")),
    ("or undef", "{{or 0 .Unknown}}", Some("<no value>")),
    (
        "boolean if",
        "{{if and true 1 `hi`}}TRUE{{else}}FALSE{{end}}",
        Some("TRUE"),
    ),
    (
        "boolean if not",
        "{{if and true 1 `hi` | not}}TRUE{{else}}FALSE{{end}}",
        Some("FALSE"),
    ),
    (
        "boolean if pipe",
        "{{if true | not | and 1}}TRUE{{else}}FALSE{{end}}",
        Some("FALSE"),
    ),
    // Indexing.
    ("slice[0]", "{{index .SI 0}}", Some("3")),
    ("slice[1]", "{{index .SI 1}}", Some("4")),
    ("slice[HUGE]", "{{index .SI 10}}", None),
    ("slice[WRONG]", "{{index .SI `hello`}}", None),
    ("slice[nil]", "{{index .SI nil}}", None),
    ("map[one]", "{{index .MSI `one`}}", Some("1")),
    ("map[two]", "{{index .MSI `two`}}", Some("2")),
    // Go prints the zero int for map[string]int; a JSON object holds interfaces: no value.
    ("map[NO]", "{{index .MSI `XXX`}}", Some("<no value>")),
    ("map[nil]", "{{index .MSI nil}}", None),
    ("map[``]", "{{index .MSI ``}}", Some("<no value>")),
    ("map[WRONG]", "{{index .MSI 10}}", None),
    ("double index", "{{index .SMSI 1 `eleven`}}", Some("11")),
    ("nil[1]", "{{index nil 1}}", None),
    (
        "index of an interface field",
        "{{index .Empty3 0}}",
        Some("7"),
    ),
    // Slicing.
    ("slice[:]", "{{slice .SI}}", Some("[3 4 5]")),
    ("slice[1:]", "{{slice .SI 1}}", Some("[4 5]")),
    ("slice[1:2]", "{{slice .SI 1 2}}", Some("[4]")),
    ("slice[-1:]", "{{slice .SI -1}}", None),
    ("slice[1:-2]", "{{slice .SI 1 -2}}", None),
    ("slice[1:2:-1]", "{{slice .SI 1 2 -1}}", None),
    ("slice[2:1]", "{{slice .SI 2 1}}", None),
    ("slice[2:2:1]", "{{slice .SI 2 2 1}}", None),
    ("out of range", "{{slice .SI 4 5}}", None),
    ("out of range 3", "{{slice .SI 2 2 5}}", None),
    ("array[:]", "{{slice .AI}}", Some("[3 4 5]")),
    ("string[:]", "{{slice .S}}", Some("xyz")),
    ("string[0:1]", "{{slice .S 0 1}}", Some("x")),
    ("string[1:]", "{{slice .S 1}}", Some("yz")),
    ("string[1:2]", "{{slice .S 1 2}}", Some("y")),
    ("string out of range", "{{slice .S 1 5}}", None),
    ("3-index slice of string", "{{slice .S 1 2 2}}", None),
    (
        "slice of an interface field",
        "{{slice .Empty3 0 1}}",
        Some("[7]"),
    ),
    // Len.
    ("len slice", "{{len .SI}}", Some("3")),
    ("len map", "{{len .MSI }}", Some("3")),
    ("len of int", "{{len 3}}", None),
    ("len of nothing", "{{len .Empty0}}", None),
    ("len of an interface field", "{{len .Empty3}}", Some("2")),
    // With.
    ("with true", "{{with true}}{{.}}{{end}}", Some("true")),
    (
        "with false",
        "{{with false}}{{.}}{{else}}FALSE{{end}}",
        Some("FALSE"),
    ),
    ("with 1", "{{with 1}}{{.}}{{else}}ZERO{{end}}", Some("1")),
    ("with 0", "{{with 0}}{{.}}{{else}}ZERO{{end}}", Some("ZERO")),
    (
        "with 1.5",
        "{{with 1.5}}{{.}}{{else}}ZERO{{end}}",
        Some("1.5"),
    ),
    (
        "with 0.0",
        "{{with .FloatZero}}{{.}}{{else}}ZERO{{end}}",
        Some("ZERO"),
    ),
    (
        "with emptystring",
        "{{with ``}}{{.}}{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "with string",
        "{{with `notempty`}}{{.}}{{else}}EMPTY{{end}}",
        Some("notempty"),
    ),
    (
        "with emptyslice",
        "{{with .SIEmpty}}{{.}}{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "with slice",
        "{{with .SI}}{{.}}{{else}}EMPTY{{end}}",
        Some("[3 4 5]"),
    ),
    (
        "with emptymap",
        "{{with .MSIEmpty}}{{.}}{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "with map",
        "{{with .MSIone}}{{.}}{{else}}EMPTY{{end}}",
        Some("map[one:1]"),
    ),
    (
        "with empty interface, struct field",
        "{{with .Empty4}}{{.V}}{{end}}",
        Some("UinEmpty"),
    ),
    ("with $x int", "{{with $x := .I}}{{$x}}{{end}}", Some("17")),
    (
        "with $x struct.U.V",
        "{{with $x := $}}{{$x.U.V}}{{end}}",
        Some("v"),
    ),
    (
        "with variable and action",
        "{{with $x := $}}{{$y := $.U.V}}{{$y}}{{end}}",
        Some("v"),
    ),
    (
        "with else with",
        "{{with 0}}{{.}}{{else with true}}{{.}}{{end}}",
        Some("true"),
    ),
    (
        "with else with chain",
        "{{with 0}}{{.}}{{else with false}}{{.}}{{else with `notempty`}}{{.}}{{end}}",
        Some("notempty"),
    ),
    (
        "with else keeps outer dot",
        "{{with .Unknown}}{{.}}{{else}}{{.X}}{{end}}",
        Some("x"),
    ),
    // Range.
    (
        "range []int",
        "{{range .SI}}-{{.}}-{{end}}",
        Some("-3--4--5-"),
    ),
    (
        "range empty no else",
        "{{range .SIEmpty}}-{{.}}-{{end}}",
        Some(""),
    ),
    (
        "range []int else",
        "{{range .SI}}-{{.}}-{{else}}EMPTY{{end}}",
        Some("-3--4--5-"),
    ),
    (
        "range empty else",
        "{{range .SIEmpty}}-{{.}}-{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "range []int break else",
        "{{range .SI}}-{{.}}-{{break}}NOTREACHED{{else}}EMPTY{{end}}",
        Some("-3-"),
    ),
    (
        "range []int continue else",
        "{{range .SI}}-{{.}}-{{continue}}NOTREACHED{{else}}EMPTY{{end}}",
        Some("-3--4--5-"),
    ),
    (
        "range []bool",
        "{{range .SB}}-{{.}}-{{end}}",
        Some("-true--false-"),
    ),
    (
        "range map",
        "{{range .MSI}}-{{.}}-{{end}}",
        Some("-1--3--2-"),
    ),
    (
        "range empty map no else",
        "{{range .MSIEmpty}}-{{.}}-{{end}}",
        Some(""),
    ),
    (
        "range map else",
        "{{range .MSI}}-{{.}}-{{else}}EMPTY{{end}}",
        Some("-1--3--2-"),
    ),
    (
        "range empty map else",
        "{{range .MSIEmpty}}-{{.}}-{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "range empty interface",
        "{{range .Empty3}}-{{.}}-{{else}}EMPTY{{end}}",
        Some("-7--8-"),
    ),
    (
        "range empty nil",
        "{{range .Empty0}}-{{.}}-{{end}}",
        Some(""),
    ),
    (
        "range missing else",
        "{{range .Unknown}}-{{.}}-{{else}}EMPTY{{end}}",
        Some("EMPTY"),
    ),
    (
        "range $x SI",
        "{{range $x := .SI}}<{{$x}}>{{end}}",
        Some("<3><4><5>"),
    ),
    (
        "range $x $y SI",
        "{{range $x, $y := .SI}}<{{$x}}={{$y}}>{{end}}",
        Some("<0=3><1=4><2=5>"),
    ),
    (
        "range $x MSIone",
        "{{range $x := .MSIone}}<{{$x}}>{{end}}",
        Some("<1>"),
    ),
    (
        "range $x $y MSIone",
        "{{range $x, $y := .MSIone}}<{{$x}}={{$y}}>{{end}}",
        Some("<one=1>"),
    ),
    (
        "range $x PSI",
        "{{range $x := .PSI}}<{{$x}}>{{end}}",
        Some("<21><22><23>"),
    ),
    (
        "declare in range",
        "{{range $x := .PSI}}<{{$foo:=$x}}{{$x}}>{{end}}",
        Some("<21><22><23>"),
    ),
    (
        "range 5",
        "{{range $v := 5}}{{printf \"%T%d\" $v $v}}{{end}}",
        Some("int0int1int2int3int4"),
    ),
    (
        "range int data",
        "{{range .I}}{{end}}{{range $i := .U16}}{{$i}}{{end}}",
        Some("0123456789101112131415"),
    ),
    (
        "range 0 else",
        "{{range 0}}x{{else}}empty{{end}}",
        Some("empty"),
    ),
    ("range int two vars", "{{range $i, $v := 5}}{{end}}", None),
    ("range string", "{{range .X}}{{end}}", None),
    ("range float", "{{range 1.5}}{{end}}", None),
    (
        "break in nested if",
        "{{range .SI}}{{if eq . 4}}{{break}}{{end}}{{.}}{{end}}",
        Some("3"),
    ),
    (
        "continue in nested with",
        "{{range .SI}}{{with eq . 4}}{{continue}}{{end}}{{.}}{{end}}",
        Some("35"),
    ),
    (
        "break inner loop only",
        "{{range .SI}}{{range $.SB}}{{break}}{{end}}{{.}}{{end}}",
        Some("345"),
    ),
    // Cute examples.
    (
        "or as if true",
        "{{or .SI \"slice is empty\"}}",
        Some("[3 4 5]"),
    ),
    (
        "or as if false",
        "{{or .SIEmpty \"slice is empty\"}}",
        Some("slice is empty"),
    ),
    // Numbers.
    ("decimal", "{{print 1234}}", Some("1234")),
    ("decimal _", "{{print 12_34}}", Some("1234")),
    ("binary", "{{print 0b101}}", Some("5")),
    ("binary _", "{{print 0b_1_0_1}}", Some("5")),
    ("BINARY", "{{print 0B101}}", Some("5")),
    ("octal0", "{{print 0377}}", Some("255")),
    ("octal", "{{print 0o377}}", Some("255")),
    ("octal _", "{{print 0o_3_7_7}}", Some("255")),
    ("OCTAL", "{{print 0O377}}", Some("255")),
    ("hex", "{{print 0x123}}", Some("291")),
    ("hex _", "{{print 0x1_23}}", Some("291")),
    ("HEX", "{{print 0X123ABC}}", Some("1194684")),
    ("float", "{{print 123.4}}", Some("123.4")),
    ("float _", "{{print 0_0_1_2_3.4}}", Some("123.4")),
    ("hex float", "{{print +0x1.ep+2}}", Some("7.5")),
    ("hex float _", "{{print +0x_1.e_0p+0_2}}", Some("7.5")),
    ("HEX float", "{{print +0X1.EP+2}}", Some("7.5")),
    (
        "print multi",
        "{{print 1_2_3_4 7.5_00_00_00}}",
        Some("1234 7.5"),
    ),
    (
        "print multi2",
        "{{print 1234 0x0_1.e_0p+02}}",
        Some("1234 7.5"),
    ),
    ("float exponent literal", "{{print 1e9}}", Some("1e+09")),
    ("char literal", "{{print 'a'}}", Some("97")),
    (
        "uint overflow literal",
        "{{print 18446744073709551615}}",
        None,
    ),
    // Fixed bugs.
    ("bug7a", "{{3 2}}", None),
    ("bug7b", "{{$x := 1}}{{$x 2}}", None),
    ("bug7c", "{{$x := 1}}{{3 | $x}}", None),
    ("bug14a", "{{(nil).True}}", None),
    ("bug14b", "{{$x := nil}}{{$x.anything}}", None),
    (
        "bug14c",
        "{{$x := (1.0)}}{{$y := (\"hello\")}}{{$x.anything}}{{$y.true}}",
        None,
    ),
    ("bug16a", "{{true|printf}}", None),
    ("bug16b", "{{1|printf}}", None),
    ("bug16c", "{{1.1|printf}}", None),
    ("bug16d", "{{'x'|printf}}", None),
    ("bug16k", "{{\"aaa\"|printf }}", Some("aaa")),
    (
        "issue56490",
        "{{$i := 0}}{{$x := 0}}{{range $i = .AI}}{{end}}{{$i}}",
        Some("5"),
    ),
    (
        "issue60801",
        "{{$k := 0}}{{$v := 0}}{{range $k, $v = .AI}}{{$k}}={{$v}} {{end}}",
        Some("0=3 1=4 2=5 "),
    ),
];

#[test]
fn exec_tests_from_go() {
    let data = tval();
    let mut failures = Vec::new();
    for &(name, src, want) in EXEC_TESTS {
        let got = render(src, &data);
        let ok = match (want, &got) {
            (Some(w), Ok(g)) => w == g,
            (None, Err(_)) => true,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{name}: {src:?}\n   want {want:?}\n   got  {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn dot_of_every_kind() {
    for (data, want) in [
        (json!(13), "<13>"),
        (json!(15.1), "<15.1>"),
        (json!(true), "<true>"),
        (json!("hello"), "<hello>"),
        (json!([-1, -2, -3]), "<[-1 -2 -3]>"),
        (json!({"two": 22}), "<map[two:22]>"),
        (json!(null), "<<no value>>"),
    ] {
        assert_eq!(render("<{{.}}>", &data).as_deref(), Ok(want), "{data}");
    }
    assert_eq!(render("{{$}}", &json!(123)).as_deref(), Ok("123"));
    assert_eq!(
        render("{{js .}}", &json!("It'd be nice.")).as_deref(),
        Ok("It\\'d be nice.")
    );
    assert_eq!(
        render("{{.cause}}", &json!({"cause": "neglect"})).as_deref(),
        Ok("neglect")
    );
    assert_eq!(render("{{eq . '.'}}", &json!(46)).as_deref(), Ok("true"));
    assert_eq!(
        render("{{.x}} {{.y}}", &json!({"x": 99})).as_deref(),
        Ok("99 <no value>")
    );
}

/// Go's `cmpTests`, run as `{{if EXPR}}true{{else}}false{{end}}`.
#[test]
fn comparisons_from_go() {
    let data = json!({"Uthree": 3, "Ufour": 4, "NegOne": -1, "Three": 3, "Map": null, "NonNilMap": {}, "Arr": [1]});
    let cases: &[(&str, Option<&str>)] = &[
        ("eq true true", Some("true")),
        ("eq true false", Some("false")),
        ("eq 1.5 1.5", Some("true")),
        ("eq 1.5 2.5", Some("false")),
        ("eq 1 1", Some("true")),
        ("eq 1 2", Some("false")),
        ("eq `xy` `xy`", Some("true")),
        ("eq `xy` `xyz`", Some("false")),
        ("eq .Uthree .Uthree", Some("true")),
        ("eq .Uthree .Ufour", Some("false")),
        ("eq 3 4 5 6 3", Some("true")),
        ("eq 3 4 5 6 7", Some("false")),
        ("ne true true", Some("false")),
        ("ne true false", Some("true")),
        ("ne 1.5 1.5", Some("false")),
        ("ne 1 2", Some("true")),
        ("ne `xy` `xyz`", Some("true")),
        ("lt 1.5 1.5", Some("false")),
        ("lt 1.5 2.5", Some("true")),
        ("lt 1 1", Some("false")),
        ("lt 1 2", Some("true")),
        ("lt `xy` `xy`", Some("false")),
        ("lt `xy` `xyz`", Some("true")),
        ("le 1.5 1.5", Some("true")),
        ("le 2.5 1.5", Some("false")),
        ("le 1 2", Some("true")),
        ("le 2 1", Some("false")),
        ("le `xyz` `xy`", Some("false")),
        ("gt 1.5 1.5", Some("false")),
        ("gt 2 1", Some("true")),
        ("gt `xy` `xyz`", Some("false")),
        ("gt .Ufour .Uthree", Some("true")),
        ("ge 1.5 1.5", Some("true")),
        ("ge 1.5 2.5", Some("false")),
        ("ge 2 1", Some("true")),
        ("ge `xyz` `xy`", Some("true")),
        ("eq .Uthree .Three", Some("true")),
        ("eq .NegOne .Uthree", Some("false")),
        ("lt .NegOne .Uthree", Some("true")),
        ("gt .Uthree .NegOne", Some("true")),
        ("eq (index `x` 0) 'x'", Some("true")),
        ("eq (index `x` 0) 'y'", Some("false")),
        ("eq .Map .Map", Some("true")),
        ("eq .Map nil", Some("true")),
        ("eq nil .Map", Some("true")),
        ("eq .Map .NonNilMap", Some("false")),
        ("eq .Missing nil", Some("true")),
        ("eq .Missing `x`", Some("false")),
        // Go errors on int vs float; JSON numbers compare by value here.
        ("eq 2 2.0", Some("true")),
        ("lt 2 2.5", Some("true")),
        // Errors.
        ("eq `xy` 1", None),
        ("lt true true", None),
        ("lt 1 `1`", None),
        ("lt nil 1", None),
        ("eq .NonNilMap .NonNilMap", None),
        ("eq .Arr .Arr", None),
        ("eq .Arr `x`", None),
        ("eq 1", None),
        ("ne 1 2 3", None),
    ];
    for &(expr, want) in cases {
        let got = render(
            &format!("{{{{if {expr}}}}}true{{{{else}}}}false{{{{end}}}}"),
            &data,
        );
        match want {
            Some(w) => assert_eq!(got.as_deref(), Ok(w), "{expr}"),
            None => assert!(got.is_err(), "{expr}: {got:?}"),
        }
    }
}

#[test]
fn error_messages_name_the_action() {
    let e = |src: &str, data: Value| render(src, &data).err().unwrap_or_default();
    assert_eq!(
        e("hello, {{.X.Y}}", json!({"X": 0})),
        "line 1, column 10: executing <.X.Y>: can't evaluate field Y in type int"
    );
    assert_eq!(
        e("{{.a.b}}", json!({"a": "s"})),
        "line 1, column 3: executing <.a.b>: can't evaluate field b in type string"
    );
    assert_eq!(
        e("line 1\nline 2\n{{index \"hi\" $}}", json!(5)),
        "line 3, column 3: executing <index \"hi\" $>: error calling index: index out of range: 5"
    );
    assert_eq!(
        e("{{not}}", json!(null)),
        "line 1, column 3: executing <not>: wrong number of args for not: want 1 got 0"
    );
    assert_eq!(
        e("{{nil}}", json!(null)),
        "line 1, column 3: executing <nil>: nil is not a command"
    );
    assert_eq!(
        e("{{3 2}}", json!(null)),
        "line 1, column 3: executing <3 2>: can't give argument to non-function 3"
    );
    assert_eq!(
        e("{{.m.k 1}}", json!({"m": {"k": 1}})),
        "line 1, column 3: executing <.m.k>: k is not a method but has arguments"
    );
    assert_eq!(
        e("{{range 1.5}}{{end}}", json!(null)),
        "line 1, column 9: executing <1.5>: range can't iterate over 1.5"
    );
    assert_eq!(
        e(
            "{{if false}}{{$y := 1}}{{else}}{{$y = 2}}{{end}}",
            json!(null)
        ),
        "line 1, column 34: executing <$y = 2>: undefined variable: $y"
    );
    assert_eq!(
        e("{{call .f}}", json!({})),
        "line 1, column 3: executing <call .f>: error calling call: call is not supported: no function values in data"
    );
    assert_eq!(
        e("{{template \"nope\"}}", json!(null)),
        "line 1, column 12: executing <template \"nope\">: template \"nope\" not defined"
    );
}

#[test]
fn missing_and_null_values() {
    let data = json!({"steps": {"a": {"output": {"x": 1}, "status": "ok"}, "n": null}, "s": "str"});
    for (src, want) in [
        ("{{.steps.a.result}}", "<no value>"),
        ("{{.steps.b.output.x}}", "<no value>"),
        // Go fails with "nil pointer evaluating interface {}.x" here; configs want the lenient reading.
        ("{{.steps.n.x}}", "<no value>"),
        ("{{.steps.n}}", "<no value>"),
        ("{{print .steps.n .nope}}", "<nil> <nil>"),
        ("{{printf \"%v|%s\" .steps.n .nope}}", "<nil>|%!s(<nil>)"),
        ("{{if .nope}}y{{else}}n{{end}}", "n"),
        (
            "{{eq .nope nil}} {{eq .steps.n nil}} {{eq .nope .steps.n}}",
            "true true true",
        ),
        ("{{json .nope}} {{json .steps.n}}", "null null"),
        ("{{$x := .nope}}{{$x}}", "<no value>"),
        ("{{with .steps.n}}y{{else}}n{{end}}", "n"),
        ("{{.steps.a.output}}", "map[x:1]"),
        ("{{index .steps \"zz\"}}", "<no value>"),
        ("{{len .steps}}", "2"),
    ] {
        assert_eq!(render(src, &data).as_deref(), Ok(want), "{src}");
    }
    assert!(render("{{.s.x}}", &data).is_err());
    assert!(render("{{index .steps \"zz\" \"y\"}}", &data).is_err());
}

#[test]
fn printing_nested_values_and_floats() {
    let data = json!({
        "nested": {"b": [1, {"c": null}], "a": "x y"},
        "f": [1e21, 1e20, 123456.0, 1234567.0, 0.0001, 0.00001, 456.0, -0.0, 3.25, 100000000000000000000.0],
        "ints": [9007199254740993_i64, -5, 18446744073709551615_u64],
    });
    assert_eq!(
        render("{{.nested}}", &data).as_deref(),
        Ok("map[a:x y b:[1 map[c:<nil>]]]")
    );
    assert_eq!(
        render("{{.f}}", &data).as_deref(),
        Ok("[1e+21 1e+20 123456 1.234567e+06 0.0001 1e-05 456 -0 3.25 1e+20]")
    );
    assert_eq!(
        render("{{.ints}}", &data).as_deref(),
        Ok("[9007199254740993 -5 18446744073709551615]")
    );
    assert_eq!(
        render("{{json .f}}", &data).as_deref(),
        Ok(
            "[1e+21,100000000000000000000,123456,1234567,0.0001,0.00001,456,-0,3.25,100000000000000000000]"
        )
    );
    assert_eq!(
        render("{{print 1.0 2.50 1e6}}", &json!(null)).as_deref(),
        Ok("1 2.5 1e+06")
    );
}

#[test]
fn trim_markers_and_comments() {
    let d = json!(null);
    for (src, want) in [
        ("{{23 -}} < {{- 45}}", "23<45"),
        ("x \r\n\t{{- 3}}", "x3"),
        ("{{3 -}}\n\n\ty", "3y"),
        ("x \r\n\t{{- 3 -}}\n\n\ty", "x3y"),
        ("x\n{{-  3   -}}\ny", "x3y"),
        ("x \r\n\t{{- /* hi */}}", "x"),
        ("{{/* hi */ -}}\n\n\ty", "y"),
        ("x \r\n\t{{- /* */ -}}\n\n\ty", "xy"),
        ("a {{-3}} b", "a -3 b"),
        ("a{{/* comment */}}b", "ab"),
        ("a{{/* multi\nline */}}b", "ab"),
        ("{{if true}}\n  yes\n{{- end}}", "\n  yes"),
        ("{{- range $i, $e := .}}{{end -}}", ""),
        ("{{ $x \n := \n 1 \n }}{{$x}}", "1"),
        ("{{\n\"x\"\n|\nprintf\n}}", "x"),
    ] {
        assert_eq!(render(src, &d).as_deref(), Ok(want), "{src:?}");
    }
}

#[test]
fn variables_and_scoping() {
    let d = json!({"a": [1, 2], "b": "B"});
    for (src, want) in [
        ("{{$x := 1}}{{$x = 2}}{{$x}}", "2"),
        ("{{$x := 1}}{{if true}}{{$x = 3}}{{end}}{{$x}}", "3"),
        ("{{$x := 1}}{{if true}}{{$x := 3}}{{$x}}{{end}}{{$x}}", "31"),
        (
            "{{$x := \"out\"}}{{range .a}}{{$x := .}}{{$x}}{{end}}{{$x}}",
            "12out",
        ),
        ("{{$n := 0}}{{range .a}}{{$n = .}}{{end}}{{$n}}", "2"),
        ("{{range $i, $e := .a}}{{$i}}{{$e}}{{$.b}}{{end}}", "01B12B"),
        ("{{with $v := .b}}{{$v}}{{.}}{{end}}", "BB"),
        ("{{$ := 5}}{{$}}", "5"),
    ] {
        assert_eq!(render(src, &d).as_deref(), Ok(want), "{src}");
    }
}

#[test]
fn define_template_and_block() {
    let tree = json!({
        "Val": 1,
        "Left": {"Val": 2,
            "Left": {"Val": 3, "Left": {"Val": 4, "Left": null, "Right": null}, "Right": null},
            "Right": {"Val": 5, "Left": {"Val": 6, "Left": null, "Right": null}, "Right": null}},
        "Right": {"Val": 7,
            "Left": {"Val": 8, "Left": {"Val": 9, "Left": null, "Right": null}, "Right": null},
            "Right": {"Val": 10, "Left": {"Val": 11, "Left": null, "Right": null}, "Right": null}},
    });
    // Go's TestTree, with the default delimiters.
    let src = r#"{{template "tree" .}}
        {{- define "tree" -}}
        [
            {{- .Val -}}
            {{- with .Left -}}
                {{template "tree" . -}}
            {{- end -}}
            {{- with .Right -}}
                {{- template "tree" . -}}
            {{- end -}}
        ]
        {{- end -}}
    "#;
    assert_eq!(
        render(src, &tree).as_deref(),
        Ok("[1[2[3[4]][5[6]]][7[8[9]][10[11]]]]")
    );
    assert_eq!(
        render(
            r#"a({{block "inner" .}}bar({{.}})baz{{end}})b"#,
            &json!("hello")
        )
        .as_deref(),
        Ok("a(bar(hello)baz)b")
    );
    assert_eq!(
        render(r#"{{define "T1"}}ONE{{end}}{{define "T2"}}TWO {{template "T1"}}{{end}}{{template "T2"}}"#, &json!(null))
            .as_deref(),
        Ok("TWO ONE")
    );
    // No variables cross into a template; $ is the argument.
    assert_eq!(
        render(
            r#"{{define "t"}}{{$}}{{end}}{{template "t" .a}}"#,
            &json!({"a": 7})
        )
        .as_deref(),
        Ok("7")
    );
    assert_eq!(
        render(r#"{{define "t"}}{{.}}{{end}}{{template "t"}}"#, &json!(1)).as_deref(),
        Ok("<no value>")
    );
    let recursive = render(
        r#"{{define "t"}}{{template "t" .}}{{end}}{{template "t" .}}"#,
        &json!(null),
    );
    assert!(
        recursive
            .as_ref()
            .is_err_and(|e| e.contains("exceeded maximum template depth (100)")),
        "{recursive:?}"
    );
}

#[test]
fn toolhive_style_templates() {
    let data = json!({
        "params": {"message": "hi \"there\"", "env": "prod", "count": 3},
        "steps": {
            "get_packages": {"status": "completed", "output": {"packages": [{"name": "a", "v": 1}, {"name": "b", "v": 2.5}]}},
            "a": {"status": "completed", "output": {"text": "done"}},
            "raw": {"output": {"text": "{\"ids\":[1,2]}"}},
        },
        "forEach": {"pkg": {"name": "left-pad"}},
    });
    for (src, want) in [
        ("{{.params.message}}", "hi \"there\""),
        (
            "{{json .steps.get_packages.output.packages}}",
            r#"[{"name":"a","v":1},{"name":"b","v":2.5}]"#,
        ),
        ("{{eq .params.env \"prod\"}}", "true"),
        ("{{if eq .params.env \"prod\"}}P{{else}}D{{end}}", "P"),
        ("{{.forEach.pkg.name}}", "left-pad"),
        (
            "Combined: [{{ .steps.a.result }}]",
            "Combined: [<no value>]",
        ),
        ("{{quote .params.message}}", "\"hi \\\"there\\\"\""),
        ("{{(fromJson .steps.raw.output.text).ids}}", "[1 2]"),
        (
            "{{range (fromJson .steps.raw.output.text).ids}}<{{.}}>{{end}}",
            "<1><2>",
        ),
        (
            "{{range $i, $p := .steps.get_packages.output.packages}}{{$i}}:{{$p.name}} {{end}}",
            "0:a 1:b ",
        ),
        ("{{printf \"%d items\" .params.count}}", "3 items"),
        ("{{range .params.count}}*{{end}}", "***"),
        ("{{gt .params.count 2}}", "true"),
        ("{{len .steps.get_packages.output.packages}}", "2"),
        ("{{.steps.a.status}}", "completed"),
    ] {
        assert_eq!(render(src, &data).as_deref(), Ok(want), "{src}");
    }
    let bad = render("{{fromJson .params.message}}", &data);
    assert!(
        bad.as_ref().is_err_and(|e| e.contains("fromJson: ")),
        "{bad:?}"
    );
}

#[test]
fn plain_templates() {
    for (src, plain) in [
        ("", true),
        ("just text", true),
        ("a {{.x}}", false),
        ("a{{/* c */}}b", false),
        ("{ {", true),
    ] {
        let t = Template::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(t.is_plain(), plain, "{src}");
        if plain {
            assert_eq!(t.render(&json!({})).as_deref(), Ok(src));
        }
    }
}

#[test]
fn parse_errors_have_positions() {
    let e = |src: &str| {
        Template::parse(src)
            .err()
            .map(|e| (e.to_string(), e.line, e.column))
    };
    assert_eq!(
        e("ab\n  {{.x"),
        Some(("line 2, column 3: unclosed action".into(), 2, 3))
    );
    assert_eq!(
        e("{{end}}"),
        Some(("line 1, column 1: unexpected {{end}}".into(), 1, 1))
    );
    assert_eq!(
        e("x {{ foo 1 }}"),
        Some((
            "line 1, column 6: function \"foo\" not defined".into(),
            1,
            6
        ))
    );
    assert_eq!(
        e("é\n{{ 3x }}"),
        Some(("line 2, column 4: bad number syntax: \"3x\"".into(), 2, 4))
    );
    assert_eq!(
        e("{{if .a}}\n{{range .b}}{{end}}"),
        Some((
            "line 1, column 1: unexpected EOF: {{if}} has no {{end}}".into(),
            1,
            1
        ))
    );
    assert_eq!(
        e("{{ $x }}"),
        Some(("line 1, column 4: undefined variable \"$x\"".into(), 1, 4))
    );
}
