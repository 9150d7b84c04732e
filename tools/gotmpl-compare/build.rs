//! Makes crates/template/tests/go_behaviour.rs includable in a binary, so its cases are read from
//! the file itself rather than retyped: `#[test]` attributes are dropped (a non-test build would
//! drop the functions), `//!` becomes `//`, and its `Template` becomes the shim that runs either
//! engine (src/shim.rs).
use std::{env, fs, path::Path};

const SOURCE: &str = "../../crates/template/tests/go_behaviour.rs";

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
    let text = fs::read_to_string(SOURCE).expect("read go_behaviour.rs");
    let import = "use vmcp_template::Template;";
    assert!(
        text.contains(import),
        "go_behaviour.rs no longer imports {import}"
    );
    let mut tests = Vec::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l.trim() == "#[test]" {
            let f = lines.next().unwrap_or_default();
            let name = f
                .trim()
                .trim_start_matches("fn ")
                .split('(')
                .next()
                .unwrap_or_default();
            tests.push(format!("{name:?}"));
        }
    }
    let out_dir = env::var("OUT_DIR").unwrap();
    let names = format!("pub const TEST_FNS: &[&str] = &[{}];\n", tests.join(", "));
    fs::write(Path::new(&out_dir).join("test_fns.rs"), names).expect("write test_fns.rs");
    let out: String = text
        .replace(import, "use crate::shim::Template;")
        .lines()
        .filter(|l| l.trim() != "#[test]")
        // Inner doc comments cannot follow `include!`.
        .map(|l| l.replacen("//!", "//", 1) + "\n")
        .collect();
    let dest = Path::new(&out_dir).join("go_behaviour.rs");
    fs::write(dest, out).expect("write go_behaviour.rs");
}
