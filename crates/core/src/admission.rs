//! The admission seam: one decision for both listing and calling, so "list says yes, call says no"
//! cannot happen. Allow-all until authorization lands. Who asks is the [`Identity`] incoming
//! authentication produced.

use serde_json::Value;

pub use vmcp_auth::Identity;

/// What kind of capability an action touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A tool.
    Tool,
    /// A resource or resource template.
    Resource,
    /// A prompt.
    Prompt,
}

/// One thing an identity wants to do.
#[derive(Debug, Clone, Copy)]
pub enum Action<'a> {
    /// See a capability in a list.
    List(Kind, &'a str),
    /// Call a tool with arguments.
    CallTool(&'a str, Option<&'a Value>),
    /// Read a resource (the concrete URI).
    ReadResource(&'a str),
    /// Get a prompt.
    GetPrompt(&'a str),
}

/// Decides whether an identity may perform an action.
pub trait Authorizer: Send + Sync {
    /// True when `identity` may do `action`.
    fn admit(&self, identity: &Identity, action: Action<'_>) -> bool;

    /// True when every identity may do everything, so lists need no per-item check.
    fn admits_everything(&self) -> bool {
        false
    }
}

/// Admits everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

impl Authorizer for AllowAll {
    fn admit(&self, _identity: &Identity, _action: Action<'_>) -> bool {
        true
    }

    fn admits_everything(&self) -> bool {
        true
    }
}
