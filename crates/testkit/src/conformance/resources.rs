//! The conformance resources: static text and binary resources, one resource to watch,
//! and the `test://template/{id}/data` template.

use serde_json::{Value, json};

use super::content::RED_PIXEL_PNG;
use crate::protocol::rpc::{RpcError, str_param};

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";

/// `resources/list`.
pub(crate) fn list() -> Value {
    json!({ "resources": [
        {
            "uri": STATIC_TEXT,
            "name": "static-text",
            "description": "A static text resource",
            "mimeType": "text/plain"
        },
        {
            "uri": STATIC_BINARY,
            "name": "static-binary",
            "description": "A static binary resource (a 1x1 PNG)",
            "mimeType": "image/png"
        },
        {
            "uri": WATCHED,
            "name": "watched-resource",
            "description": "A resource clients may subscribe to",
            "mimeType": "text/plain"
        }
    ] })
}

/// `resources/templates/list`.
pub(crate) fn templates() -> Value {
    json!({ "resourceTemplates": [{
        "uriTemplate": TEMPLATE,
        "name": "template-data",
        "description": "Data for the given id",
        "mimeType": "application/json"
    }] })
}

/// Whether `uri` names one of [`list`]'s resources or matches the template.
///
/// # Errors
///
/// [`not_found`] if it does not.
pub(crate) fn check_exists(uri: &str) -> Result<(), RpcError> {
    if [STATIC_TEXT, STATIC_BINARY, WATCHED].contains(&uri) || template_id(uri).is_some() {
        Ok(())
    } else {
        Err(not_found(uri))
    }
}

/// `resources/read`.
///
/// # Errors
///
/// -32602 `Resource not found` with `data.uri` for an unknown URI.
pub(crate) fn read(params: &Value) -> Result<Value, RpcError> {
    let uri = str_param(params, "uri")?;
    let content = match uri {
        STATIC_TEXT => json!({
            "uri": uri,
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource."
        }),
        STATIC_BINARY => json!({ "uri": uri, "mimeType": "image/png", "blob": RED_PIXEL_PNG }),
        WATCHED => json!({
            "uri": uri,
            "mimeType": "text/plain",
            "text": "This resource never changes, but you may watch it."
        }),
        _ => match template_id(uri) {
            Some(id) => {
                let data =
                    json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
                json!({ "uri": uri, "mimeType": "application/json", "text": data.to_string() })
            }
            None => return Err(not_found(uri)),
        },
    };
    Ok(json!({ "contents": [content] }))
}

/// -32602 with the URI in `data` (the SEP-2164 shape, also valid under earlier revisions).
fn not_found(uri: &str) -> RpcError {
    RpcError {
        data: Some(json!({ "uri": uri })),
        ..RpcError::invalid_params("Resource not found")
    }
}

/// The `{id}` of a URI matching `test://template/{id}/data`.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}
