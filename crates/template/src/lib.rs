//! The subset of Go's `text/template` that ToolHive composite-tool workflows use, executed over
//! `serde_json::Value` data.
//!
//! Workflow configs written for ToolHive carry Go templates (`{{.params.x}}`,
//! `{{json .steps.a.output}}`, `{{if eq .params.env "prod"}}…{{end}}`); this crate parses them once
//! at config load ([`Template::parse`]), lets the loader check which data they read
//! ([`Template::root_references`]) and renders them per call ([`Template::render`]). It follows
//! Go's documented behaviour, error wording included where it helps, and documents each deliberate
//! difference at the place it is made. Output size ([`MAX_OUTPUT_BYTES`]), nesting
//! ([`MAX_DEPTH`]) and work ([`MAX_RANGE_ITERATIONS`], [`MAX_BUILT_BYTES`]) are bounded so a hostile template or
//! payload cannot exhaust memory, stack or time.
//!
//! It owns no I/O and knows nothing of workflows: callers build the data value.
//!
//! Pipeline: `lex` turns source into tokens, `parse` (with `number` for literals) builds the
//! tree in `node`, `exec` walks it with `value::Val` values and the built-ins in `funcs`
//! (comparisons in `compare`). Printing goes through `print` (what actions and `print` write),
//! `printf` (format strings) and `format` (Go's per-type `fmt` rules), with `float`, `escape`
//! and `json` underneath. `refs` reads the tree for [`Template::root_references`].
//!
//! Deliberate differences from Go are listed where they are made: `exec` (lenient `null`
//! fields, integers kept as integers, limits), `compare` (numbers compare by value across int
//! and float), `parse` (error positions, nesting cap), `escape` (approximate `IsPrint`),
//! `format` (float `%x`/`%b` and `%p` unsupported), `funcs` (`quote` takes any value, `call`
//! cannot call anything).
//!
//! ```
//! use serde_json::json;
//! use vmcp_template::Template;
//!
//! let t = Template::parse("Hello {{.params.name}}{{if .params.loud}}!{{end}}").unwrap();
//! let out = t.render(&json!({"params": {"name": "Ada", "loud": true}})).unwrap();
//! assert_eq!(out, "Hello Ada!");
//! assert_eq!(t.root_references(), vec![vec!["params", "name"], vec!["params", "loud"]]);
//! ```

mod compare;
mod error;
mod escape;
mod exec;
mod float;
mod format;
mod funcs;
mod json;
mod lex;
mod node;
mod number;
mod parse;
mod print;
mod printf;
mod refs;
mod value;

use std::collections::HashMap;

pub use error::{ParseError, RenderError};

/// Rendering fails with "template output exceeds 10 MiB" rather than grow past this many bytes.
/// Strings built by functions (`printf`, `json`, …) are held to the same bound, so repeated
/// doubling through variables cannot exhaust memory either.
pub const MAX_OUTPUT_BYTES: usize = 10 * 1024 * 1024;

/// Deepest nesting of control structures and parenthesised pipelines accepted by the parser,
/// and deepest nesting of template calls plus control structures during execution. Go allows far
/// more (10 000 parens, 100 000 template calls); configs never need it and recursion stays well
/// inside a thread's stack.
pub const MAX_DEPTH: usize = 100;

/// Total `range` iterations one render may run (all loops together). Not in Go: without it
/// `{{range 1000000000000}}{{end}}` would spin for hours while producing no output.
pub const MAX_RANGE_ITERATIONS: usize = 10_000_000;

/// Total bytes of text that functions (`printf`, `print`, `json`, …) may build in one render. Not
/// in Go: each result is held to [`MAX_OUTPUT_BYTES`], but a variable grown a little on every
/// pass of a loop (`{{$s = printf "%s." $s}}`) copies all of itself each time, so without a total
/// one render did quadratic work for minutes (found by fuzzing). Twice the output bound: a
/// render building more text than that, e.g. printing its whole data hundreds of thousands of
/// times in nested loops (also found by fuzzing: 12 s at the earlier 100 MiB), is refused.
pub const MAX_BUILT_BYTES: usize = 2 * MAX_OUTPUT_BYTES;

/// A parsed template, ready to render any number of times (it is `Send + Sync`).
#[derive(Debug, Clone)]
pub struct Template {
    root: Vec<node::Node>,
    defines: HashMap<String, Vec<node::Node>>,
    // Kept to turn byte offsets into line/column for render errors.
    src: Box<str>,
    plain: bool,
}

impl Template {
    /// Parses `src` with Go's default options (`{{ }}` delimiters, built-in functions plus
    /// ToolHive's `json`, `quote` and `fromJson`).
    ///
    /// # Errors
    /// A [`ParseError`] naming the first problem and the 1-based line and column (in characters)
    /// of the offending token: lexical errors (unclosed action, bad number), unknown functions,
    /// undefined variables, misplaced `{{end}}`/`{{else}}`/`{{break}}`, unclosed structures
    /// (reported at their opening action), nesting beyond [`MAX_DEPTH`].
    pub fn parse(src: &str) -> Result<Template, ParseError> {
        let parsed = parse::parse(src)?;
        Ok(Template {
            root: parsed.root,
            defines: parsed.defines,
            src: src.into(),
            // Any "{{" starts an action or a comment; both change the output, so only
            // sources without one render to themselves.
            plain: !src.contains("{{"),
        })
    }

    /// Executes the template with `data` as both dot and `$`.
    ///
    /// # Errors
    /// A [`RenderError`] for Go's execution errors (field access on a string or number, bad
    /// `index`, comparison of incompatible values, wrong argument counts, …), for output beyond
    /// [`MAX_OUTPUT_BYTES`], template calls nested beyond [`MAX_DEPTH`] and loops beyond
    /// [`MAX_RANGE_ITERATIONS`]. The message names the action and its line and column.
    pub fn render(&self, data: &serde_json::Value) -> Result<String, RenderError> {
        exec::render(self, data)
    }

    /// True when the source has no action or comment, so rendering returns it unchanged and
    /// callers may skip rendering.
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// Every field chain read from the root data, in order of first appearance, without
    /// duplicates: `.steps.a.output.x` gives `["steps","a","output","x"]` and `$.params.p` gives
    /// `["params","p"]`. Chains evaluated where dot is rebound (inside `range` and `with` bodies,
    /// or in a `{{define}}` called with anything but the root) are relative and left out, except
    /// through `$`. Only field syntax counts: `index . "steps"` is not reported.
    pub fn root_references(&self) -> Vec<Vec<String>> {
        refs::root_references(&self.root, &self.defines)
    }

    /// The source text this template was parsed from.
    pub fn source(&self) -> &str {
        &self.src
    }
}

/// Go's `%v` printing of a JSON value (as `fmt.Sprint` prints it): strings as-is, `null` as
/// `<nil>`, integers as integers, floats in Go's shortest `%g` form (`1e+06`, `0.0001`, `1e-05`),
/// arrays as `[a b]`, objects as `map[k:v]` with sorted keys.
pub fn go_print(v: &serde_json::Value) -> String {
    print::go_print(v)
}

#[cfg(test)]
mod tests {
    #[test]
    fn template_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<super::Template>();
    }
}
