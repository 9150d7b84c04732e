//! Matching a concrete URI against an RFC 6570 URI template, to route a templated
//! `resources/read` (and completion refs) to the backend that advertised the template.

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    /// A variable expression; `slash` when the expansion may contain `/` (`{+x}`, `{#x}`).
    Var {
        slash: bool,
        operator: Option<char>,
    },
}

/// A compiled URI template.
#[derive(Debug, Clone, PartialEq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

/// Most backtracking steps a match may take, so a hostile template cannot burn CPU.
const MAX_STEPS: usize = 10_000;

impl UriTemplate {
    /// Parses a template; `None` when its braces do not balance.
    ///
    /// ```
    /// let t = vmcp_core::UriTemplate::parse("file:///logs/{date}.txt").unwrap();
    /// assert!(t.matches("file:///logs/2025-01-01.txt"));
    /// assert!(!t.matches("file:///logs/a/b.txt"));
    /// ```
    pub fn parse(source: &str) -> Option<Self> {
        let mut parts = Vec::new();
        let mut rest = source;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let close = rest[open..].find('}')? + open;
            let expr = &rest[open + 1..close];
            if expr.is_empty() || expr.contains('{') {
                return None;
            }
            let operator = expr.chars().next().filter(|c| "+#./;?&".contains(*c));
            parts.push(Part::Var {
                slash: matches!(operator, Some('+') | Some('#') | Some('/')),
                operator,
            });
            rest = &rest[close + 1..];
        }
        if rest.contains('}') {
            return None;
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        Some(Self {
            source: source.to_string(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether `uri` is an expansion of this template.
    pub fn matches(&self, uri: &str) -> bool {
        let mut steps = 0;
        match_from(&self.parts, uri, &mut steps)
    }
}

fn match_from(parts: &[Part], input: &str, steps: &mut usize) -> bool {
    *steps += 1;
    if *steps > MAX_STEPS {
        return false;
    }
    let Some((first, rest)) = parts.split_first() else {
        return input.is_empty();
    };
    match first {
        Part::Literal(lit) => input
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_from(rest, tail, steps)),
        Part::Var { slash, operator } => {
            // Query-style expressions may expand to nothing at all.
            let optional = matches!(
                operator,
                Some('?') | Some('&') | Some('#') | Some(';') | Some('.') | Some('/')
            );
            if optional && match_from(rest, input, steps) {
                return true;
            }
            let stop = |c: char| !slash && (c == '/' || c == '?' || c == '#');
            let query = matches!(operator, Some('?') | Some('&'));
            let mut end = 0;
            for (i, c) in input.char_indices() {
                if query && c == '#' || !query && stop(c) {
                    break;
                }
                end = i + c.len_utf8();
                if match_from(rest, &input[end..], steps) {
                    return true;
                }
            }
            let _ = end;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(t: &str, u: &str) -> bool {
        UriTemplate::parse(t).unwrap().matches(u)
    }

    #[test]
    fn simple_variables_stop_at_slashes() {
        assert!(m("fixture://a/items/{id}", "fixture://a/items/42"));
        assert!(!m("fixture://a/items/{id}", "fixture://a/items/"));
        assert!(!m("fixture://a/items/{id}", "fixture://a/items/4/2"));
        assert!(!m("fixture://a/items/{id}", "fixture://b/items/42"));
        assert!(m("db://{schema}/{table}", "db://public/users"));
    }

    #[test]
    fn reserved_expansion_spans_slashes() {
        assert!(m("file:///{+path}", "file:///a/b/c.txt"));
        assert!(m(
            "repo://{owner}/{repo}/blob/{+path}",
            "repo://o/r/blob/src/main.rs"
        ));
    }

    #[test]
    fn query_expansion_is_optional() {
        assert!(m("search://q{?term,limit}", "search://q?term=x&limit=2"));
        assert!(m("search://q{?term}", "search://q"));
    }

    #[test]
    fn literal_template_matches_only_itself() {
        assert!(m("a://b", "a://b"));
        assert!(!m("a://b", "a://bc"));
    }

    #[test]
    fn unbalanced_braces_are_rejected() {
        assert!(UriTemplate::parse("a://{x").is_none());
        assert!(UriTemplate::parse("a://x}").is_none());
        assert!(UriTemplate::parse("a://{}").is_none());
    }

    #[test]
    fn hostile_template_is_bounded() {
        let t = UriTemplate::parse(&"{+a}".repeat(30)).unwrap();
        let uri = format!("{}!", "x".repeat(200));
        // Must return (either way) quickly instead of exploring every split.
        let _ = t.matches(&uri);
    }
}
