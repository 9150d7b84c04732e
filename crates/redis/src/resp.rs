//! RESP2, the Redis wire format: commands go out as arrays of bulk strings, replies come back as
//! one of five types. The parser never consumes a partial reply, so it can be fed a socket's
//! reads as they come.

use bytes::{Buf, Bytes, BytesMut};

/// One reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A null bulk string or array (`$-1`, `*-1`): "no such key".
    Nil,
    /// `:n`.
    Int(i64),
    /// A bulk string.
    Data(Bytes),
    /// `+OK` and friends.
    Status(String),
    /// `-ERR ...`: the server refused this command (the connection is still fine).
    Error(String),
    /// `*n` followed by n values.
    Array(Vec<Value>),
}

impl Value {
    /// The bytes of a bulk string or status.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Data(b) => Some(b),
            Value::Status(s) => Some(s.as_bytes()),
            _ => None,
        }
    }
}

/// Malformed bytes from the server: the connection cannot be trusted after this.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed reply from Redis: {0}")]
pub struct ProtocolError(pub String);

/// Appends one command to `out`.
pub fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.push(b'*');
    out.extend_from_slice(args.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    for a in args {
        out.push(b'$');
        out.extend_from_slice(a.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Takes one whole reply off the front of `buf`; None when `buf` holds only part of one.
pub fn parse(buf: &mut BytesMut) -> Result<Option<Value>, ProtocolError> {
    match parse_at(buf, 0)? {
        Some((value, used)) => {
            buf.advance(used);
            Ok(Some(value))
        }
        None => Ok(None),
    }
}

/// Nesting deeper than this is not something Redis sends to us; refuse rather than recurse.
const MAX_DEPTH: usize = 8;
/// A bulk string or array longer than this is refused (the gateway's records are small).
const MAX_LEN: i64 = 512 * 1024 * 1024;

fn parse_at(buf: &[u8], depth: usize) -> Result<Option<(Value, usize)>, ProtocolError> {
    if depth > MAX_DEPTH {
        return Err(ProtocolError("replies nested too deeply".into()));
    }
    let Some((line, rest)) = line(buf) else {
        return Ok(None);
    };
    let Some((&kind, text)) = line.split_first() else {
        return Err(ProtocolError("empty line".into()));
    };
    let header = buf.len() - rest.len();
    let text_str = || {
        std::str::from_utf8(text)
            .map(str::to_owned)
            .map_err(|_| ProtocolError("a status line is not UTF-8".into()))
    };
    match kind {
        b'+' => Ok(Some((Value::Status(text_str()?), header))),
        b'-' => Ok(Some((Value::Error(text_str()?), header))),
        b':' => Ok(Some((Value::Int(number(text)?), header))),
        b'$' => {
            let n = number(text)?;
            if n < 0 {
                return Ok(Some((Value::Nil, header)));
            }
            if n > MAX_LEN {
                return Err(ProtocolError(format!("bulk string of {n} bytes")));
            }
            let n = n as usize;
            if rest.len() < n + 2 {
                return Ok(None);
            }
            if &rest[n..n + 2] != b"\r\n" {
                return Err(ProtocolError("bulk string not ended by CRLF".into()));
            }
            let data = Bytes::copy_from_slice(&rest[..n]);
            Ok(Some((Value::Data(data), header + n + 2)))
        }
        b'*' => {
            let n = number(text)?;
            if n < 0 {
                return Ok(Some((Value::Nil, header)));
            }
            if n > MAX_LEN {
                return Err(ProtocolError(format!("array of {n} items")));
            }
            let mut items = Vec::with_capacity((n as usize).min(1024));
            let mut used = header;
            for _ in 0..n {
                match parse_at(&buf[used..], depth + 1)? {
                    Some((v, u)) => {
                        items.push(v);
                        used += u;
                    }
                    None => return Ok(None),
                }
            }
            Ok(Some((Value::Array(items), used)))
        }
        other => Err(ProtocolError(format!(
            "unknown reply type {:?}",
            char::from(other)
        ))),
    }
}

/// The line before the first CRLF, and what follows it.
fn line(buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    Some((&buf[..end], &buf[end + 2..]))
}

fn number(text: &[u8]) -> Result<i64, ProtocolError> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ProtocolError(format!("not a number: {:?}", String::from_utf8_lossy(text))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(bytes: &[u8]) -> Vec<Value> {
        let mut buf = BytesMut::from(bytes);
        let mut out = Vec::new();
        while let Some(v) = parse(&mut buf).expect("valid") {
            out.push(v);
        }
        assert!(buf.is_empty(), "left over: {buf:?}");
        out
    }

    #[test]
    fn encodes_commands_as_arrays_of_bulk_strings() {
        let mut out = Vec::new();
        encode(&mut out, &[b"SET", b"k", b"a\r\nb"]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\na\r\nb\r\n");
    }

    #[test]
    fn parses_every_type() {
        let got = parse_all(
            b"+OK\r\n-ERR no\r\n:42\r\n$3\r\nabc\r\n$-1\r\n*2\r\n:1\r\n$0\r\n\r\n*-1\r\n",
        );
        assert_eq!(
            got,
            vec![
                Value::Status("OK".into()),
                Value::Error("ERR no".into()),
                Value::Int(42),
                Value::Data(Bytes::from_static(b"abc")),
                Value::Nil,
                Value::Array(vec![Value::Int(1), Value::Data(Bytes::new())]),
                Value::Nil,
            ]
        );
    }

    #[test]
    fn a_partial_reply_is_left_for_later_at_every_split() {
        let whole: &[u8] = b"*3\r\n$5\r\nhello\r\n:-7\r\n*1\r\n+x\r\n";
        for cut in 0..whole.len() {
            let mut buf = BytesMut::from(&whole[..cut]);
            assert_eq!(parse(&mut buf), Ok(None), "cut at {cut}");
            assert_eq!(buf.len(), cut, "nothing consumed at {cut}");
            buf.extend_from_slice(&whole[cut..]);
            assert!(matches!(parse(&mut buf), Ok(Some(Value::Array(_)))));
            assert!(buf.is_empty());
        }
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        for bad in [
            &b"?what\r\n"[..],
            b":12x\r\n",
            b"$3\r\nabcd\r\n",
            b"\r\n",
            b"$99999999999\r\n",
        ] {
            assert!(parse(&mut BytesMut::from(bad)).is_err(), "{bad:?}");
        }
        let deep = "*1\r\n".repeat(20) + ":1\r\n";
        assert!(parse(&mut BytesMut::from(deep.as_bytes())).is_err());
    }
}
