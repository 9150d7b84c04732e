//! The core operations both client edges call: catalog (with its cache), lists filtered by
//! admission, and calls routed to the owning backend under the backend's own names.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::broadcast;
use vmcp_backend::{Backend, CallSink, Origin};
use vmcp_proto::era::Era;
use vmcp_proto::meta::strip_reserved;

use crate::{
    admission::{Action, AllowAll, Authorizer, Identity, Kind, Target},
    catalog::Catalog,
    changes::GatewayNotice,
    discover::{self, BackendCapabilities},
    error::CoreError,
    policy::{AggregationPolicy, PartialFailureMode},
    views::Views,
};

/// Who makes a call, and where what the backend sends during it should go.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    /// The caller's identity (admission decides on it).
    pub identity: &'a Identity,
    /// The client session, for backends with per-session connections.
    pub session: Option<&'a str>,
    /// Receives progress, logs and server-to-client requests of the call.
    pub sink: Option<&'a CallSink>,
    /// The revision family the client speaks: a backend serving both is spoken to in it.
    pub era: Option<Era>,
    /// The client's request headers the config passes through to backends.
    pub headers: Option<&'a http::HeaderMap>,
}

/// A cached list view: (catalog id, caller claims' address, caller subject, list key).
pub(crate) type VisibleKey = (u64, usize, Option<String>, String);
/// The visible items' indices, and the caller's claims (kept alive while their address is a key).
pub(crate) type Visible = (Arc<Vec<usize>>, Arc<serde_json::Map<String, Value>>);
/// Most cached list views.
const VISIBLE_CAP: usize = 4096;

/// A forwarded resource subscription: (backend, connection, revision hop, URI).
pub(crate) type SubscriptionKey = (String, String, Option<Era>, String);

/// The backends' last answers, kept so one backend's change re-queries only that backend.
pub(crate) type Answers = (Vec<BackendCapabilities>, Vec<(String, String)>);

/// How the gateway aggregates and admits.
#[derive(Clone)]
pub struct GatewayOptions {
    /// Naming, filtering and override rules.
    pub policy: AggregationPolicy,
    /// What to do when some backends fail discovery.
    pub partial_failure: PartialFailureMode,
    /// Budget for one discovery across all backends.
    pub discovery_timeout: Duration,
    /// How long an aggregated catalog is reused for new sessions.
    pub cache_ttl: Duration,
    /// The admission seam.
    pub authorizer: Arc<dyn Authorizer>,
    /// Sees composite-tool runs (the audit trail), if anything does.
    pub workflow_observer: Option<Arc<dyn crate::composite::WorkflowObserver>>,
    /// The rate limits tool calls (and, through the edges, lists) draw from, if any.
    pub rate_limiter: Option<Arc<crate::rate_limit::RateLimiter>>,
    /// How long withdrawals and returns of backends are coalesced after one is acted on.
    pub health_debounce: Duration,
    /// Where replicas record used `requestState`s so each is used once across all of them
    /// (Redis, with the key prefix), when they share one.
    pub used_states: Option<(Arc<vmcp_redis::Client>, String)>,
    /// Definition pinning (`toolPinning`), when on.
    pub pinning: Option<Arc<crate::pins::Pinning>>,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        Self {
            policy: AggregationPolicy::default(),
            partial_failure: PartialFailureMode::Fail,
            discovery_timeout: Duration::from_secs(15),
            cache_ttl: Duration::from_secs(30),
            authorizer: Arc::new(AllowAll),
            workflow_observer: None,
            rate_limiter: None,
            health_debounce: Duration::from_secs(5),
            used_states: None,
            pinning: None,
        }
    }
}

/// The group of backends and everything needed to serve it.
pub struct Gateway {
    /// Sorted by name; replaced whole by `reconfigure`.
    backends: ArcSwap<Vec<Arc<Backend>>>,
    /// Replaced whole by `reconfigure`.
    opts: ArcSwap<GatewayOptions>,
    pub(crate) cache: Mutex<Option<(Arc<Catalog>, Instant)>>,
    pub(crate) answers: Mutex<Option<Answers>>,
    pub(crate) refresh: tokio::sync::Mutex<()>,
    ready: AtomicBool,
    pub(crate) notices: broadcast::Sender<GatewayNotice>,
    pub(crate) subscriptions: Mutex<std::collections::HashMap<SubscriptionKey, usize>>,
    pub(crate) views: Mutex<Views>,
    /// What each caller may see of each list of a catalog (authorizers only).
    pub(crate) visible: Mutex<std::collections::HashMap<VisibleKey, Visible>>,
    pub(crate) watchers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Each backend's own tasks (its listener, its health checks), stopped when it leaves.
    backend_tasks: Mutex<std::collections::HashMap<String, Vec<tokio::task::JoinHandle<()>>>>,
    /// What `changes.rs`'s worker has to re-derive.
    pub(crate) dirty: Arc<crate::changes::Dirty>,
    /// Active health checks' settings, once started.
    pub(crate) checks: Mutex<Option<crate::health::HealthChecks>>,
    /// The gateway itself, once it is shared (`watch`): lets an expired catalog be refreshed in
    /// the background while callers keep the previous one.
    pub(crate) this: std::sync::OnceLock<std::sync::Weak<Gateway>>,
    /// Whether a background refresh is running.
    refreshing: AtomicBool,
    /// (backend, kind index) -> how many times it announced a list change with an unchanged list.
    pub(crate) relists: Mutex<std::collections::HashMap<(String, usize), u64>>,
}

