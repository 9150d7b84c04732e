//! [`Value`]: the replies vmcp reads, as a small enum of its own, so that callers match on five
//! shapes and never on the `redis` crate's types (which grow with RESP3).

use bytes::Bytes;

/// One reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// No value ("no such key").
    Nil,
    /// An integer.
    Int(i64),
    /// A bulk string.
    Data(Bytes),
    /// `OK` and other simple strings.
    Status(String),
    /// The server refused this command, e.g. `WRONGTYPE Operation against a key...` (the
    /// connection is still fine).
    Error(String),
    /// A list of values.
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

impl From<redis::Value> for Value {
    fn from(v: redis::Value) -> Self {
        use redis::Value as R;
        match v {
            R::Nil => Value::Nil,
            R::Int(n) => Value::Int(n),
            R::BulkString(b) => Value::Data(b.into()),
            R::SimpleString(s) => Value::Status(s),
            R::Okay => Value::Status("OK".into()),
            R::Array(items) | R::Set(items) => {
                Value::Array(items.into_iter().map(Value::from).collect())
            }
            R::Map(pairs) => Value::Array(
                pairs
                    .into_iter()
                    .flat_map(|(k, v)| [Value::from(k), Value::from(v)])
                    .collect(),
            ),
            R::Attribute { data, .. } => Value::from(*data),
            R::Double(d) => Value::Status(d.to_string()),
            R::Boolean(b) => Value::Int(i64::from(b)),
            R::VerbatimString { text, .. } => Value::Data(text.into()),
            R::BigNumber(n) => Value::Status(String::from_utf8_lossy(&n).into_owned()),
            R::Push { data, .. } => Value::Array(data.into_iter().map(Value::from).collect()),
            // The line as Redis sent it: code, then details (callers test the code).
            R::ServerError(e) => Value::Error(match e.details() {
                Some(details) => format!("{} {details}", e.code()),
                None => e.code().to_owned(),
            }),
            // `redis::Value` is non-exhaustive; a shape vmcp never asks for.
            other => Value::Status(format!("{other:?}")),
        }
    }
}
