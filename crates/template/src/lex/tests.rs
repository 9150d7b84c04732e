use super::*;

fn kinds(src: &str) -> Vec<(Tok, String)> {
    lex(src)
        .into_iter()
        .map(|t| (t.kind, t.text.into_owned()))
        .collect()
}

fn t(kind: Tok, text: &str) -> (Tok, String) {
    (kind, text.to_string())
}

#[test]
fn text_and_simple_action() {
    assert_eq!(
        kinds("a{{.X}}b"),
        vec![
            t(Tok::Text, "a"),
            t(Tok::LeftDelim, "{{"),
            t(Tok::Field, ".X"),
            t(Tok::RightDelim, "}}"),
            t(Tok::Text, "b"),
            t(Tok::Eof, ""),
        ]
    );
}

#[test]
fn field_chains_split_at_dots_and_keywords_are_recognised() {
    let got = kinds("{{range $i, $e := .a.b}}{{else}}{{end}}");
    let toks: Vec<Tok> = got.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        toks,
        vec![
            Tok::LeftDelim,
            Tok::Range,
            Tok::Space,
            Tok::Variable,
            Tok::Char,
            Tok::Space,
            Tok::Variable,
            Tok::Space,
            Tok::Declare,
            Tok::Space,
            Tok::Field,
            Tok::Field,
            Tok::RightDelim,
            Tok::LeftDelim,
            Tok::Else,
            Tok::RightDelim,
            Tok::LeftDelim,
            Tok::End,
            Tok::RightDelim,
            Tok::Eof,
        ]
    );
}

#[test]
fn trim_markers_remove_adjacent_whitespace() {
    assert_eq!(
        kinds("x \r\n\t{{- 3 -}}\n\n\ty"),
        vec![
            t(Tok::Text, "x"),
            t(Tok::LeftDelim, "{{"),
            t(Tok::Number, "3"),
            t(Tok::RightDelim, "}}"),
            t(Tok::Text, "y"),
            t(Tok::Eof, ""),
        ]
    );
    // Without the space, "-3" is a number and nothing is trimmed.
    assert_eq!(kinds("x {{-3}}")[2], t(Tok::Number, "-3"));
    assert_eq!(kinds("x {{-3}}")[0], t(Tok::Text, "x "));
}

#[test]
fn comments_vanish_and_trim() {
    assert_eq!(
        kinds("a{{/* c */}}b"),
        vec![t(Tok::Text, "a"), t(Tok::Text, "b"), t(Tok::Eof, "")]
    );
    assert_eq!(
        kinds("a \n{{- /* c */ -}}\n b"),
        vec![t(Tok::Text, "a"), t(Tok::Text, "b"), t(Tok::Eof, "")]
    );
}

#[test]
fn numbers_strings_and_chars() {
    let got = kinds("{{1_000 0x1F -2.5e3 'a' \"s\\\"q\" `raw`}}");
    let vals: Vec<&(Tok, String)> = got.iter().filter(|(k, _)| *k != Tok::Space).collect();
    assert_eq!(vals[1], &t(Tok::Number, "1_000"));
    assert_eq!(vals[2], &t(Tok::Number, "0x1F"));
    assert_eq!(vals[3], &t(Tok::Number, "-2.5e3"));
    assert_eq!(vals[4], &t(Tok::CharConstant, "'a'"));
    assert_eq!(vals[5], &t(Tok::Str, "\"s\\\"q\""));
    assert_eq!(vals[6], &t(Tok::RawStr, "`raw`"));
}

#[test]
fn newlines_are_spaces_inside_actions() {
    let got = kinds("{{ $x \n := \n 1 \n }}");
    assert!(got.iter().any(|(k, _)| *k == Tok::Declare));
    assert_eq!(got.last(), Some(&t(Tok::Eof, "")));
}

#[test]
fn errors_carry_go_messages() {
    let last = |src: &str| lex(src).pop().map(|t| (t.kind, t.text.into_owned(), t.pos));
    assert_eq!(
        last("line1\n{{"),
        Some((Tok::Error, "unclosed action".into(), 6))
    );
    assert_eq!(
        last("{{/*}}"),
        Some((Tok::Error, "unclosed comment".into(), 0))
    );
    assert_eq!(
        last("{{/* c */ x}}"),
        Some((
            Tok::Error,
            "comment ends before closing delimiter".into(),
            0
        ))
    );
    assert_eq!(
        last("{{.X (1 2 3}}").map(|e| e.1),
        Some("unclosed left paren".into())
    );
    assert_eq!(
        last("{{.X 1 2 3 ) }}").map(|e| e.1),
        Some("unexpected right paren U+0029 ')'".into())
    );
    assert_eq!(
        last("{{a#}}").map(|e| e.1),
        Some("bad character U+0023 '#'".into())
    );
    assert_eq!(
        last("{{'a}}").map(|e| e.1),
        Some("unterminated character constant".into())
    );
    assert_eq!(
        last("{{\"a}}").map(|e| e.1),
        Some("unterminated quoted string".into())
    );
    assert_eq!(
        last("{{`a}}").map(|e| e.1),
        Some("unterminated raw quoted string".into())
    );
    assert_eq!(last("{{1e}}"), Some((Tok::Eof, String::new(), 6)));
    assert_eq!(
        last("{{3x}}").map(|e| (e.1, e.2)),
        Some(("bad number syntax: \"3x\"".into(), 2))
    );
    assert_eq!(last("{{a:b}}").map(|e| e.1), Some("expected :=".into()));
    assert_eq!(
        last("{{→}}").map(|e| e.1),
        Some("unrecognized character in action: U+2192 '→'".into())
    );
}

#[test]
fn token_display_matches_go_item_string() {
    let toks = lex("{{end \"a very long string\" x}}");
    let shown: Vec<String> = toks.iter().map(ToString::to_string).collect();
    assert_eq!(shown[1], "<end>");
    assert_eq!(shown[3], "\"\\\"a very lo\"...");
    assert_eq!(shown[5], "\"x\"");
    assert_eq!(shown.last().map(String::as_str), Some("EOF"));
}
