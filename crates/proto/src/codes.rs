//! JSON-RPC and MCP error codes used on both edges.

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (also unknown tool or prompt names).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error (also backend failures that are not the backend's own JSON-RPC error).
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP: the requested resource does not exist.
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// Request was denied by the admission (authorization) seam.
pub const DENIED: i64 = 403;
/// A rate limit is exhausted (ToolHive's code; `data.retryAfterSeconds` says how long to wait).
pub const RATE_LIMITED: i64 = 429;
/// 2026-07-28: HTTP headers do not match the body, or a required header is missing or malformed.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability the request did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the requested protocol version is not supported.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
