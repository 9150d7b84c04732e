//! Stage three and four of aggregation: the merged, conflict-free view of a group, and the routing
//! table that sends each name, URI or completion ref back to the backend that owns it.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::{
    composite::{self, CompositeIndex, RoutedTool},
    conflict::resolve_tools,
    discover::BackendCapabilities,
    policy::AggregationPolicy,
    prompts::resolve_prompts,
    uri_template::UriTemplate,
};

/// Where a named capability lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The backend that serves it.
    pub backend: String,
    /// The backend's own name for it.
    pub original: String,
}

/// The aggregated capabilities of a group, with their routes.
#[derive(Debug, Default)]
pub struct Catalog {
    tools: Vec<Value>,
    /// Where each advertised tool is in `tools`, by name.
    tool_positions: HashMap<String, usize>,
    tool_routes: HashMap<String, Route>,
    resources: Vec<Value>,
    resource_routes: HashMap<String, String>,
    templates: Vec<Value>,
    template_routes: Vec<(UriTemplate, String)>,
    template_exact: HashMap<String, String>,
    prompts: Vec<Value>,
    prompt_routes: HashMap<String, Route>,
    failed: Vec<(String, String)>,
    fingerprints: [u64; 3],
    subscribe: bool,
    /// Backends that support resource subscriptions, in sorted order.
    subscribers: Vec<String>,
    /// Per kind (tools, resources, prompts): how many times each backend asked clients to re-list
    /// with nothing we can see changed. Part of the kind's fingerprint, so such an announcement
    /// still reaches the clients that see the backend's items, as it would directly.
    relists: [std::collections::BTreeMap<String, u64>; 3],
    logging: Vec<String>,
    composites: CompositeIndex,
    optimizer: Option<crate::optimizer::OptimizerIndex>,
    /// Tools of withdrawn backends, as they would be advertised (by name): a call to one is told
    /// the backend is unavailable, not that the tool is unknown. Empty unless a backend is
    /// withdrawn.
    withdrawn_tools: HashMap<String, (Route, Value)>,
    /// Composite tools not advertised because a step's tool is withheld by `toolPinning`:
    /// name → why, told to a caller who may call the composite.
    withheld_composites: HashMap<String, String>,
    /// Unique per build: what caches of views of this catalog are keyed by.
    id: u64,
}

impl Catalog {
    /// This build's unique id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Builds the catalog from every backend's answers (in any order).
    ///
    /// # Errors
    /// When the manual strategy leaves tool name conflicts unresolved.
    pub fn build(
        policy: &AggregationPolicy,
        mut caps: Vec<BackendCapabilities>,
        failed: Vec<(String, String)>,
    ) -> Result<Catalog, String> {
        caps.sort_by(|a, b| a.backend.cmp(&b.backend));
        static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let mut cat = Catalog {
            failed,
            id: BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            ..Default::default()
        };

        let resolved = resolve_tools(policy, &caps)?;
        for t in &resolved {
            cat.tool_routes.insert(
                t.name.clone(),
                Route {
                    backend: t.backend.clone(),
                    original: t.original.clone(),
                },
            );
        }
        let (composites, index) = composite::advertise(
            &policy.composites,
            resolved.iter().filter_map(|t| {
                Some(RoutedTool {
                    name: &t.name,
                    route: cat.tool_routes.get(&t.name)?,
                    definition: &t.tool,
                })
            }),
            &|name| resolved.iter().any(|t| t.advertised && t.name == name),
        );
        cat.composites = index;
        cat.tools = resolved
            .into_iter()
            .filter(|t| t.advertised)
            .map(|t| t.tool)
            .chain(composites)
            .collect();
        // In the order the backends list them (backends in sorted order), as a client connected
        // to one backend directly sees them; composite tools after, by name.
        let listed: HashMap<(&str, &str), (usize, usize)> = caps
            .iter()
            .enumerate()
            .flat_map(|(b, c)| {
                c.tools
                    .iter()
                    .enumerate()
                    .map(move |(i, t)| ((c.backend.as_str(), tool_name(t)), (b, i)))
            })
            .collect();
        let order = |t: &Value| {
            cat.tool_routes
                .get(tool_name(t))
                .and_then(|r| listed.get(&(r.backend.as_str(), r.original.as_str())))
                .copied()
                .unwrap_or((usize::MAX, 0))
        };
        cat.tools.sort_by(|a, b| {
            order(a)
                .cmp(&order(b))
                .then_with(|| tool_name(a).cmp(tool_name(b)))
        });
        cat.tool_positions = cat
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (tool_name(t).to_owned(), i))
            .collect();
        if let Some(settings) = &policy.optimizer {
            // Tools per server, for find_tool's description (composites count as vmcp's).
            let mut backends = std::collections::BTreeMap::new();
            for t in &cat.tools {
                let owner = cat
                    .tool_routes
                    .get(tool_name(t))
                    .map_or("composite tools", |r| r.backend.as_str());
                *backends.entry(owner.to_owned()).or_insert(0usize) += 1;
            }
            cat.optimizer = Some(crate::optimizer::OptimizerIndex::build(
                settings, &cat.tools, &backends,
            ));
        }

