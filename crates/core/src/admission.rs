//! The admission seam: one decision for both listing and calling, so "list says yes, call says no"
//! cannot happen. Allow-all unless an authorizer is configured. Who asks is the [`Identity`]
//! incoming authentication produced; what is asked about is a [`Target`]: the advertised item,
//! the backend behind it and its advertised definition (a tool's annotations live there).

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

/// The item an action is about.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// Tool, resource or prompt.
    pub kind: Kind,
    /// The advertised tool or prompt name, the exact resource URI, or a template's URI template.
    pub name: &'a str,
    /// The backend that serves it, when it exists.
    pub backend: Option<&'a str>,
    /// Its advertised definition, when it exists (a tool's annotations are read from it).
    pub definition: Option<&'a Value>,
}

impl<'a> Target<'a> {
    /// An item with nothing known about it but its kind and name (e.g. a name no backend has).
    pub fn named(kind: Kind, name: &'a str) -> Self {
        Self {
            kind,
            name,
            backend: None,
            definition: None,
        }
    }
}

/// One thing an identity wants to do.
#[derive(Debug, Clone, Copy)]
pub enum Action<'a> {
    /// See an item in a list: admitted when some call, read or get of it can be admitted.
    List(Target<'a>),
    /// Call a tool with arguments.
    CallTool(Target<'a>, Option<&'a Value>),
    /// Read a resource (the concrete URI).
    ReadResource(Target<'a>),
    /// Get a prompt with arguments.
    GetPrompt(Target<'a>, Option<&'a Value>),
}

impl Action<'_> {
    /// The item the action is about.
    pub fn target(&self) -> &Target<'_> {
        match self {
            Action::List(t)
            | Action::CallTool(t, _)
            | Action::ReadResource(t)
            | Action::GetPrompt(t, _) => t,
        }
    }
}

/// A decision and what determined it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// Whether the action is admitted.
    pub allowed: bool,
    /// The policies that determined it (ids or positions); empty for a default deny.
    pub policies: Vec<String>,
    /// Evaluation errors (any makes the decision a deny: fail closed).
    pub errors: Vec<String>,
}

impl Decision {
    /// Admitted, by nothing in particular.
    pub fn allow() -> Self {
        Self {
            allowed: true,
            ..Self::default()
        }
    }
}

/// Decides whether an identity may perform an action.
pub trait Authorizer: Send + Sync {
    /// The decision for `identity` doing `action`, with what determined it.
    fn decide(&self, identity: &Identity, action: Action<'_>) -> Decision;

    /// True when `identity` may do `action`.
    fn admit(&self, identity: &Identity, action: Action<'_>) -> bool {
        self.decide(identity, action).allowed
    }

    /// True when every identity may do everything, so lists need no per-item check and unknown
    /// names can be reported as unknown (with an authorizer they are denied like known ones, so
    /// a denial does not tell whether the name exists).
    fn admits_everything(&self) -> bool {
        false
    }
}

/// Admits everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

impl Authorizer for AllowAll {
    fn decide(&self, _identity: &Identity, _action: Action<'_>) -> Decision {
        Decision::allow()
    }

    fn admit(&self, _identity: &Identity, _action: Action<'_>) -> bool {
        true
    }

    fn admits_everything(&self) -> bool {
        true
    }
}
