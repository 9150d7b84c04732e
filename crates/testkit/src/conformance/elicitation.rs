//! The `elicitation/create` requests of the three elicitation tools: a plain form, a form
//! whose every primitive field has a default (SEP-1034), and a form with every enum variant
//! (SEP-1330).

use serde_json::{Value, json};

/// `test_elicitation`: a username and an email, both required, under `message`.
pub(crate) fn user_details(message: &str) -> Value {
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "username": { "type": "string", "description": "User's response" },
                "email": { "type": "string", "description": "User's email address" }
            },
            "required": ["username", "email"]
        }
    })
}

/// `test_elicitation_sep1034_defaults`: one field per primitive type, each with a default.
pub(crate) fn with_defaults() -> Value {
    json!({
        "message": "Please review these details; every field has a default.",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": { "type": "string", "description": "User name", "default": "John Doe" },
                "age": { "type": "integer", "description": "User age", "default": 30 },
                "score": { "type": "number", "description": "User score", "default": 95.5 },
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active"
                },
                "verified": {
                    "type": "boolean",
                    "description": "Verification status",
                    "default": true
                }
            },
            "required": []
        }
    })
}

/// `test_elicitation_sep1330_enums`: untitled and titled single-select, the legacy
/// `enumNames` form, untitled and titled multi-select.
pub(crate) fn with_enums() -> Value {
    json!({
        "message": "Please pick from each kind of list.",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Untitled single-select",
                    "enum": ["option1", "option2", "option3"]
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Titled single-select",
                    "oneOf": [
                        { "const": "value1", "title": "First Option" },
                        { "const": "value2", "title": "Second Option" },
                        { "const": "value3", "title": "Third Option" }
                    ]
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Legacy titled single-select (enumNames)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Untitled multi-select",
                    "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Titled multi-select",
                    "items": {
                        "anyOf": [
                            { "const": "value1", "title": "First Choice" },
                            { "const": "value2", "title": "Second Choice" },
                            { "const": "value3", "title": "Third Choice" }
                        ]
                    }
                }
            },
            "required": []
        }
    })
}

/// One line describing the client's elicitation answer: `action=..., content={...}`.
pub(crate) fn describe(answer: &Value) -> String {
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let content = answer.get("content").cloned().unwrap_or(Value::Null);
    format!("action={action}, content={content}")
}
