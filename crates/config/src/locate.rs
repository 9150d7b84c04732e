//! Finds the line of a key path in YAML text, for error messages.
//!
//! The YAML parser keeps no positions in its values, so this reads the text itself.
//! It understands block style (what people write): nested mappings by indentation,
//! `- ` sequence items (also `key:` followed by items at the same indent), and skips
//! comments and blank lines. Inside flow style (`[a, b]`, `{a: 1}`) it stops at the
//! deepest key it found, which is still the right line for one-line flow values.

use crate::error::Seg;

/// One logical line: a `- ` item marker and the text after it become two entries with
/// the same line number, so an item's first key sits at the indent of its siblings.
#[derive(Debug)]
struct Line<'t> {
    no: usize,
    indent: usize,
    text: &'t str,
}

/// The YAML text, split once, answering many path queries.
pub(crate) struct Locator<'t> {
    lines: Vec<Line<'t>>,
}

impl<'t> Locator<'t> {
    /// Splits `source` into logical lines.
    pub(crate) fn new(source: &'t str) -> Self {
        let mut lines = Vec::new();
        for (i, raw) in source.lines().enumerate() {
            let body = raw.trim_end();
            let trimmed = body.trim_start();
            if trimmed.is_empty()
                || trimmed.starts_with('#')
                || trimmed.starts_with('%')
                || trimmed == "---"
                || trimmed == "..."
            {
                continue;
            }
            let mut indent = body.len() - trimmed.len();
            let mut text = trimmed;
            while text == "-" || text.starts_with("- ") {
                lines.push(Line {
                    no: i + 1,
                    indent,
                    text: "-",
                });
                let rest = &text[1..];
                let after = rest.trim_start();
                indent += 1 + rest.len() - after.len();
                text = after;
            }
            if !text.is_empty() {
                lines.push(Line {
                    no: i + 1,
                    indent,
                    text,
                });
            }
        }
        Self { lines }
    }

    /// The 1-based line of `path`, or of the deepest prefix of it that was found.
    pub(crate) fn line_of(&self, path: &[Seg]) -> Option<usize> {
        let mut lo = 0;
        let mut hi = self.lines.len();
        let mut found = None;
        for seg in path {
            if lo >= hi {
                break;
            }
            let base = self.lines[lo].indent;
            let at_base = (lo..hi).filter(|&i| self.lines[i].indent == base);
            let hit = match seg {
                Seg::Key(k) => at_base
                    .clone()
                    .find(|&i| key_value(self.lines[i].text, k).is_some()),
                Seg::Index(n) => at_base.filter(|&i| self.lines[i].text == "-").nth(*n),
            };
            let Some(idx) = hit else { break };
            let line = &self.lines[idx];
            found = Some(line.no);
            let mut end = idx + 1;
            while end < hi && self.lines[end].indent > line.indent {
                end += 1;
            }
            // `key:` followed by `- item` lines at the key's own indent.
            let opens_block = matches!(seg, Seg::Key(k) if key_value(line.text, k)
                .is_some_and(|v| v.is_empty() || v.starts_with('#')));
            if opens_block && end == idx + 1 {
                while end < hi
                    && (self.lines[end].indent > line.indent
                        || (self.lines[end].indent == line.indent && self.lines[end].text == "-"))
                {
                    end += 1;
                }
            }
            lo = idx + 1;
            hi = end;
        }
        found
    }
}

/// If `text` is `key: value` for this key (plain or quoted), the trimmed value text.
fn key_value<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let rest = [("", ""), ("\"", "\""), ("'", "'")]
        .iter()
        .find_map(|(open, close)| {
            text.strip_prefix(open)?
                .strip_prefix(key)?
                .strip_prefix(close)
        })?;
    let rest = rest.trim_start_matches(' ').strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then(|| rest.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(s: &[&str]) -> Vec<Seg> {
        s.iter()
            .map(|p| match p.parse::<usize>() {
                Ok(n) => Seg::Index(n),
                Err(_) => Seg::Key((*p).to_owned()),
            })
            .collect()
    }

    const DOC: &str = "\
# comment
name: demo          # 2
backends:           # 3
  - name: a         # 4
    url: http://x   # 5
  - name: b         # 6

    transport: stdio # 8
    args: [x, y]    # 9
aggregation:        # 10
  tools:            # 11
  - workload: a     # 12
    overrides:      # 13
      \"fetch\":      # 14
        name: f2    # 15
  - workload: b     # 16
    filter:         # 17
      - one         # 18
      - two         # 19
server:             # 20
  port: 1           # 21
";

    #[test]
    fn finds_nested_keys_and_items() {
        let loc = Locator::new(DOC);
        let at = |p: &[&str]| loc.line_of(&path(p));
        assert_eq!(at(&["name"]), Some(2));
        assert_eq!(at(&["backends"]), Some(3));
        assert_eq!(at(&["backends", "0"]), Some(4));
        assert_eq!(at(&["backends", "0", "name"]), Some(4));
        assert_eq!(at(&["backends", "0", "url"]), Some(5));
        assert_eq!(at(&["backends", "1", "transport"]), Some(8));
        assert_eq!(
            at(&["aggregation", "tools", "0", "overrides", "fetch", "name"]),
            Some(15)
        );
        assert_eq!(at(&["aggregation", "tools", "1", "workload"]), Some(16));
        assert_eq!(at(&["aggregation", "tools", "1", "filter", "1"]), Some(19));
        assert_eq!(at(&["server", "port"]), Some(21));
    }

    #[test]
    fn falls_back_to_deepest_found() {
        let loc = Locator::new(DOC);
        let at = |p: &[&str]| loc.line_of(&path(p));
        // Flow sequence: the key's own line.
        assert_eq!(at(&["backends", "1", "args", "1"]), Some(9));
        // Missing key: its parent.
        assert_eq!(at(&["backends", "0", "transport"]), Some(4));
        // Does not leak into a sibling item.
        assert_eq!(at(&["backends", "0", "args"]), Some(4));
        assert_eq!(at(&["nothing"]), None);
    }

    #[test]
    fn nested_dashes_and_root_sequence() {
        let loc = Locator::new("- - a\n  - b\n- c\n");
        assert_eq!(loc.line_of(&path(&["0", "1"])), Some(2));
        assert_eq!(loc.line_of(&path(&["1"])), Some(3));
    }
}
