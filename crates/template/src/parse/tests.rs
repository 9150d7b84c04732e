use super::*;

fn err(src: &str) -> (String, usize, usize) {
    match parse(src) {
        Ok(_) => panic!("{src:?} parsed"),
        Err(e) => (e.message, e.line, e.column),
    }
}

fn ok(src: &str) -> Parsed {
    match parse(src) {
        Ok(p) => p,
        Err(e) => panic!("{src:?}: {e}"),
    }
}

#[test]
fn accepts_go_parse_test_inputs() {
    for src in [
        "",
        "{{/*\n\n\n*/}}",
        " \t\n",
        "{{.X}}",
        "{{printf}}",
        "{{$}}",
        "{{with $x := 3}}{{$x 23}}{{end}}",
        "{{$.I}}",
        "{{printf `%d` 23}}",
        "{{.X|.Y}}",
        "{{$x := .X|.Y}}",
        "{{.X (.Y .Z) (.A | .B .C) (.E)}}",
        "{{(.Y .Z).Field}}",
        "{{if .X}}true{{else if .Y}}false{{end}}",
        "+{{if .X}}X{{else if .Y}}Y{{else if .Z}}Z{{end}}+",
        "{{range .X.Y.Z}}hello{{range .Y}}goodbye{{end}}{{end}}",
        "{{range .X|.M}}true{{else}}false{{end}}",
        "{{range $x, $y := .SI}}{{.}}{{break}}{{continue}}{{end}}",
        "{{range .SI 1 true false 'a' nil}}{{end}}",
        "{{template `x`}}{{template `x` .Y}}",
        "{{with .X}}X{{else with .Y}}Y{{else with .Z}}Z{{end}}",
        "{{ $x \n := \n 1 \n }}",
        "{{\n\"x\"\n|\nprintf\n}}",
        "{{-\n/*\nhello\n*/\n-}}",
        "{{range .SI}}{{.}}{{ continue }}{{ break }}{{end}}",
        "{{block \"foo\" .}}hello{{end}}",
        "{{$i := 0}}{{range $i = .}}{{end}}",
        "{{$k := 0}}{{$v := 0}}{{range $k, $v = .}}{{end}}",
    ] {
        ok(src);
    }
}