impl Gateway {
    /// A gateway over `backends`.
    pub fn new(mut backends: Vec<Arc<Backend>>, opts: GatewayOptions) -> Self {
        backends.sort_by(|a, b| a.id().cmp(b.id()));
        Self {
            backends: ArcSwap::from_pointee(backends),
            opts: ArcSwap::from_pointee(opts),
            cache: Mutex::new(None),
            answers: Mutex::new(None),
            refresh: tokio::sync::Mutex::new(()),
            ready: AtomicBool::new(false),
            notices: broadcast::channel(64).0,
            subscriptions: Mutex::new(std::collections::HashMap::new()),
            relists: Mutex::new(std::collections::HashMap::new()),
            views: Mutex::new(Views::default()),
            visible: Mutex::new(std::collections::HashMap::new()),
            watchers: Mutex::new(Vec::new()),
            backend_tasks: Mutex::new(std::collections::HashMap::new()),
            dirty: Arc::default(),
            checks: Mutex::new(None),
            this: std::sync::OnceLock::new(),
            refreshing: AtomicBool::new(false),
        }
    }

    /// The backends now, sorted by name.
    pub fn backends(&self) -> Arc<Vec<Arc<Backend>>> {
        self.backends.load_full()
    }

    /// The options now.
    pub fn options(&self) -> Arc<GatewayOptions> {
        self.opts.load_full()
    }

    /// The options now, for a moment (cheaper than [`Gateway::options`]).
    pub(crate) fn opts(&self) -> arc_swap::Guard<Arc<GatewayOptions>> {
        self.opts.load()
    }

