//! Authorization with Cedar (`incomingAuth.authz.type: cedar`), evaluated by the official Rust
//! engine over ToolHive's entity model, so ToolHive's policies run unchanged:
//!
//! * principal `Client::"<sub>"` (or `"anonymous"`) with `claim_*` attributes, and its groups and
//!   roles as `<groupEntityType>::"<name>"` parents;
//! * actions `call_tool`, `get_prompt`, `read_resource`;
//! * resources `Tool::"<advertised name>"`, `Prompt::"<advertised name>"`,
//!   `Resource::"<exact URI>"` (templates: the URI template) with `name`, `operation`, `feature`,
//!   `uri`, the tool's annotations and `arg_*`, and the parents `MCP::"<config name>"` and, ours,
//!   `Backend::"<backend name>"`, so one policy can cover a whole backend;
//! * context: `claim_*` and `arg_*`.
//!
//! Default deny, forbid wins, and any evaluation error denies (fail closed), as ToolHive decides.
//! A list decision admits an item when some call to it can be admitted ([`witness`]).

mod entities;
mod lint;
mod scope;
mod witness;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use cedar_policy::{Context, Entities, Entity, EntityUid, Policy, PolicyId, PolicySet, Request};
use miette::Diagnostic;
use serde_json::Value;
use vmcp_core::{Action, Authorizer, Decision, Identity, Kind, Target};

pub use entities::GroupRules;
pub use lint::{Finding, lint};

use crate::scope::{Scope, Subject};
use crate::witness::{ArgUse, Reads};

/// Most callers whose prepared principal is kept.
const PREPARED_CAP: usize = 1024;
/// Most policy slices kept.
const SLICES_CAP: usize = 4096;
/// Decisions remembered per caller (cleared when full): at most `PREPARED_CAP` callers times this
/// many, a few hundred bytes each.
const DECISIONS_CAP: usize = 256;

/// What a decision needs of a caller, computed once per caller (its claims as Cedar values cost
/// more than the decision itself).
struct Prepared {
    principal: Entity,
    /// `entitiesJson`, the principal and the actions: a request adds only its resource.
    entities: Entities,
    ancestors: HashSet<EntityUid>,
    claims: Context,
    /// Keeps the claims alive, so their address (the cache key) is not reused by another caller.
    _claims: Arc<serde_json::Map<String, Value>>,
    /// This caller's decisions that read no arguments, by target name.
    decisions: Mutex<HashMap<String, Vec<(TargetKey, Decision)>>>,
}

/// All of a target that its Cedar resource entity is built from, besides its name: when the
/// policies that can apply read no arguments, these decide the request with the caller's
/// prepared entities (Cedar has no clock and no randomness), so a decision can be remembered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TargetKey {
    kind: Kind,
    backend: Option<String>,
    /// The tool annotations the resource entity carries (`readOnlyHint`, `destructiveHint`,
    /// `idempotentHint`, `openWorldHint`), as the advertised definition declares them.
    hints: [Option<bool>; 4],
}

impl Prepared {
    fn remembered(&self, target: &Target<'_>) -> Option<Decision> {
        let decisions = self.decisions.lock().unwrap_or_else(|e| e.into_inner());
        let found = decisions.get(target.name)?;
        let hints = entities::hints(target);
        found
            .iter()
            .find(|(key, _)| {
                key.kind == target.kind
                    && key.backend.as_deref() == target.backend
                    && key.hints == hints
            })
            .map(|(_, d)| d.clone())
    }

    fn remember(&self, target: &Target<'_>, decision: &Decision) {
        let key = TargetKey {
            kind: target.kind,
            backend: target.backend.map(str::to_owned),
            hints: entities::hints(target),
        };
        let mut decisions = self.decisions.lock().unwrap_or_else(|e| e.into_inner());
        if decisions.len() >= DECISIONS_CAP {
            decisions.clear();
        }
        decisions
            .entry(target.name.to_owned())
            .or_default()
            .push((key, decision.clone()));
    }
}

/// `incomingAuth.authz` for `type: cedar`, resolved.
#[derive(Debug, Clone)]
pub struct PolicySettings {
    /// `policies`: one Cedar policy per string.
    pub policies: Vec<String>,
    /// `entitiesJson`: a JSON array of Cedar entities (parents for groups, roles, ...).
    pub entities_json: Option<String>,
    /// Where groups and roles come from.
    pub groups: GroupRules,
    /// The config's `name`: every resource's parent `MCP::"<name>"`.
    pub server_name: String,
}

