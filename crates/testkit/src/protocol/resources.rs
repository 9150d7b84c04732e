//! The fixture's resources: two static ones and one template.
//!
//! `fixture://shared/info` is served by every fixture so a gateway in front of two of them
//! sees the same URI twice.

use serde_json::{Value, json};

use super::page::paginate;
use super::rpc::{RpcError, str_param};

/// URI of the resource every fixture serves.
const SHARED_URI: &str = "fixture://shared/info";

/// The resource catalogue of one fixture.
pub(crate) struct Resources {
    server_name: String,
    resources: Vec<Value>,
    templates: Vec<Value>,
}

impl Resources {
    pub(crate) fn new(server_name: &str) -> Self {
        let resources = vec![
            json!({
                "uri": readme_uri(server_name),
                "name": "readme",
                "title": format!("Readme of {server_name}"),
                "mimeType": "text/plain"
            }),
            json!({
                "uri": SHARED_URI,
                "name": "info",
                "description": "Served by every fixture, to test duplicate URIs",
                "mimeType": "text/plain"
            }),
        ];
        let templates = vec![json!({
            "uriTemplate": item_template(server_name),
            "name": "items",
            "description": "Item by id",
            "mimeType": "text/plain"
        })];
        Self {
            server_name: server_name.to_owned(),
            resources,
            templates,
        }
    }

    /// `resources/list`.
    pub(crate) fn list(&self, params: &Value) -> Result<Value, RpcError> {
        paginate(&self.resources, params, "resources")
    }

    /// `resources/templates/list`.
    pub(crate) fn list_templates(&self, params: &Value) -> Result<Value, RpcError> {
        paginate(&self.templates, params, "resourceTemplates")
    }

    /// `resources/read`.
    pub(crate) fn read(&self, params: &Value) -> Result<Value, RpcError> {
        let uri = str_param(params, "uri")?;
        let name = &self.server_name;
        let text = if uri == readme_uri(name) {
            format!("readme of {name}")
        } else if uri == SHARED_URI {
            format!("shared from {name}")
        } else if let Some(id) = self.item_id(uri) {
            format!("item {id} of {name}")
        } else {
            return Err(RpcError::resource_not_found(uri));
        };
        Ok(json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": text }] }))
    }

    /// Whether `uri` is this fixture's item template (for completion).
    pub(crate) fn is_item_template(&self, uri: &str) -> bool {
        uri == item_template(&self.server_name)
    }

    /// The `{id}` of `fixture://NAME/items/{id}`, if `uri` matches the template.
    fn item_id<'a>(&self, uri: &'a str) -> Option<&'a str> {
        let id = uri
            .strip_prefix("fixture://")?
            .strip_prefix(self.server_name.as_str())?
            .strip_prefix("/items/")?;
        (!id.is_empty() && !id.contains('/')).then_some(id)
    }
}

fn readme_uri(server_name: &str) -> String {
    format!("fixture://{server_name}/readme")
}

fn item_template(server_name: &str) -> String {
    format!("fixture://{server_name}/items/{{id}}")
}
