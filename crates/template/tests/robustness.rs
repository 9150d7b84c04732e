//! No input makes parsing or rendering panic: deterministic pseudo-random garbage, built from
//! template fragments so that much of it gets past the lexer.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::json;
use vmcp_template::Template;

/// xorshift64*: small, deterministic, good enough to pick fragments.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const FRAGMENTS: &[&str] = &[
    "{{",
    "}}",
    "{{- ",
    " -}}",
    "{{/*",
    "*/}}",
    ".",
    ".a",
    ".b.c",
    "$",
    "$x",
    "$.a",
    " $x := ",
    " = ",
    "|",
    "(",
    ")",
    "if ",
    "else ",
    "else if ",
    "end",
    "range ",
    "with ",
    "define ",
    "template ",
    "block ",
    "break",
    "continue",
    "\"s\"",
    "\"",
    "`r`",
    "`",
    "'c'",
    "'",
    "1",
    "2",
    "-1",
    "0x1f",
    "1.5",
    "1e3",
    "0b1",
    "_",
    ",",
    " ",
    "\n",
    "\t",
    "a",
    "é",
    "→",
    "%",
    "printf ",
    "\"%d %s %v %5.2f %q %x\" ",
    "index ",
    "slice ",
    "len ",
    "eq ",
    "lt ",
    "and ",
    "or ",
    "not ",
    "json ",
    "quote ",
    "fromJson ",
    "print ",
    "html ",
    "js ",
    "urlquery ",
    "call ",
    "nil",
    "true",
    "false",
    "{{range $i, $e := .}}",
    "{{end}}",
    "{{if .a}}",
    "{{with .b}}",
    "{{else}}",
    "{{.}}",
    "{{$}}",
    "text ",
];

fn data() -> serde_json::Value {
    json!({
        "a": [1, "two", null, {"c": 3.5}],
        "b": {"c": {"d": "deep"}, "n": null},
        "s": "{\"k\": [1, 2]}",
        "n": 3,
    })
}

fn exercise(src: &str) {
    let data = data();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if let Ok(t) = Template::parse(src) {
            let _ = t.render(&data);
            let _ = t.render(&json!(null));
            let _ = t.render(&json!([1, 2]));
            let _ = t.root_references();
            let _ = t.is_plain();
        }
    }));
    assert!(outcome.is_ok(), "panicked on {src:?}");
}

#[test]
fn fragment_soup_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..600 {
        let n = (rng.next() % 40) as usize;
        let src: String = (0..n).map(|_| rng.pick(FRAGMENTS)).collect();
        exercise(&src);
    }
}

#[test]
fn random_characters_never_panic() {
    let mut rng = Rng(42);
    let alphabet: Vec<char> = "{}-/*$.|()\"`'\\:=, \n\tabcxyz0123456789_%é→\u{0}\u{7f}\u{2028}"
        .chars()
        .collect();
    for _ in 0..400 {
        let n = (rng.next() % 60) as usize;
        let src: String = (0..n)
            .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize])
            .collect();
        exercise(&src);
    }
}

#[test]
fn well_formed_random_pipelines_never_panic() {
    let mut rng = Rng(7);
    let args = [
        ".a",
        ".b",
        ".b.c",
        ".s",
        ".n",
        "$",
        "1",
        "-2",
        "2.5",
        "\"x\"",
        "nil",
        "true",
        "(index .a 3)",
        "(len .a)",
    ];
    let funcs = [
        "index", "slice", "len", "eq", "ne", "lt", "ge", "and", "or", "not", "json", "quote",
        "fromJson", "print", "printf", "html", "js", "urlquery",
    ];
    for _ in 0..400 {
        let f = rng.pick(&funcs);
        let k = (rng.next() % 4) as usize;
        let argv: Vec<&str> = (0..k).map(|_| rng.pick(&args)).collect();
        let src = format!(
            "{{{{{f} {}}}}}{{{{range {}}}}}{{{{.}}}}{{{{end}}}}",
            argv.join(" "),
            rng.pick(&args)
        );
        exercise(&src);
    }
}