    /// Keeps `task` as one of backend `id`'s own.
    pub(crate) fn backend_task(&self, id: &str, task: tokio::task::JoinHandle<()>) {
        self.backend_tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id.to_owned())
            .or_default()
            .push(task);
    }

    /// Stops backend `id`'s own tasks.
    pub(crate) fn forget(&self, id: &str) {
        let tasks = self
            .backend_tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        for t in tasks.into_iter().flatten() {
            t.abort();
        }
    }

    /// Replaces the backends and options (see `reconfigure.rs`).
    pub(crate) fn swap(&self, backends: Vec<Arc<Backend>>, opts: GatewayOptions) {
        self.opts.store(Arc::new(opts));
        self.backends.store(Arc::new(backends));
    }

    /// Whether an aggregation has succeeded at least once.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// The catalog `identity` sees: cached for `cache_ttl`, otherwise aggregated afresh (one
    /// aggregation at a time; concurrent callers share its result). When some backend's
    /// credential depends on the caller, the caller's own view (see `views.rs`).
    ///
    /// # Errors
    /// [`CoreError::DiscoveryTimeout`] past the discovery budget, [`CoreError::DiscoveryFailed`] when
    /// backends fail (per the partial-failure mode) or manual conflicts remain.
    pub async fn catalog(&self, identity: &Identity) -> Result<Arc<Catalog>, CoreError> {
        let shared = self.shared_catalog().await?;
        if self.has_per_caller()
            && let Some(view) = self.view(identity).await?
        {
            return Ok(view);
        }
        Ok(shared)
    }

    /// The catalog of the backends whose credential does not depend on the caller. Once there is
    /// one, an expired catalog is still served while a background refresh replaces it, so no
    /// caller waits on a slow backend's discovery (only the very first aggregation is waited for).
    async fn shared_catalog(&self) -> Result<Arc<Catalog>, CoreError> {
        if let Some(c) = self.cached() {
            return Ok(c);
        }
        if let (Some(stale), Some(this)) = (self.cached_catalog(), self.this.get()) {
            if !self.refreshing.swap(true, Ordering::AcqRel) {
                let this = this.clone();
                tokio::spawn(async move {
                    if let Some(gw) = this.upgrade() {
                        if let Err(e) = gw.refresh_now().await {
                            tracing::warn!(error = %e, "catalog refresh failed; serving the previous catalog");
                        }
                        gw.refreshing.store(false, Ordering::Release);
                    }
                });
            }
            return Ok(stale);
        }
        self.refresh_now().await
    }

    /// Aggregates afresh (one aggregation at a time; concurrent callers share its result).
    async fn refresh_now(&self) -> Result<Arc<Catalog>, CoreError> {
        let _one_at_a_time = self.refresh.lock().await;
        if let Some(c) = self.cached() {
            return Ok(c);
        }
        let budget = self.opts().discovery_timeout;
        let catalog = match tokio::time::timeout(budget, self.aggregate()).await {
            Ok(r) => Arc::new(r?),
            Err(_) => return Err(CoreError::DiscoveryTimeout(budget)),
        };
        self.store(catalog.clone());
        Ok(catalog)
    }

    /// The last aggregated catalog, fresh or not, without aggregating.
    pub fn cached_catalog(&self) -> Option<Arc<Catalog>> {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|(c, _)| c.clone())
    }

    /// Drops the cached catalog (and every caller's view) so the next caller re-aggregates.
    pub fn invalidate(&self) {
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.views.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// How many callers have a view of their own.
    pub fn view_count(&self) -> usize {
        self.views.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    fn cached(&self) -> Option<Arc<Catalog>> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .as_ref()
            .filter(|(_, at)| at.elapsed() < self.opts().cache_ttl)
            .map(|(c, _)| c.clone())
    }

    pub(crate) async fn aggregate(&self) -> Result<Catalog, CoreError> {
        // Backends whose credential depends on the caller are discovered per caller (views);
        // withdrawn ones (unhealthy) are not asked at all.
        let backends = self.backends();
        let shared: Vec<_> = backends
            .iter()
            .filter(|b| !b.per_caller() && b.is_advertised())
            .collect();
        // Each backend gets the budget on its own, so one that hangs is reported as failed while
        // the others' answers are used (best_effort), instead of timing out the whole aggregation.
        let budget = self.opts().discovery_timeout.mul_f32(0.9);
        let answers = futures_util::future::join_all(shared.iter().map(|b| async move {
            tokio::time::timeout(budget, discover::query(b, None))
                .await
                .map_err(|_| None)
                .and_then(|r| r.map_err(Some))
        }))
        .await;
        let mut caps = Vec::new();
        let mut failed = Vec::new();
        let mut out_of_time = false;
        for (backend, answer) in shared.iter().zip(answers) {
            match answer {
                Ok(c) => caps.push(c),
                Err(e) => {
                    out_of_time |= e.is_none();
                    let why = e.map_or_else(
                        || format!("no answer within the discovery budget ({budget:?})"),
                        |e| e.to_string(),
                    );
                    tracing::warn!(backend = %backend.id(), error = %why, "capability discovery failed");
                    failed.push((backend.id().to_string(), why));
                }
            }
        }
        let describe = |failed: &[(String, String)]| {
            failed
                .iter()
                .map(|(b, e)| format!("backend {b}: {e}"))
                .collect::<Vec<_>>()
                .join("; ")
        };
        if !failed.is_empty() {
            let all_failed = caps.is_empty() && !shared.is_empty();
            if self.opts().partial_failure == PartialFailureMode::Fail || all_failed {
                // A backend that ran out of the budget makes it a timeout (504), as before.
                if out_of_time {
                    return Err(CoreError::DiscoveryTimeout(self.opts().discovery_timeout));
                }
                return Err(CoreError::DiscoveryFailed(describe(&failed)));
            }
        }
        // A withdrawn backend was not asked: keep its last answer, so its tools are still known
        // (and reported unavailable) and come back as they were.
        if let Some((previous, _)) = self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            caps.extend(
                previous
                    .iter()
                    .filter(|c| {
                        self.backend(&c.backend)
                            .is_ok_and(|b| !b.per_caller() && !b.is_advertised())
                    })
                    .filter(|c| !caps.iter().any(|a| a.backend == c.backend))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
        }
        let catalog = self.build(caps.clone(), failed.clone())?;
        *self.answers.lock().unwrap_or_else(|p| p.into_inner()) = Some((caps, failed));
        Ok(catalog)
    }

    /// A catalog of the answers of the backends advertised now (a withdrawn backend's last answer
    /// is kept, not shown).
    pub(crate) fn build(
        &self,
        mut caps: Vec<BackendCapabilities>,
        failed: Vec<(String, String)>,
    ) -> Result<Catalog, CoreError> {
        let mut withheld = Vec::new();
        if let Some(pinning) = &self.opts().pinning {
            let changed;
            (changed, withheld) = pinning.screen(&mut caps);
            if changed {
                pinning.persist_in_background();
            }
        }
        // What the withheld tools' names are resolved against (only when some are).
        let served = (!withheld.is_empty()).then(|| caps.clone());
        let withdrawn: std::collections::HashSet<&str> = caps
            .iter()
            .filter(|c| !self.backend(&c.backend).is_ok_and(|b| b.is_advertised()))
            .map(|c| c.backend.as_str())
            .collect();
        let policy = &self.opts().policy;
        let mut catalog = if withdrawn.is_empty() {
            Catalog::build(policy, caps, failed).map_err(CoreError::DiscoveryFailed)?
        } else {
            let live = caps
                .iter()
                .filter(|c| !withdrawn.contains(c.backend.as_str()))
                .cloned()
                .collect();
            let mut catalog =
                Catalog::build(policy, live, failed).map_err(CoreError::DiscoveryFailed)?;
            catalog.note_withdrawn(policy, &caps, &withdrawn);
            catalog
        };
        let relists = self.relists.lock().unwrap_or_else(|p| p.into_inner());
        if !relists.is_empty() {
            catalog.note_relists(&relists);
        }
        if let Some(served) = served {
            catalog.note_withheld(policy, &served, withheld);
        }
        Ok(catalog)
    }

    /// The pinning in force, if `toolPinning` is on.
    pub fn pinning(&self) -> Option<Arc<crate::pins::Pinning>> {
        self.opts().pinning.clone()
    }

    /// Stores a freshly built catalog as the current one.
    pub(crate) fn store(&self, catalog: Arc<Catalog>) {
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = Some((catalog, Instant::now()));
        self.ready.store(true, Ordering::Relaxed);
    }

    fn admit(&self, identity: &Identity, action: Action<'_>) -> bool {
        self.opts().authorizer.admit(identity, action)
    }

    /// Whether names no backend has must be denied like known ones (an authorizer is
    /// configured), so that a denial does not tell whether the name exists.
    fn hides_unknown(&self) -> bool {
        !self.opts().authorizer.admits_everything()
    }

    /// Admits reading `uri` (advertised, or matched by a template), or refuses it; an unknown
    /// URI is refused the same way when an authorizer is configured.
    pub(crate) fn admit_uri<'c>(
        &self,
        identity: &Identity,
        catalog: &'c Catalog,
        uri: &str,
    ) -> Result<&'c str, CoreError> {
        let Some(backend) = catalog.resource_backend(uri) else {
            return Err(if self.hides_unknown() {
                CoreError::Denied("read")
            } else {
                CoreError::UnknownResource(uri.to_string())
            });
        };
        let target = Target {
            kind: Kind::Resource,
            name: uri,
            backend: Some(backend),
            definition: None,
        };
        if !self.admit(identity, Action::ReadResource(target)) {
            return Err(CoreError::Denied("read"));
        }
        Ok(backend)
    }

    /// Whether `identity` may read `uri` from `backend` (a URI no backend claims).
    pub(crate) fn admit_uri_on(&self, identity: &Identity, uri: &str, backend: &str) -> bool {
        let target = Target {
            kind: Kind::Resource,
            name: uri,
            backend: Some(backend),
            definition: None,
        };
        self.admit(identity, Action::ReadResource(target))
    }

    pub(crate) fn backend(&self, id: &str) -> Result<Arc<Backend>, CoreError> {
        let backends = self.backends.load();
        backends
            .binary_search_by(|b| b.id().cmp(id))
            .map(|i| backends[i].clone())
            .map_err(|_| CoreError::DiscoveryFailed(format!("route names unknown backend {id}")))
    }

    /// Tools `identity` sees in `tools/list` (with the optimizer: the meta-tools it may call).
    pub fn list_tools<'c>(&self, identity: &Identity, catalog: &'c Catalog) -> Vec<&'c Value> {
        self.tools_admitted(identity, catalog, catalog.listed_tools())
    }

    /// Every advertised tool `identity` may call (what `find_tool` searches).
    fn callable_tools<'c>(&self, identity: &Identity, catalog: &'c Catalog) -> Vec<&'c Value> {
        self.tools_admitted(identity, catalog, catalog.tools())
    }

    fn tools_admitted<'c>(
        &self,
        identity: &Identity,
        catalog: &'c Catalog,
        tools: &'c [Value],
    ) -> Vec<&'c Value> {
        self.filter(identity, (catalog.id(), tools), Kind::Tool, "name", |n| {
            catalog.tool(n).map(|r| r.backend.as_str())
        })
    }

    /// Resources `identity` may see.
    pub fn list_resources<'c>(&self, identity: &Identity, catalog: &'c Catalog) -> Vec<&'c Value> {
        self.filter(
            identity,
            (catalog.id(), catalog.resources()),
            Kind::Resource,
            "uri",
            |u| catalog.resource_backend(u),
        )
    }

    /// Resource templates `identity` may see.
    pub fn list_templates<'c>(&self, identity: &Identity, catalog: &'c Catalog) -> Vec<&'c Value> {
        self.filter(
            identity,
            (catalog.id(), catalog.templates()),
            Kind::Resource,
            "uriTemplate",
            |t| catalog.template_backend(t),
        )
    }

    /// Prompts `identity` may see.
    pub fn list_prompts<'c>(&self, identity: &Identity, catalog: &'c Catalog) -> Vec<&'c Value> {
        self.filter(
            identity,
            (catalog.id(), catalog.prompts()),
            Kind::Prompt,
            "name",
            |n| catalog.prompt(n).map(|r| r.backend.as_str()),
        )
    }

    /// A hash of what `identity` sees of a kind ("tools", "resources" with templates,
    /// "prompts"), to tell whether a change concerns it.
    pub fn visible_fingerprint(&self, identity: &Identity, catalog: &Catalog, kind: &str) -> u64 {
        if self.opts().authorizer.admits_everything() {
            return catalog.fingerprint(kind);
        }
        let name = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        let (lists, backends): (Vec<Vec<&Value>>, std::collections::HashSet<String>) = match kind {
            "tools" => {
                let tools = self.list_tools(identity, catalog);
                let seen = tools
                    .iter()
                    .filter_map(|t| catalog.tool(&name(t, "name")?).map(|r| r.backend.clone()))
                    .collect();
                (vec![tools], seen)
            }
            "resources" => {
                let (resources, templates) = (
                    self.list_resources(identity, catalog),
                    self.list_templates(identity, catalog),
                );
                let seen = resources
                    .iter()
                    .filter_map(|r| {
                        catalog
                            .resource_backend(&name(r, "uri")?)
                            .map(str::to_owned)
                    })
                    .chain(templates.iter().filter_map(|t| {
                        catalog
                            .template_backend(&name(t, "uriTemplate")?)
                            .map(str::to_owned)
                    }))
                    .collect();
                (vec![resources, templates], seen)
            }
            _ => {
                let prompts = self.list_prompts(identity, catalog);
                let seen = prompts
                    .iter()
                    .filter_map(|p| catalog.prompt(&name(p, "name")?).map(|r| r.backend.clone()))
                    .collect();
                (vec![prompts], seen)
            }
        };
        catalog.relist_mix(kind, crate::catalog::fingerprint(&lists), |b| {
            backends.contains(b)
        })
    }

    fn filter<'c>(
        &self,
        identity: &Identity,
        (catalog_id, items): (u64, &'c [Value]),
        kind: Kind,
        key: &str,
        backend_of: impl Fn(&str) -> Option<&'c str>,
    ) -> Vec<&'c Value> {
        if self.opts().authorizer.admits_everything() {
            return items.iter().collect();
        }
        // Decided once per caller, catalog and list; a caller's next list costs a lookup. The
        // key holds the caller's claims (by address, kept alive by the entry) and subject.
        // The list's address tells apart two lists of one kind (the optimizer's meta-tools
        // and the tools it searches).
        let cache_key = (
            catalog_id,
            Arc::as_ptr(&identity.claims) as usize,
            identity.subject.clone(),
            format!("{kind:?}/{key}/{:p}", items.as_ptr()),
        );
        if let Some((indices, _)) = self
            .visible
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&cache_key)
        {
            return indices.iter().filter_map(|&i| items.get(i)).collect();
        }
        let indices: Vec<usize> = items
            .iter()
            .enumerate()
            .filter(|(_, v)| {
                let name = v.get(key).and_then(Value::as_str).unwrap_or_default();
                let target = Target {
                    kind,
                    name,
                    backend: backend_of(name),
                    definition: Some(v),
                };
                self.admit(identity, Action::List(target))
            })
            .map(|(i, _)| i)
            .collect();
        let out = indices.iter().filter_map(|&i| items.get(i)).collect();
        let mut cache = self.visible.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= VISIBLE_CAP {
            cache.clear();
        }
        cache.insert(cache_key, (Arc::new(indices), identity.claims.clone()));
        out
    }

    /// Calls a tool by its advertised name; `params` is the client's `tools/call` params.
    ///
    /// # Errors
    /// Unknown tool, denial, or the backend's failure.
    pub async fn call_tool(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        mut params: Value,
    ) -> Result<Value, CoreError> {
        let name = str_param(&params, "name", "tools/call")?;
        object_param(&params, "arguments", "tools/call")?;
        // The optimizer's and composite tools' futures are boxed: inline they would make every
        // plain call's future (copied as it is spawned) twice as large.
        if let Some(opt) = catalog.optimizer()
            && (name == crate::optimizer::FIND_TOOL || name == crate::optimizer::CALL_TOOL)
        {
            return Box::pin(self.call_meta_tool(caller, catalog, opt, &params)).await;
        }
        if let Some(wf) = catalog.composite(name) {
            return Box::pin(self.call_composite(caller, catalog, wf, &params)).await;
        }
        let Some(route) = catalog.tool(name) else {
            if let Some(unavailable) = self.withdrawn_tool(caller, catalog, name) {
                return Err(unavailable);
            }
            if let Some(why) = catalog.withheld_composite(name) {
                let target = Target {
                    kind: Kind::Tool,
                    name,
                    backend: None,
                    definition: None,
                };
                if self.admit(
                    caller.identity,
                    Action::CallTool(target, params.get("arguments")),
                ) {
                    return Err(CoreError::InvalidParams(why.to_owned()));
                }
            }
            return Err(if self.hides_unknown() {
                CoreError::Denied("call")
            } else {
                CoreError::UnknownTool(name.to_string())
            });
        };
        let target = Target {
            kind: Kind::Tool,
            name,
            backend: Some(&route.backend),
            definition: catalog.advertised_tool(name),
        };
        if !self.admit(
            caller.identity,
            Action::CallTool(target, params.get("arguments")),
        ) {
            return Err(CoreError::Denied("call"));
        }
        self.rate_limit_call(caller.identity, name).await?;
        params["name"] = Value::String(route.original.clone());
        self.forward(&route.backend, caller, "tools/call", params)
            .await
    }

    /// Why `name` cannot be called when it is a withdrawn backend's tool that the caller may
    /// call; `None` otherwise, so a caller who may not see it hears what an unknown name gets.
    fn withdrawn_tool(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        name: &str,
    ) -> Option<CoreError> {
        let (route, definition) = catalog.withdrawn_tool(name)?;
        let target = Target {
            kind: Kind::Tool,
            name,
            backend: Some(&route.backend),
            definition: Some(definition),
        };
        if !self.admit(caller.identity, Action::List(target)) {
            return None;
        }
        let backend = self.backend(&route.backend).ok()?;
        let report = backend.health_report();
        let health = match report.health {
            h @ (vmcp_backend::Health::Unhealthy | vmcp_backend::Health::Unauthenticated) => {
                h.as_str()
            }
            _ => "circuit-open",
        };
        let next_check = self
            .health_checks()
            .map_or(Duration::from_secs(30), |c| c.interval);
        Some(CoreError::ToolUnavailable {
            tool: name.to_owned(),
            backend: route.backend.clone(),
            health,
            since: report.last_transition,
            retry_after: next_check.clamp(Duration::from_secs(1), Duration::from_secs(60)),
        })
    }

    /// `find_tool` and `call_tool`, each admitted by its own name; the tool `call_tool` runs
    /// is admitted by its name too, exactly as a direct call (same 403 when denied).
    async fn call_meta_tool(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        opt: &crate::optimizer::OptimizerIndex,
        params: &Value,
    ) -> Result<Value, CoreError> {
        let name = str_param(params, "name", "tools/call")?;
        let target = Target {
            kind: Kind::Tool,
            name,
            backend: None,
            definition: None,
        };
        let args = params.get("arguments").cloned().unwrap_or(Value::Null);
        if !self.admit(caller.identity, Action::CallTool(target, Some(&args))) {
            return Err(CoreError::Denied("call"));
        }
        if name == crate::optimizer::FIND_TOOL {
            // A search can ask an embedding service: metered as a call. `call_tool` is not: the
            // tool it runs is, by its own name (below).
            self.rate_limit_call(caller.identity, name).await?;
            let callable = self.callable_tools(caller.identity, catalog);
            // Everything callable (no policy, or one that permits all): skip the name filter.
            let visible = (callable.len() < catalog.tools().len())
                .then(|| crate::optimizer::names(&callable));
            return Ok(opt.find(&args, visible.as_ref()).await);
        }
        let (inner, arguments) = match crate::optimizer::inner_call(&args) {
            Ok(call) => call,
            Err(result) => return Ok(result),
        };
        let mut inner_params = json!({"name": inner, "arguments": arguments});
        if let Some(meta) = params.get("_meta") {
            inner_params["_meta"] = meta.clone();
        }
        let started = Instant::now();
        let outcome = match Box::pin(self.call_tool(caller, catalog, inner_params)).await {
            Err(CoreError::UnknownTool(n)) => {
                let callable = self.callable_tools(caller.identity, catalog);
                Ok(opt.not_found(&n, &crate::optimizer::names(&callable)))
            }
            other => other,
        };
        let read = match &outcome {
            Ok(r) => Ok(r.get("isError") == Some(&Value::Bool(true))),
            Err(_) => Err(()),
        };
        vmcp_telemetry::optimizer_call_tool_finished(&inner, started.elapsed(), read);
        outcome
    }

    /// Runs a composite tool: admitted by its own name (its steps are not admitted one by
    /// one: they may call tools hidden from the caller), then run as the caller.
    async fn call_composite(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        wf: &vmcp_workflow::Workflow,
        params: &Value,
    ) -> Result<Value, CoreError> {
        let name = wf.name();
        let target = Target {
            kind: Kind::Tool,
            name,
            backend: None,
            definition: catalog.advertised_tool(name),
        };
        if !self.admit(
            caller.identity,
            Action::CallTool(target, params.get("arguments")),
        ) {
            return Err(CoreError::Denied("call"));
        }
        if let Some(why) = crate::composite::cannot_run(wf, caller) {
            return Err(CoreError::InvalidParams(format!(
                "composite tool {name:?} cannot run for this client: {why}"
            )));
        }
        let runner = crate::composite::GatewayRunner {
            gateway: self,
            caller: *caller,
            catalog,
            progress_token: params
                .get("_meta")
                .and_then(|m| m.get("progressToken"))
                .cloned(),
        };
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        let args = arguments.as_object().cloned().unwrap_or_default();
        if !crate::composite::asks_in_rounds(wf, caller) {
            self.rate_limit_call(caller.identity, name).await?;
            let started = Instant::now();
            let result = wf.call(&runner, args).await;
            let ok = result.get("isError") != Some(&Value::Bool(true));
            vmcp_telemetry::workflow_finished(name, started.elapsed(), ok);
            return Ok(result);
        }
        // A 2026-07-28 client is asked between requests: the answers and the sealed state of
        // the round before come with this request.
        let call = crate::request_state::Call {
            identity: caller.identity,
            tool: name,
            definition: wf.fingerprint(),
            arguments: &arguments,
        };
        let resume = match params.get("requestState") {
            None => None,
            Some(sealed) => {
                let opened = sealed
                    .as_str()
                    .ok_or("requestState must be a string")
                    .and_then(|s| crate::request_state::open(s, &call))
                    .map_err(|e| CoreError::InvalidParams(e.to_owned()))?;
                let shared = self.opts().used_states.clone();
                if let Some((redis, prefix)) = shared {
                    crate::request_state::claim_shared(&redis, &prefix, &opened)
                        .await
                        .map_err(|e| CoreError::InvalidParams(e.to_owned()))?;
                }
                let answers = match params.get("inputResponses") {
                    None => serde_json::Map::new(),
                    Some(Value::Object(m)) => m.clone(),
                    Some(_) => {
                        return Err(CoreError::InvalidParams(
                            "inputResponses must be an object".into(),
                        ));
                    }
                };
                Some(vmcp_workflow::Resume {
                    state: opened.state,
                    answers,
                    timed_out: opened.expired,
                })
            }
        };
        // Only the first round is metered: the later ones carry the answers of the same call.
        if resume.is_none() {
            self.rate_limit_call(caller.identity, name).await?;
        }
        match wf.call_in_rounds(&runner, args, resume.as_ref()).await {
            vmcp_workflow::Round::Done(result) => Ok(result),
            vmcp_workflow::Round::NeedsInput {
                requests,
                state,
                expires_in,
            } => match crate::request_state::seal(&call, state, expires_in) {
                Ok(sealed) => Ok(json!({
                    "resultType": "input_required",
                    "inputRequests": requests,
                    "requestState": sealed,
                })),
                Err(e) => Ok(json!({
                    "content": [{"type": "text", "text": format!("Workflow execution failed: {e}")}],
                    "isError": true,
                })),
            },
        }
    }

    /// Reads a resource by URI (advertised, or matching an advertised template).
    ///
    /// # Errors
    /// Unknown resource, denial, or the backend's failure.
    pub async fn read_resource(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        params: Value,
    ) -> Result<Value, CoreError> {
        let uri = str_param(&params, "uri", "resources/read")?;
        let backend = self.admit_uri(caller.identity, catalog, uri)?.to_string();
        self.forward(&backend, caller, "resources/read", params)
            .await
    }

    /// Gets a prompt by its advertised name.
    ///
    /// # Errors
    /// Unknown prompt, denial, or the backend's failure.
    pub async fn get_prompt(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        mut params: Value,
    ) -> Result<Value, CoreError> {
        let name = str_param(&params, "name", "prompts/get")?;
        object_param(&params, "arguments", "prompts/get")?;
        let Some(route) = catalog.prompt(name) else {
            return Err(if self.hides_unknown() {
                CoreError::Denied("prompt")
            } else {
                CoreError::UnknownPrompt(name.to_string())
            });
        };
        let target = Target {
            kind: Kind::Prompt,
            name,
            backend: Some(&route.backend),
            definition: None,
        };
        if !self.admit(
            caller.identity,
            Action::GetPrompt(target, params.get("arguments")),
        ) {
            return Err(CoreError::Denied("prompt"));
        }
        params["name"] = Value::String(route.original.clone());
        self.forward(&route.backend, caller, "prompts/get", params)
            .await
    }

    /// Routes `completion/complete` by its ref; an unroutable ref gets an empty completion.
    ///
    /// # Errors
    /// Malformed ref, denial, or the backend's failure.
    pub async fn complete(
        &self,
        caller: &Caller<'_>,
        catalog: &Catalog,
        mut params: Value,
    ) -> Result<Value, CoreError> {
        let reference = params.get("ref").filter(|r| r.is_object()).ok_or_else(|| {
            CoreError::InvalidParams("completion/complete needs params.ref (an object)".into())
        })?;
        let kind = reference
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let target = match kind {
            "ref/prompt" => {
                let name = reference
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match catalog.prompt(name) {
                    Some(route) => {
                        let target = Target {
                            kind: Kind::Prompt,
                            name,
                            backend: Some(&route.backend),
                            definition: None,
                        };
                        if !self.admit(caller.identity, Action::GetPrompt(target, None)) {
                            return Err(CoreError::Denied("prompt"));
                        }
                        let route = route.clone();
                        params["ref"]["name"] = Value::String(route.original);
                        Some(route.backend)
                    }
                    None if self.hides_unknown() => return Err(CoreError::Denied("prompt")),
                    None => None,
                }
            }
            "ref/resource" => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match catalog.template_backend(uri) {
                    Some(b) => {
                        let target = Target {
                            kind: Kind::Resource,
                            name: uri,
                            backend: Some(b),
                            definition: None,
                        };
                        if !self.admit(caller.identity, Action::ReadResource(target)) {
                            return Err(CoreError::Denied("read"));
                        }
                        Some(b.to_string())
                    }
                    None if self.hides_unknown() => return Err(CoreError::Denied("read")),
                    None => None,
                }
            }
            other => {
                return Err(CoreError::InvalidParams(format!(
                    "unknown completion ref type {other:?} (expected ref/prompt or ref/resource)"
                )));
            }
        };
        match target {
            Some(backend) => {
                self.forward(&backend, caller, "completion/complete", params)
                    .await
            }
            None => Ok(json!({"completion": {"values": [], "hasMore": false}})),
        }
    }

    pub(crate) async fn forward(
        &self,
        backend: &str,
        caller: &Caller<'_>,
        method: &str,
        mut params: Value,
    ) -> Result<Value, CoreError> {
        let b = self.backend(backend)?;
        strip_reserved(&mut params);
        let origin = Origin {
            session: caller.session,
            era: caller.era,
            caller: Some(caller.identity),
            headers: caller.headers,
        };
        let mut result = b
            .request(origin, method, Some(&params), caller.sink)
            .await
            .map_err(|error| CoreError::Backend {
                backend: backend.to_string(),
                error,
            })?;
        strip_reserved(&mut result);
        Ok(result)
    }

    /// Gives session `session` a sink for messages its per-session backend connections receive
    /// outside any one request.
    pub fn attach_session(&self, session: &str, sink: &CallSink) {
        for b in self.backends().iter() {
            b.attach_session(session, sink.clone());
        }
    }

    /// Applies a client's `logging/setLevel`: backends that log are asked for `shared_level` on
    /// shared connections (the most verbose level any session wants) and `session_level` on the
    /// session's own connections. Failures are logged, not returned: logging is best effort.
    pub async fn set_log_level(
        &self,
        catalog: &Catalog,
        caller: &Identity,
        session: &str,
        session_level: &str,
        shared_level: &str,
    ) {
        for id in catalog.logging_backends() {
            let Ok(b) = self.backend(id) else { continue };
            let (conn, level) = if b.is_per_session() {
                (Some(session), session_level)
            } else {
                (None, shared_level)
            };
            let origin = Origin {
                session: conn,
                era: Some(Era::Legacy),
                caller: Some(caller),
                headers: None,
            };
            if let Err(e) = b
                .request(
                    origin,
                    "logging/setLevel",
                    Some(&json!({"level": level})),
                    None,
                )
                .await
            {
                tracing::debug!(backend = %id, error = %e, "backend refused logging/setLevel");
            }
        }
    }

    /// Releases what client session `session` held on every backend (per-session processes).
    pub async fn end_session(&self, session: &str) {
        for b in self.backends().iter() {
            b.release_session(session).await;
        }
    }

    /// Reaps idle per-session connections on every backend.
    pub async fn reap_idle(&self) -> usize {
        let mut n = 0;
        for b in self.backends().iter() {
            n += b.reap_idle().await;
        }
        n
    }

    /// Closes every backend connection and stops every backend process.
    pub async fn shutdown(&self) {
        for w in self
            .watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            w.abort();
        }
        let ids: Vec<String> = self.backends().iter().map(|b| b.id().to_owned()).collect();
        for id in ids {
            self.forget(&id);
        }
        let backends = self.backends();
        futures_util::future::join_all(backends.iter().map(|b| b.shutdown())).await;
    }
}

fn str_param<'v>(params: &'v Value, key: &str, method: &str) -> Result<&'v str, CoreError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| CoreError::InvalidParams(format!("{method} needs params.{key} (a string)")))
}

/// An optional params member that must be an object when present.
fn object_param(params: &Value, key: &str, method: &str) -> Result<(), CoreError> {
    match params.get(key) {
        None | Some(Value::Null) | Some(Value::Object(_)) => Ok(()),
        Some(_) => Err(CoreError::InvalidParams(format!(
            "{method}: params.{key} must be an object"
        ))),
    }
}