/// A policy or entity that cannot be loaded, with where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", location(*policy, *line, *column))]
pub struct LoadError {
    /// The policy's index in `policies` (None: `entitiesJson`).
    pub policy: Option<usize>,
    /// 1-based line within the policy text (0: unknown).
    pub line: usize,
    /// 1-based column within that line (0: unknown).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

fn location(policy: Option<usize>, line: usize, column: usize) -> String {
    match (policy, line) {
        (Some(i), 0) => format!("policies[{i}]: "),
        (Some(i), l) => format!("policies[{i}], line {l} column {column}: "),
        (None, _) => "entitiesJson: ".to_string(),
    }
}

/// 1-based (line, column) of a byte offset in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Parses the policies (ids `policy0`, `policy1`, ... as ToolHive names them).
///
/// # Errors
/// Every policy that does not parse, with its position.
pub fn parse(policies: &[String]) -> Result<PolicySet, Vec<LoadError>> {
    let mut set = PolicySet::new();
    let mut errors = Vec::new();
    for (i, text) in policies.iter().enumerate() {
        match cedar_policy::Policy::parse(Some(PolicyId::new(format!("policy{i}"))), text) {
            Ok(p) => {
                if let Err(e) = set.add(p) {
                    errors.push(LoadError {
                        policy: Some(i),
                        line: 0,
                        column: 0,
                        message: e.to_string(),
                    });
                }
            }
            Err(e) => {
                for err in e.iter() {
                    let offset = err.labels().and_then(|mut l| l.next()).map(|l| l.offset());
                    let (line, column) = offset.map_or((0, 0), |o| line_col(text, o));
                    errors.push(LoadError {
                        policy: Some(i),
                        line,
                        column,
                        message: err.to_string(),
                    });
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(set)
    } else {
        Err(errors)
    }
}

/// The policies that can apply to one scope, and what they read of a request.
type Slice = (Arc<PolicySet>, Reads);

/// The Cedar authorizer behind core's admission seam.
pub struct CedarAuthorizer {
    policies: Vec<(Policy, Scope, Reads)>,
    /// `Action::"call_tool"`, `"get_prompt"`, `"read_resource"`: uid, ancestors, entity.
    actions: Vec<(EntityUid, HashSet<EntityUid>, Entity)>,
    base: Entities,
    engine: cedar_policy::Authorizer,
    settings: PolicySettings,
    args: ArgUse,
    prepared: Mutex<HashMap<(usize, String), Arc<Prepared>>>,
    slices: Mutex<HashMap<Vec<u64>, Slice>>,
}

impl std::fmt::Debug for CedarAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CedarAuthorizer")
            .field("policies", &self.settings.policies.len())
            .finish_non_exhaustive()
    }
}

impl CedarAuthorizer {
    /// Loads the policies and entities.
    ///
    /// # Errors
    /// Every policy that does not parse, and an `entitiesJson` that is not a Cedar entity array.
    pub fn new(settings: PolicySettings) -> Result<Self, Vec<LoadError>> {
        let policies = parse(&settings.policies)?;
        let base = match settings.entities_json.as_deref().map(str::trim) {
            None | Some("") => Entities::empty(),
            Some(json) => serde_json::from_str::<Value>(json)
                .map_err(|e| e.to_string())
                .and_then(|v| Entities::from_json_value(v, None).map_err(|e| e.to_string()))
                .map_err(|message| {
                    vec![LoadError {
                        policy: None,
                        line: 0,
                        column: 0,
                        message,
                    }]
                })?,
        };
        let mut args = ArgUse::default();
        let mut scoped: Vec<(Policy, Scope, Reads)> = Vec::new();
        for p in policies.policies() {
            let json = p.to_json().unwrap_or(Value::Null);
            args.learn(&json);
            scoped.push((p.clone(), Scope::of(&json), Reads::of(&json)));
        }
        // In the order of the config, so slices are built the same way every time.
        scoped.sort_by_key(|(p, _, _)| {
            p.id()
                .to_string()
                .strip_prefix("policy")
                .and_then(|n| n.parse::<usize>().ok())
        });
        let mut actions = Vec::new();
        for kind in [Kind::Tool, Kind::Prompt, Kind::Resource] {
            let entity = entities::action(kind).ok_or_else(|| {
                vec![LoadError {
                    policy: None,
                    line: 0,
                    column: 0,
                    message: "cannot build the action entities".into(),
                }]
            })?;
            let uid = entity.uid();
            let mut ancestors: HashSet<EntityUid> = base
                .ancestors(&uid)
                .map(|a| a.cloned().collect())
                .unwrap_or_default();
            ancestors.insert(uid.clone());
            actions.push((uid, ancestors, entity));
        }
        Ok(Self {
            policies: scoped,
            actions,
            base,
            engine: cedar_policy::Authorizer::new(),
            settings,
            args,
            prepared: Mutex::new(HashMap::new()),
            slices: Mutex::new(HashMap::new()),
        })
    }

    /// The caller's principal entity, its ancestors and its claims context (cached per caller).
    fn prepare(&self, identity: &Identity) -> Option<Arc<Prepared>> {
        // Claims are told apart by their address (a validated token's identity is cached, so its
        // claims keep theirs); an anonymous caller's empty claims are allocated per request, so
        // they all share one key, or every anonymous request would prepare afresh.
        let claims = if identity.claims.is_empty() {
            0
        } else {
            Arc::as_ptr(&identity.claims) as usize
        };
        let key = (claims, entities::principal_id(identity).to_string());
        if let Some(p) = self
            .prepared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Some(p.clone());
        }
        let (principal, parents) = entities::principal(identity, &self.settings.groups)?;
        let uid = principal.uid();
        let mut ancestors = self.ancestors_of(&uid, parents);
        ancestors.insert(uid);
        let entities = self
            .base
            .clone()
            .add_entities(
                std::iter::once(principal.clone()).chain(self.actions.iter().map(|a| a.2.clone())),
                None,
            )
            .ok()?;
        let prepared = Arc::new(Prepared {
            entities,
            ancestors,
            claims: Context::from_pairs(entities::claims(identity)).ok()?,
            principal,
            _claims: identity.claims.clone(),
            decisions: Mutex::new(HashMap::new()),
        });
        let mut cache = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= PREPARED_CAP {
            cache.clear();
        }
        cache.insert(key, prepared.clone());
        Some(prepared)
    }

    /// `uid`'s ancestors through `parents` and whatever `entitiesJson` says about them.
    fn ancestors_of(
        &self,
        uid: &EntityUid,
        parents: impl IntoIterator<Item = EntityUid>,
    ) -> HashSet<EntityUid> {
        let mut out: HashSet<EntityUid> = HashSet::new();
        for p in parents {
            if let Some(up) = self.base.ancestors(&p) {
                out.extend(up.cloned());
            }
            out.insert(p);
        }
        if let Some(up) = self.base.ancestors(uid) {
            out.extend(up.cloned());
        }
        out
    }

    /// The policies whose scope can match, as a set, and what they read (cached per slice).
    fn slice(&self, p: &Subject<'_>, a: &Subject<'_>, r: &Subject<'_>) -> Slice {
        let mut mask = vec![0u64; self.policies.len().div_ceil(64)];
        for (i, (_, scope, _)) in self.policies.iter().enumerate() {
            if scope.admits(p, a, r) {
                mask[i / 64] |= 1 << (i % 64);
            }
        }
        let mut slices = self.slices.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = slices.get(&mask) {
            return found.clone();
        }
        let chosen: Vec<_> = self
            .policies
            .iter()
            .enumerate()
            .filter(|(i, _)| mask[i / 64] & (1 << (i % 64)) != 0)
            .map(|(_, p)| p)
            .collect();
        let reads = chosen
            .iter()
            .fold(Reads::default(), |acc, (_, _, r)| acc.or(*r));
        let set = Arc::new(
            PolicySet::from_policies(chosen.into_iter().map(|(p, _, _)| p.clone()))
                .unwrap_or_default(),
        );
        if slices.len() >= SLICES_CAP {
            slices.clear();
        }
        slices.insert(mask, (set.clone(), reads));
        (set, reads)
    }

    /// The position of a policy id in the config (`policy2` -> `policies[2]`).
    fn position(id: &PolicyId) -> String {
        let s = id.to_string();
        match s
            .strip_prefix("policy")
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(i) => format!("policies[{i}]"),
            None => s,
        }
    }