        let (resources, routes) = dedupe_by_key(&caps, |c| &c.resources, "uri", "resource");
        cat.resources = resources;
        cat.resource_routes = routes;
        let (templates, exact) =
            dedupe_by_key(&caps, |c| &c.templates, "uriTemplate", "resource template");
        // Matching order for concrete URIs: sorted backend order, then the backend's own order.
        for cap in &caps {
            for t in &cap.templates {
                let Some(src) = t.get("uriTemplate").and_then(Value::as_str) else {
                    continue;
                };
                if exact.get(src) != Some(&cap.backend) {
                    continue;
                }
                match UriTemplate::parse(src) {
                    Some(tpl) => cat.template_routes.push((tpl, cap.backend.clone())),
                    None => {
                        tracing::warn!(backend = %cap.backend, template = src, "malformed URI template; it is listed but cannot route reads")
                    }
                }
            }
        }
        cat.templates = templates;
        cat.template_exact = exact;

        for p in resolve_prompts(policy, &caps) {
            cat.prompts.push(p.prompt);
            cat.prompt_routes.insert(
                p.name,
                Route {
                    backend: p.backend,
                    original: p.original,
                },
            );
        }
        cat.fingerprints = [
            fingerprint(&[cat.tools.iter().collect()]),
            fingerprint(&[
                cat.resources.iter().collect(),
                cat.templates.iter().collect(),
            ]),
            fingerprint(&[cat.prompts.iter().collect()]),
        ];
        cat.subscribers = caps
            .iter()
            .filter(|c| c.subscribe)
            .map(|c| c.backend.clone())
            .collect();
        cat.subscribe = !cat.subscribers.is_empty();
        cat.logging = caps
            .iter()
            .filter(|c| c.logging)
            .map(|c| c.backend.clone())
            .collect();
        for (kind, n) in [
            ("tools", cat.tools.len()),
            ("resources", cat.resources.len()),
            ("resource_templates", cat.templates.len()),
            ("prompts", cat.prompts.len()),
        ] {
            vmcp_telemetry::catalog_size(kind, n as u64);
        }
        Ok(cat)
    }

    /// Advertised tools: each backend's in its own order (backends sorted by name), then
    /// composite tools by name.
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    /// What `tools/list` shows: the advertised tools, or the optimizer's two meta-tools.
    pub fn listed_tools(&self) -> &[Value] {
        match &self.optimizer {
            Some(o) => &o.meta,
            None => &self.tools,
        }
    }

    /// The optimizer's index, when the optimizer is on.
    pub(crate) fn optimizer(&self) -> Option<&crate::optimizer::OptimizerIndex> {
        self.optimizer.as_ref()
    }

    /// The advertised definition of tool `name` (hidden tools have none).
    pub fn advertised_tool(&self, name: &str) -> Option<&Value> {
        self.tool_positions.get(name).map(|&i| &self.tools[i])
    }

    /// The route of a tool by its advertised (or hidden-but-routable) name.
    pub fn tool(&self, name: &str) -> Option<&Route> {
        self.tool_routes.get(name)
    }

    /// The route and advertised definition of `name` when its backend is withdrawn.
    pub fn withdrawn_tool(&self, name: &str) -> Option<&(Route, Value)> {
        self.withdrawn_tools.get(name)
    }

    /// Records the tools that `all` (the answers of every backend, withdrawn ones included)
    /// would advertise and this catalog does not, because their backend is in `withdrawn`.
    pub(crate) fn note_withdrawn(
        &mut self,
        policy: &AggregationPolicy,
        all: &[BackendCapabilities],
        withdrawn: &HashSet<&str>,
    ) {
        // The same names the catalog would give them with every backend back (a conflict
        // that fails to resolve then leaves the table empty: calls answer unknown tool).
        let Ok(resolved) = resolve_tools(policy, all) else {
            return;
        };
        self.withdrawn_tools = resolved
            .into_iter()
            .filter(|t| withdrawn.contains(t.backend.as_str()))
            .filter(|t| !self.tool_routes.contains_key(&t.name))
            .map(|t| {
                let route = Route {
                    backend: t.backend,
                    original: t.original,
                };
                (t.name, (route, t.tool))
            })
            .collect();
    }

    /// Why the configured composite tool `name` is not advertised, when a step's tool is
    /// withheld by `toolPinning`.
    pub fn withheld_composite(&self, name: &str) -> Option<&str> {
        self.withheld_composites.get(name).map(String::as_str)
    }

    /// Records the composites that cannot run because a step's tool is in `withheld` (tools
    /// `toolPinning` took out of `served`, with their backend), so a call to one names it.
    pub(crate) fn note_withheld(
        &mut self,
        policy: &AggregationPolicy,
        served: &[BackendCapabilities],
        withheld: Vec<(String, Value)>,
    ) {
        if policy.composites.0.is_empty() {
            return;
        }
        let held: HashSet<(String, String)> = withheld
            .iter()
            .map(|(b, t)| (b.clone(), tool_name(t).to_owned()))
            .collect();
        // The names they would have: resolve every tool again, the withheld ones included.
        let mut all = served.to_vec();
        for (backend, tool) in withheld {
            if let Some(cap) = all.iter_mut().find(|c| c.backend == backend) {
                cap.tools.push(tool);
            }
        }
        let Ok(resolved) = resolve_tools(policy, &all) else {
            return;
        };
        let mut references: HashMap<String, (String, String)> = HashMap::new();
        for t in resolved {
            if held.contains(&(t.backend.clone(), t.original.clone())) {
                let at = (t.backend.clone(), t.original.clone());
                references.insert(format!("{}.{}", t.backend, t.original), at.clone());
                references.insert(t.name, at);
            }
        }
        for wf in policy.composites.0.iter() {
            if self.composites.workflows.contains_key(wf.name()) {
                continue;
            }
            if let Some((reference, (backend, tool))) = wf
                .tool_references()
                .find_map(|r| references.get(r).map(|at| (r, at)))
            {
                self.withheld_composites.insert(
                    wf.name().to_owned(),
                    format!(
                        "composite tool {:?} cannot run: its step tool {reference} (backend {backend}, tool {tool}) changed since it was pinned and is withheld until approved (vmcp tools approve)",
                        wf.name()
                    ),
                );
            }
        }
    }

    /// The composite tool advertised under `name`.
    pub fn composite(&self, name: &str) -> Option<&std::sync::Arc<vmcp_workflow::Workflow>> {
        self.composites.workflows.get(name)
    }

    /// Where a composite step's tool reference (advertised name or `backend.tool`) goes.
    pub fn composite_route(&self, reference: &str) -> Option<&Route> {
        self.tool_routes.get(self.composites.refs.get(reference)?)
    }

    /// The definition of the tool a composite step's reference resolves to.
    pub fn composite_definition(&self, reference: &str) -> Option<&Value> {
        self.composites
            .defs
            .get(self.composites.refs.get(reference)?)
    }

    /// Resources, sorted by URI.
    pub fn resources(&self) -> &[Value] {
        &self.resources
    }

    /// Resource templates, sorted by template string.
    pub fn templates(&self) -> &[Value] {
        &self.templates
    }

    /// Prompts, sorted by name.
    pub fn prompts(&self) -> &[Value] {
        &self.prompts
    }

    /// The route of a prompt by its advertised name.
    pub fn prompt(&self, name: &str) -> Option<&Route> {
        self.prompt_routes.get(name)
    }

    /// The backend serving a concrete URI: an advertised resource, else the first matching template.
    pub fn resource_backend(&self, uri: &str) -> Option<&str> {
        self.resource_routes
            .get(uri)
            .or_else(|| {
                self.template_routes
                    .iter()
                    .find(|(t, _)| t.matches(uri))
                    .map(|(_, b)| b)
            })
            .map(String::as_str)
    }

    /// The backend owning a template string, falling back to resource and template matching.
    pub fn template_backend(&self, uri_or_template: &str) -> Option<&str> {
        self.template_exact
            .get(uri_or_template)
            .map(String::as_str)
            .or_else(|| self.resource_backend(uri_or_template))
    }

    /// A hash of what a kind ("tools", "resources" with templates, "prompts") advertises, to tell
    /// whether a re-derivation changed it.
    pub fn fingerprint(&self, kind: &str) -> u64 {
        self.fingerprints[kind_index(kind)]
    }

    /// Records the backends' re-list announcements (see `relists`) into the fingerprints.
    pub(crate) fn note_relists(&mut self, relists: &HashMap<(String, usize), u64>) {
        for ((backend, kind), n) in relists {
            if let Some(per_kind) = self.relists.get_mut(*kind) {
                per_kind.insert(backend.clone(), *n);
            }
        }
        for kind in 0..3 {
            self.fingerprints[kind] = mix(self.fingerprints[kind], &self.relists[kind], |_| true);
        }
    }

    /// `base` with the re-list counts of kind `kind` ("tools", "resources", "prompts") of the
    /// backends `seen` says a caller sees items of.
    pub(crate) fn relist_mix(&self, kind: &str, base: u64, seen: impl Fn(&str) -> bool) -> u64 {
        mix(base, &self.relists[kind_index(kind)], seen)
    }

    /// The backends that support resource subscriptions, in sorted order.
    pub fn subscribers(&self) -> &[String] {
        &self.subscribers
    }

    /// Whether any backend supports resource subscriptions.
    pub fn supports_subscribe(&self) -> bool {
        self.subscribe
    }

    /// Backends that declared the logging capability.
    pub fn logging_backends(&self) -> &[String] {
        &self.logging
    }

    /// Backends left out of this catalog because discovery failed (best-effort mode).
    pub fn failed(&self) -> &[(String, String)] {
        &self.failed
    }

    /// Number of advertised tools served by `backend`.
    pub fn tool_count(&self, backend: &str) -> usize {
        self.tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .filter(|n| {
                self.tool_routes
                    .get(*n)
                    .is_some_and(|r| r.backend == backend)
            })
            .count()
    }
}