#[test]
fn if_else_chains_are_flattened() {
    let p = ok("{{if .a}}A{{else if .b}}B{{else if .c}}C{{else}}D{{end}}");
    match p.root.as_slice() {
        [Node::If(c)] => {
            assert_eq!(c.branches.len(), 3);
            assert!(c.else_list.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn block_defines_and_calls() {
    let p = ok("a{{block \"inner\" .}}bar{{.}}baz{{end}}b");
    assert!(p.defines.contains_key("inner"));
    assert!(
        matches!(p.root.as_slice(), [Node::Text(_), Node::Template(c), Node::Text(_)] if c.name == "inner")
    );
}

#[test]
fn errors_report_go_messages_at_the_offending_token() {
    assert_eq!(err("line1\n{{"), ("unclosed action".into(), 2, 1));
    assert_eq!(
        err("line1\n{{define `x`}}line2\n{{"),
        ("unclosed action".into(), 3, 1)
    );
    assert_eq!(err("{{\n\n\n\n\n"), ("unclosed action".into(), 1, 1));
    assert_eq!(
        err("line1\n{{\nx\n}}"),
        ("function \"x\" not defined".into(), 3, 1)
    );
    assert_eq!(
        err("{{foo}}"),
        ("function \"foo\" not defined".into(), 1, 3)
    );
    assert_eq!(
        err("a {{ .x | foo 1 }}"),
        ("function \"foo\" not defined".into(), 1, 11)
    );
    assert_eq!(err("{{/*}}"), ("unclosed comment".into(), 1, 1));
    assert_eq!(err("{{/*\nhello\n}}").0, "unclosed comment");
    assert_eq!(err("{{.X (1 2 3}}").0, "unclosed left paren");
    assert_eq!(
        err("{{.X 1 2 3 ) }}").0,
        "unexpected right paren U+0029 ')'"
    );
    assert_eq!(err("{{(.X 1 2 3").0, "unclosed action");
    assert_eq!(err("{{`x`3}}").0, "unexpected \"3\" in operand");
    assert_eq!(err("{{a#}}").0, "bad character U+0023 '#'");
    assert_eq!(err("{{0xi}}").0, "illegal number syntax: \"0xi\"");
    assert_eq!(err("x {{3x}}"), ("bad number syntax: \"3x\"".into(), 1, 5));
    assert_eq!(err("{{1+2i}}").0, "complex number 1+2i is not supported");
    assert_eq!(
        err("{{define `a`}}a{{end}}{{define `a`}}b{{end}}").0,
        "template: multiple definition of template \"a\""
    );
    assert_eq!(
        err("{{$x := 23}}{{with $x.y := 3}}{{$x 23}}{{end}}").0,
        "unexpected \":=\" in operand"
    );
    assert_eq!(
        err("{{$a,$b,$c := 23}}").0,
        "too many declarations in command"
    );
    assert_eq!(err("{{$a}}"), ("undefined variable \"$a\"".into(), 1, 3));
    assert_eq!(err("{{true.any}}").0, "unexpected . after term \"true\"");
    assert_eq!(
        err("{{12|false}}").0,
        "non executable command in pipeline stage 2"
    );
    assert_eq!(
        err("{{ ( ) }}").0,
        "missing value for parenthesized pipeline"
    );
    assert_eq!(err("{{ $v := `\n` }} {{").1, 2);
    assert_eq!(err("{{range $k}}{{end}}").0, "undefined variable \"$k\"");
    assert_eq!(err("{{range $k,}}{{end}}").0, "missing value for range");
    assert_eq!(
        err("{{range $k, $v := }}{{end}}").0,
        "missing value for range"
    );
    assert_eq!(
        err("{{range $k, .}}{{end}}").0,
        "range can only initialize variables"
    );
    assert_eq!(
        err("{{range $k, 123 := .}}{{end}}").0,
        "range can only initialize variables"
    );
    assert_eq!(err("{{}}").0, "missing value for command");
    assert_eq!(err("{{\n}}").0, "missing value for command");
}

#[test]
fn structure_errors() {
    assert_eq!(err("hello{{range").0, "unclosed action");
    assert_eq!(err("a\n  {{end}}"), ("unexpected {{end}}".into(), 2, 3));
    assert_eq!(err("{{else}}").0, "unexpected {{else}}");
    assert_eq!(
        err("{{if .X}}hello{{end}}{{else}}").0,
        "unexpected {{else}}"
    );
    assert_eq!(
        err("{{if .X}}1{{else}}2{{else}}3{{end}}"),
        ("expected end; found {{else}}".into(), 1, 20)
    );
    assert_eq!(
        err("x\n {{range .X}}"),
        ("unexpected EOF: {{range}} has no {{end}}".into(), 2, 2)
    );
    assert_eq!(
        err("{{if .x}}{{with .y}}{{end}}").0,
        "unexpected EOF: {{if}} has no {{end}}"
    );
    assert_eq!(
        err("{{range .x}}{{else if .y}}{{end}}").0,
        "unexpected <if> in input"
    );
    assert_eq!(err("{{break}}").0, "{{break}} outside {{range}}");
    assert_eq!(
        err("{{range .}}{{else}}{{continue}}{{end}}").0,
        "{{continue}} outside {{range}}"
    );
    assert_eq!(
        err("{{range .}}{{break 1}}{{end}}").0,
        "unexpected \"1\" in {{break}}"
    );
    assert_eq!(
        err("{{if .x}}{{define \"a\"}}{{end}}{{end}}").0,
        "unexpected <define> in command"
    );
    assert_eq!(
        err("{{template .x}}").0,
        "unexpected <.x> in template clause".replace("<.x>", "\".x\"")
    );
    assert_eq!(
        err("{{define \"a\"}}{{else}}{{end}}").0,
        "unexpected {{else}} in define clause"
    );
}

#[test]
fn variables_are_scoped_to_their_control_structure() {
    ok("{{if true}}{{$x := 1}}{{$x}}{{end}}");
    assert_eq!(
        err("{{if true}}{{$x := 1}}{{end}}{{$x}}").0,
        "undefined variable \"$x\""
    );
    assert_eq!(
        err("{{with $x := 1}}{{end}}{{$x}}").0,
        "undefined variable \"$x\""
    );
    assert_eq!(
        err("{{range $i, $e := .}}{{end}}{{$e}}").0,
        "undefined variable \"$e\""
    );
    // Declared at top level: visible to the end.
    ok("{{$x := 1}}{{if true}}{{$x}}{{end}}{{$x}}");
    // Variables of an else-if condition are visible in later branches, as in Go.
    ok("{{if $a := .a}}{{else if $b := .b}}{{$a}}{{else}}{{$a}}{{$b}}{{end}}");
    // define bodies start with only $.
    assert_eq!(
        err("{{$x := 1}}{{define \"t\"}}{{$x}}{{end}}").0,
        "undefined variable \"$x\""
    );
}

#[test]
fn nesting_is_bounded() {
    let deep = |n: usize| format!("{}{}", "{{if true}}".repeat(n), "{{end}}".repeat(n));
    ok(&deep(MAX_DEPTH));
    assert_eq!(
        err(&deep(MAX_DEPTH + 1)).0,
        "exceeded maximum nesting depth of 100"
    );
    let parens = |n: usize| format!("{{{{{}1{}}}}}", "(".repeat(n), ")".repeat(n));
    ok(&parens(MAX_DEPTH));
    assert_eq!(
        err(&parens(MAX_DEPTH + 1)).0,
        "exceeded maximum nesting depth of 100"
    );
    // Long else-if chains do not nest.
    let chain = format!(
        "{{{{if false}}}}{}{{{{end}}}}",
        "{{else if false}}".repeat(500)
    );
    ok(&chain);
}