    /// Decides one request. Also says whether the policies that could apply read arguments
    /// (when they do not, no other arguments can change the decision).
    fn evaluate(
        &self,
        identity: &Identity,
        target: &Target<'_>,
        args: Option<&Value>,
    ) -> (Decision, bool) {
        let deny = |why: String| Decision {
            allowed: false,
            policies: Vec::new(),
            errors: vec![why],
        };
        let Some(prepared) = self.prepare(identity) else {
            return (
                deny("the request cannot be expressed as Cedar entities".into()),
                false,
            );
        };
        if let Some(decision) = prepared.remembered(target) {
            return (decision, false);
        }
        let Some(resource_uid) = entities::resource_uid(target) else {
            return (
                deny("the request cannot be expressed as Cedar entities".into()),
                false,
            );
        };
        let action = &self.actions[match target.kind {
            Kind::Tool => 0,
            Kind::Prompt => 1,
            Kind::Resource => 2,
        }];
        let parents = entities::resource_parents(target, &self.settings.server_name);
        let mut resource_ancestors = self.ancestors_of(&resource_uid, parents);
        resource_ancestors.insert(resource_uid.clone());
        let principal_uid = prepared.principal.uid();
        let (policies, reads) = self.slice(
            &Subject {
                uid: &principal_uid,
                ancestors: &prepared.ancestors,
            },
            &Subject {
                uid: &action.0,
                ancestors: &action.1,
            },
            &Subject {
                uid: &resource_uid,
                ancestors: &resource_ancestors,
            },
        );
        // Arguments and claims are turned into Cedar values only when some policy reads them.
        let arguments = match target.kind {
            Kind::Tool | Kind::Prompt if reads.args => entities::args(args),
            _ => Vec::new(),
        };
        let Some(resource) = entities::resource(target, &self.settings.server_name, &arguments)
        else {
            return (
                deny("the request cannot be expressed as Cedar entities".into()),
                false,
            );
        };
        let entities = match prepared.entities.clone().add_entities([resource], None) {
            Ok(e) => e,
            Err(e) => return (deny(format!("entities: {e}")), reads.args),
        };
        let claims = if reads.context_claims {
            prepared.claims.clone()
        } else {
            Context::empty()
        };
        let context = if arguments.is_empty() {
            Ok(claims)
        } else {
            claims.merge(arguments)
        };
        let context = match context {
            Ok(c) => c,
            Err(e) => return (deny(format!("context: {e}")), reads.args),
        };
        let request =
            match Request::new(principal_uid, action.0.clone(), resource_uid, context, None) {
                Ok(r) => r,
                Err(e) => return (deny(format!("request: {e}")), reads.args),
            };
        let response = self.engine.is_authorized(&request, &policies, &entities);
        let diagnostics = response.diagnostics();
        let errors: Vec<String> = diagnostics.errors().map(|e| e.to_string()).collect();
        let decision = Decision {
            // Any evaluation error denies the request, even when another policy permits
            // (ToolHive's semantics: fail closed).
            allowed: response.decision() == cedar_policy::Decision::Allow && errors.is_empty(),
            policies: diagnostics.reason().map(Self::position).collect(),
            errors,
        };
        if !reads.args {
            prepared.remember(target, &decision);
        }
        (decision, reads.args)
    }
}

impl Authorizer for CedarAuthorizer {
    fn decide(&self, identity: &Identity, action: Action<'_>) -> Decision {
        match action {
            Action::CallTool(t, args) | Action::GetPrompt(t, args) => {
                self.evaluate(identity, &t, args).0
            }
            Action::ReadResource(t) => self.evaluate(identity, &t, None).0,
            // Listed exactly when some call can be admitted: when the policies that can apply
            // read arguments, try each argument witness.
            Action::List(t) => {
                let (first, reads_args) = self.evaluate(identity, &t, None);
                if first.allowed || !reads_args || t.kind == Kind::Resource {
                    return first;
                }
                let mut last = first;
                for w in self.args.witnesses().iter().skip(1) {
                    let (d, _) = self.evaluate(identity, &t, Some(w));
                    if d.allowed {
                        return d;
                    }
                    last = d;
                }
                last
            }
        }
    }
}

#[cfg(test)]
mod tests;