fn tool_name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or_default()
}

/// Keeps one item per key (`uri` / `uriTemplate`): the earliest in sorted backend order wins.
fn dedupe_by_key(
    caps: &[BackendCapabilities],
    items: impl Fn(&BackendCapabilities) -> &Vec<Value>,
    key: &str,
    kind: &str,
) -> (Vec<Value>, HashMap<String, String>) {
    let mut owner: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for cap in caps {
        let mut own = HashSet::new();
        for item in items(cap) {
            let Some(k) = item.get(key).and_then(Value::as_str) else {
                tracing::warn!(backend = %cap.backend, "backend advertised a {kind} without \"{key}\"; skipping it");
                continue;
            };
            if let Some(winner) = owner.get(k) {
                if own.contains(k) {
                    continue;
                }
                tracing::warn!(%kind, key = k, kept = %winner, dropped = %cap.backend, "duplicate {kind} across backends; keeping the first in sorted backend order");
                continue;
            }
            own.insert(k.to_string());
            owner.insert(k.to_string(), cap.backend.clone());
            out.push(item.clone());
        }
    }
    out.sort_by(|a, b| {
        let ka = a.get(key).and_then(Value::as_str).unwrap_or_default();
        let kb = b.get(key).and_then(Value::as_str).unwrap_or_default();
        ka.cmp(kb)
    });
    (out, owner)
}

/// A hash of lists of items (a whole kind, or the part of it one caller sees).
/// The index of a kind in per-kind arrays.
pub(crate) fn kind_index(kind: &str) -> usize {
    match kind {
        "tools" => 0,
        "resources" => 1,
        _ => 2,
    }
}

/// `base` mixed with the counts of the backends `seen` keeps (unchanged when there are none).
fn mix(
    base: u64,
    counts: &std::collections::BTreeMap<String, u64>,
    seen: impl Fn(&str) -> bool,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut kept = counts.iter().filter(|(b, _)| seen(b)).peekable();
    if kept.peek().is_none() {
        return base;
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    base.hash(&mut h);
    for (backend, n) in kept {
        backend.hash(&mut h);
        n.hash(&mut h);
    }
    h.finish()
}

pub(crate) fn fingerprint(lists: &[Vec<&Value>]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for list in lists {
        for item in list.iter() {
            item.to_string().hash(&mut h);
        }
        0xff_u8.hash(&mut h);
    }
    h.finish()
}
