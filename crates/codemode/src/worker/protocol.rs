//! The wire messages between host and worker, one JSON object per line.

use std::io::{self, BufRead, Read};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::{MAX_MESSAGE_BYTES, ToolInfo};

/// Longest line either side accepts: a message of [`MAX_MESSAGE_BYTES`] plus its envelope.
pub(super) const MAX_LINE_BYTES: usize = MAX_MESSAGE_BYTES + 64 * 1024;
/// Longest job line (script and data).
pub(super) const MAX_JOB_BYTES: usize = 2 * MAX_MESSAGE_BYTES;

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum ToHost<'a> {
    Call(CallOut<'a>),
    Calls(Vec<CallOut<'a>>),
    Done(DoneOut<'a>),
}

#[derive(Serialize)]
pub(super) struct CallOut<'a> {
    pub(super) id: u64,
    pub(super) name: &'a str,
    pub(super) arguments: &'a Value,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum DoneOut<'a> {
    Ok {
        value: &'a Value,
        logs: &'a [String],
    },
    Error(&'a str),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum FromWorker {
    Call(CallIn),
    Calls(Vec<CallIn>),
    Done(DoneIn),
}

#[derive(Deserialize)]
pub(super) struct CallIn {
    pub(super) id: u64,
    pub(super) name: String,
    pub(super) arguments: Box<RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum DoneIn {
    Ok {
        value: Box<RawValue>,
        logs: Vec<String>,
    },
    Error(String),
}

#[derive(Serialize)]
pub(super) struct JobOut<'a> {
    pub(super) script: &'a str,
    pub(super) data: &'a Map<String, Value>,
    pub(super) tools: &'a [ToolInfo],
    pub(super) step_limit: u64,
    pub(super) parallel_max_concurrency: usize,
}

#[derive(Deserialize)]
pub(super) struct JobIn {
    pub(super) script: String,
    #[serde(default)]
    pub(super) data: Option<Box<RawValue>>,
    #[serde(default)]
    pub(super) tools: Vec<ToolInfo>,
    pub(super) step_limit: u64,
    pub(super) parallel_max_concurrency: usize,
}

#[derive(Serialize)]
pub(super) struct ResultOut<'a> {
    pub(super) result: ResultBody<'a>,
}

#[derive(Serialize)]
pub(super) struct ResultBody<'a> {
    pub(super) id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ok: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<&'a str>,
}

#[derive(Deserialize)]
pub(super) struct ResultIn {
    pub(super) result: ResultInBody,
}

#[derive(Deserialize)]
pub(super) struct ResultInBody {
    pub(super) id: u64,
    #[serde(default)]
    pub(super) ok: Option<Box<RawValue>>,
    #[serde(default)]
    pub(super) error: Option<String>,
}

pub(super) fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// Reads one line of at most `cap` bytes (without its newline); `None` at end of input.
pub(super) fn read_line_capped(input: &mut impl BufRead, cap: usize) -> io::Result<Option<String>> {
    let mut line = String::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    let n = input.by_ref().take(limit).read_line(&mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if line.ends_with('\n') {
        line.pop();
    } else if line.len() > cap {
        return Err(invalid(format!("line longer than {cap} bytes")));
    }
    Ok(Some(line))
}
