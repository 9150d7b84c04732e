use super::*;

#[test]
fn quote_matches_strconv_quote() {
    assert_eq!(quote("abc"), "\"abc\"");
    assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_eq!(
        quote("\u{7}\u{8}\u{c}\n\r\t\u{b}"),
        "\"\\a\\b\\f\\n\\r\\t\\v\""
    );
    assert_eq!(quote("\u{1}\u{7f}"), "\"\\x01\\x7f\"");
    assert_eq!(quote("héllo 世界"), "\"héllo 世界\"");
    assert_eq!(quote("\u{a0}\u{feff}\u{fffe}"), "\"\\u00a0\\ufeff\\ufffe\"");
    assert_eq!(quote("\u{e0001}"), "\"\\U000e0001\"");
    assert_eq!(quote_with("héllo", true), "\"h\\u00e9llo\"");
}

#[test]
fn quote_rune_and_backquote() {
    assert_eq!(quote_rune('x', false), "'x'");
    assert_eq!(quote_rune('\'', false), "'\\''");
    assert_eq!(quote_rune('☺', true), "'\\u263a'");
    assert!(can_backquote("a\tb"));
    assert!(!can_backquote("a`b"));
    assert!(!can_backquote("a\nb"));
}

#[test]
fn unquote_handles_go_escapes() {
    assert_eq!(
        unquote("\"a\\tb\\x41\\101\\u00e9\\U0001F600\""),
        Ok("a\tbAAé😀".to_string())
    );
    assert_eq!(unquote("`raw\\n\r`"), Ok("raw\\n".to_string()));
    assert_eq!(unquote("\"\\xff\""), Ok("\u{FFFD}".to_string()));
    assert!(unquote("\"\\'\"").is_err());
    assert!(unquote("\"\\q\"").is_err());
    assert!(unquote("\"\\ud800\"").is_err());
    assert!(unquote("\"\\400\"").is_err());
}

#[test]
fn html_js_and_url_escaping_match_go() {
    assert_eq!(
        html_escape("<script>alert(\"XSS\");</script>"),
        "&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;"
    );
    assert_eq!(html_escape("a'b&\0"), "a&#39;b&amp;\u{FFFD}");
    for (input, want) in [
        ("a", "a"),
        ("'foo", "\\'foo"),
        ("Go \"jump\" \\", "Go \\\"jump\\\" \\\\"),
        (
            "Yukihiro says \"今日は世界\"",
            "Yukihiro says \\\"今日は世界\\\"",
        ),
        ("unprintable \u{FFFE}", "unprintable \\uFFFE"),
        ("<html>", "\\u003Chtml\\u003E"),
        ("no = in attributes", "no \\u003D in attributes"),
        (
            "&#x27; does not become HTML entity",
            "\\u0026#x27; does not become HTML entity",
        ),
        ("tab\t", "tab\\u0009"),
    ] {
        assert_eq!(js_escape(input), want, "{input}");
    }
    assert_eq!(
        url_query_escape("http://www.example.org/"),
        "http%3A%2F%2Fwww.example.org%2F"
    );
    assert_eq!(url_query_escape("a b~c-d_e.f&é"), "a+b~c-d_e.f%26%C3%A9");
}

#[test]
fn is_print_approximates_unicode_is_print() {
    for c in ['a', ' ', '~', 'é', '世', '😀', '\u{300}'] {
        assert!(is_print(c), "{c:?}");
    }
    for c in [
        '\n', '\u{7f}', '\u{85}', '\u{a0}', '\u{200b}', '\u{2028}', '\u{e000}', '\u{fffe}',
        '\u{fdd0}',
    ] {
        assert!(!is_print(c), "{c:?}");
    }
}
