//! The two public error types and the byte-offset to line/column conversion they share.

/// A template that does not parse. `line` and `column` are 1-based; the column counts
/// characters, not bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// What is wrong, in Go's wording where Go has one (`function "foo" not defined`).
    pub message: String,
    /// 1-based line of the offending token.
    pub line: usize,
    /// 1-based column (in characters) of the offending token.
    pub column: usize,
}

/// A template that failed while executing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RenderError {
    /// What went wrong and, where useful, the action and its position:
    /// `line 1, column 3: executing <.a.b>: can't evaluate field b in type string`.
    pub message: String,
}

impl ParseError {
    pub(crate) fn at(src: &str, offset: usize, message: impl Into<String>) -> ParseError {
        let (line, column) = line_col(src, offset);
        ParseError {
            message: message.into(),
            line,
            column,
        }
    }
}

/// 1-based line and character column of byte `offset` in `src`. Only called on the error path,
/// so the linear scan costs nothing in the common case.
pub(crate) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &src[..offset];
    let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = 1 + before[line_start..].chars().count();
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_not_bytes() {
        assert_eq!(line_col("abc", 0), (1, 1));
        assert_eq!(line_col("a\nbc", 3), (2, 2));
        assert_eq!(line_col("é{{", 2), (1, 2));
        assert_eq!(line_col("ab", 99), (1, 3));
    }

    #[test]
    fn parse_error_display_is_line_column_message() {
        let e = ParseError::at("x\n {{", 3, "unclosed action");
        assert_eq!(e.to_string(), "line 2, column 2: unclosed action");
    }
}
