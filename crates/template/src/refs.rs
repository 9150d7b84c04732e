//! `Template::root_references`: the field chains a template reads from the root data, for
//! checking references when a config is loaded.
//!
//! A chain counts when it is read where dot is the root (outside `range` and `with` bodies;
//! `else` branches keep the outer dot) or through `$`. A `{{template}}` call passing the root
//! (`.` where dot is the root, or `$`) makes the called body count as root too; calls passing
//! anything else are skipped, since their chains are relative to that value.

use std::collections::{HashMap, HashSet};

use crate::MAX_DEPTH;
use crate::node::{Arg, ArgKind, Node, Pipe};

pub(crate) fn root_references(
    root: &[Node],
    defines: &HashMap<String, Vec<Node>>,
) -> Vec<Vec<String>> {
    let mut w = Walker {
        defines,
        out: Vec::new(),
        seen: HashSet::new(),
        active: Vec::new(),
    };
    w.nodes(root, true);
    w.out
}

struct Walker<'t> {
    defines: &'t HashMap<String, Vec<Node>>,
    out: Vec<Vec<String>>,
    seen: HashSet<Vec<String>>,
    /// Templates being walked, to stop recursion (and bound it by depth).
    active: Vec<&'t str>,
}

impl<'t> Walker<'t> {
    fn push(&mut self, chain: Vec<String>) {
        if !chain.is_empty() && self.seen.insert(chain.clone()) {
            self.out.push(chain);
        }
    }

    fn nodes(&mut self, nodes: &'t [Node], dot_is_root: bool) {
        for n in nodes {
            match n {
                Node::Text(_) | Node::Break | Node::Continue => {}
                Node::Action(p) => self.pipe(p, dot_is_root),
                Node::If(c) | Node::With(c) => {
                    let with = matches!(n, Node::With(_));
                    for (p, list) in &c.branches {
                        self.pipe(p, dot_is_root);
                        self.nodes(list, dot_is_root && !with);
                    }
                    if let Some(list) = &c.else_list {
                        self.nodes(list, dot_is_root);
                    }
                }
                Node::Range(r) => {
                    self.pipe(&r.pipe, dot_is_root);
                    self.nodes(&r.list, false);
                    if let Some(list) = &r.else_list {
                        self.nodes(list, dot_is_root);
                    }
                }
                Node::Template(call) => {
                    let Some(pipe) = &call.pipe else { continue };
                    self.pipe(pipe, dot_is_root);
                    let passes_root = match single_arg(pipe) {
                        Some(ArgKind::Dot) => dot_is_root,
                        Some(ArgKind::Variable(name, fields)) => name == "$" && fields.is_empty(),
                        _ => false,
                    };
                    let name = call.name.as_str();
                    if passes_root
                        && !self.active.contains(&name)
                        && self.active.len() < MAX_DEPTH
                        && let Some(body) = self.defines.get(name)
                    {
                        self.active.push(name);
                        self.nodes(body, true);
                        self.active.pop();
                    }
                }
            }
        }
    }

    fn pipe(&mut self, p: &'t Pipe, dot_is_root: bool) {
        for cmd in &p.cmds {
            for arg in &cmd.args {
                self.arg(arg, dot_is_root);
            }
        }
    }

    fn arg(&mut self, arg: &'t Arg, dot_is_root: bool) {
        match &arg.kind {
            ArgKind::Field(fields) if dot_is_root => self.push(fields.clone()),
            ArgKind::Variable(name, fields) if name == "$" => self.push(fields.clone()),
            ArgKind::Pipe(p) => self.pipe(p, dot_is_root),
            ArgKind::Chain(base, fields) => {
                // `(.a.b).c` reads `.a.b.c`.
                if let ArgKind::Pipe(p) = &base.kind
                    && let Some(mut chain) = root_chain(p, dot_is_root)
                {
                    chain.extend(fields.iter().cloned());
                    self.push(chain);
                } else {
                    self.arg(base, dot_is_root);
                }
            }
            _ => {}
        }
    }
}

/// The argument of a pipeline made of one single-word command.
fn single_arg(p: &Pipe) -> Option<&ArgKind> {
    match p.cmds.as_slice() {
        [cmd] if cmd.args.len() == 1 => cmd.args.first().map(|a| &a.kind),
        _ => None,
    }
}

/// The root chain a parenthesised pipeline denotes, if it is just `.x.y`, `$.x.y`, `.` or `$`.
fn root_chain(p: &Pipe, dot_is_root: bool) -> Option<Vec<String>> {
    match single_arg(p)? {
        ArgKind::Field(f) if dot_is_root => Some(f.clone()),
        ArgKind::Dot if dot_is_root => Some(Vec::new()),
        ArgKind::Variable(name, f) if name == "$" => Some(f.clone()),
        ArgKind::Pipe(inner) => root_chain(inner, dot_is_root),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::Template;

    fn refs(src: &str) -> Vec<Vec<String>> {
        match Template::parse(src) {
            Ok(t) => t.root_references(),
            Err(e) => panic!("{src}: {e}"),
        }
    }

    fn chains(list: &[&[&str]]) -> Vec<Vec<String>> {
        list.iter()
            .map(|c| c.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn fields_and_dollar_chains_at_root() {
        assert_eq!(
            refs("{{.steps.a.output.x}} {{$.params.p}}"),
            chains(&[&["steps", "a", "output", "x"], &["params", "p"]])
        );
        assert_eq!(
            refs("{{json .steps.get.output}}{{.a}}{{.a}}"),
            chains(&[&["steps", "get", "output"], &["a"]])
        );
        assert_eq!(refs("{{index . \"steps\" \"a\"}}{{.}}{{$}}"), chains(&[]));
    }

    #[test]
    fn rebound_dot_is_skipped_except_through_dollar() {
        let src = "{{range .items}}{{.name}}{{$.params.x}}{{else}}{{.empty}}{{end}}\
                   {{with .w}}{{.inner}}{{else}}{{.fallback}}{{end}}\
                   {{if .c}}{{.in_if}}{{end}}";
        assert_eq!(
            refs(src),
            chains(&[
                &["items"],
                &["params", "x"],
                &["empty"],
                &["w"],
                &["fallback"],
                &["c"],
                &["in_if"]
            ])
        );
        assert_eq!(
            refs("{{with .a}}{{else with .b}}{{.c}}{{end}}"),
            chains(&[&["a"], &["b"]])
        );
    }

    #[test]
    fn parentheses_and_variables() {
        assert_eq!(refs("{{(.a.b).c}}"), chains(&[&["a", "b", "c"]]));
        assert_eq!(refs("{{($.a).c}}"), chains(&[&["a", "c"]]));
        assert_eq!(refs("{{$x := .steps}}{{$x.a}}"), chains(&[&["steps"]]));
        assert_eq!(refs("{{(index .m 0).name}}"), chains(&[&["m"]]));
    }

    #[test]
    fn template_calls_with_root_are_followed_once() {
        let src = r#"{{define "t"}}{{.deep}}{{template "t" .}}{{end}}{{template "t" .}}{{template "u" .x}}{{define "u"}}{{.rel}}{{end}}"#;
        assert_eq!(refs(src), chains(&[&["deep"], &["x"]]));
    }
}
