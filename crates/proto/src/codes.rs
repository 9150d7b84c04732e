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
