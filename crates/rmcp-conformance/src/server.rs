//! The [`ServerHandler`]: capabilities, resources, completions, logging, subscriptions, and the
//! plumbing between rmcp's tool and prompt routers and the state the hooks change.

// Logging and resources/subscribe are deprecated by rmcp (SEP-2577, SEP-2575) but are what the
// 2025-11-25 scenarios check.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rmcp::handler::server::prompt::PromptContext;
use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::tool::ToolRouter;
use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference, Resource,
    ResourceContents, ResourceTemplate, ResourceUpdatedNotificationParam, ServerCapabilities,
    ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};
use serde_json::json;
use tokio::sync::broadcast;

use crate::ask::is_modern;
use crate::media;

/// How long resource results may be cached (2026-07-28 caching hints): resources never change.
/// The tool and prompt lists say 0, since the hooks change them.
const RESOURCE_TTL_MS: u64 = 60_000;

/// A change the hooks make, announced to 2025-11-25 sessions and to 2026-07-28
/// `subscriptions/listen` streams.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    Tools,
    Prompts,
    ResourceUpdated(String),
}

/// What every session and stateless request shares.
pub(crate) struct Shared {
    /// The tools listed now (the hooks add and remove one).
    tools: RwLock<ToolRouter<Conformance>>,
    /// The prompts listed now (the hooks add and remove one).
    prompts: RwLock<PromptRouter<Conformance>>,
    changes: broadcast::Sender<Change>,
}

impl Shared {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Shared {
            tools: RwLock::new(Conformance::tool_router()),
            prompts: RwLock::new(Conformance::prompt_router()),
            changes: broadcast::channel(64).0,
        })
    }
}

/// What one 2025-11-25 session set (rmcp builds one handler per session; a 2026-07-28
/// request gets a fresh one, unused).
#[derive(Default)]
struct Session {
    /// The least severe level `logging/setLevel` asked for (unset: everything).
    log_level: Mutex<Option<LoggingLevel>>,
    /// The URIs `resources/subscribe` asked for.
    subscriptions: Mutex<BTreeSet<String>>,
}

/// The conformance server: one per 2025-11-25 session or 2026-07-28 request, over [`Shared`].
#[derive(Clone)]
pub(crate) struct Conformance {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Conformance {
    pub(crate) fn new(shared: &Arc<Shared>) -> Self {
        Conformance {
            shared: shared.clone(),
            session: Arc::default(),
        }
    }

    /// The tools listed now (a snapshot, so no lock is held across a call).
    fn tools(&self) -> ToolRouter<Self> {
        self.shared
            .tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn prompts(&self) -> PromptRouter<Self> {
        self.shared
            .prompts
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Adds the routes of `extra` if `name` is absent, else removes `name`; announces the change.
    pub(crate) fn toggle_tool(&self, name: &str, extra: ToolRouter<Self>) -> bool {
        let added = {
            let mut tools = self
                .shared
                .tools
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            if tools.has_route(name) {
                tools.remove_route(name);
                false
            } else {
                tools.merge(extra);
                true
            }
        };
        let _ = self.shared.changes.send(Change::Tools);
        added
    }

    /// As [`Self::toggle_tool`], for prompts.
    pub(crate) fn toggle_prompt(&self, name: &str, extra: PromptRouter<Self>) -> bool {
        let added = {
            let mut prompts = self
                .shared
                .prompts
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            if prompts.has_route(name) {
                prompts.remove_route(name);
                false
            } else {
                prompts.merge(extra);
                true
            }
        };
        let _ = self.shared.changes.send(Change::Prompts);
        added
    }

    /// Announces that `uri` changed to whoever subscribed to it.
    pub(crate) fn touch_resource(&self, uri: &str) {
        let _ = self
            .shared
            .changes
            .send(Change::ResourceUpdated(uri.to_string()));
    }

    /// Sends an info log: in a 2025-11-25 session unless `logging/setLevel` asked for less; in a
    /// 2026-07-28 request only if its `_meta` asked for logs at info or below.
    pub(crate) async fn log_info(&self, context: &RequestContext<RoleServer>, message: &str) {
        let minimum = if is_modern(context) {
            match context.meta.log_level() {
                Some(level) => level,
                None => return,
            }
        } else {
            lock(&self.session.log_level).unwrap_or(LoggingLevel::Debug)
        };
        if severity(&LoggingLevel::Info) < severity(&minimum) {
            return;
        }
        let param = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message))
            .with_logger("vmcp-rmcp-conformance");
        let _ = context.peer.notify_logging_message(param).await;
    }
}

/// A level's rank, least severe first (rmcp's `LoggingLevel` has no ordering).
fn severity(level: &LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

// --- Resources -------------------------------------------------------------------------------

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
pub(crate) const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";

fn resources() -> Vec<Resource> {
    vec![
        Resource::new(STATIC_TEXT, "static-text")
            .with_description("A static text resource")
            .with_mime_type("text/plain"),
        Resource::new(STATIC_BINARY, "static-binary")
            .with_description("A static binary resource (a 1x1 PNG)")
            .with_mime_type("image/png"),
        Resource::new(WATCHED, "watched-resource")
            .with_description("A resource clients may subscribe to")
            .with_mime_type("text/plain"),
    ]
}

/// The `{id}` of a URI the template `test://template/{id}/data` matches.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

fn read(uri: &str) -> Option<ResourceContents> {
    Some(match uri {
        STATIC_TEXT => {
            ResourceContents::text("This is the content of the static text resource.", uri)
        }
        STATIC_BINARY => {
            ResourceContents::blob(media::png_base64(), uri).with_mime_type("image/png")
        }
        WATCHED => {
            ResourceContents::text("This resource never changes, but you may watch it.", uri)
        }
        _ => {
            let id = template_id(uri)?;
            let data =
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
            ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
        }
    })
}

fn exists(uri: &str) -> bool {
    read(uri).is_some()
}

/// `resources/read` of an unknown URI: rmcp's resource-not-found error, which it turns into
/// -32602 for 2026-07-28 requests (SEP-2164); `data.uri` names the URI.
fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found("Resource not found", Some(json!({"uri": uri})))
}

// --- Completions -----------------------------------------------------------------------------

/// The candidates for an argument of `reference` (any argument: the suite completes `arg1`).
fn completions(reference: &Reference) -> &'static [&'static str] {
    match reference {
        Reference::Prompt(p) if p.name == "test_prompt_with_arguments" => {
            &["paris", "park", "party", "test"]
        }
        Reference::Resource(r) if r.uri == TEMPLATE => &["1", "2", "123"],
        _ => &[],
    }
}

// --- The handler -----------------------------------------------------------------------------

/// Tools: `#[tool_handler]` over rmcp's ToolRouter (call_tool, list_tools, get_tool), read
/// from a snapshot of the shared router so the hooks can change it.
#[tool_handler(router = self.tools())]
impl ServerHandler for Conformance {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "vmcp-rmcp-conformance",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions("rmcp fixture for the MCP conformance suite's server scenarios.")
    }

    // Prompts: rmcp's PromptRouter, except the MRTR prompt: a PromptContext carries no
    // `inputResponses`/`requestState`, so that one is served here (see crate::prompts).

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let mut prompts = self.prompts().list_all();
        prompts.push(crate::prompts::input_required_prompt());
        prompts.sort_by(|a, b| a.name.cmp(&b.name));
        let mut result = ListPromptsResult::with_all_items(prompts);
        if is_modern(&context) {
            result = result.with_ttl_ms(0).with_cache_scope(CacheScope::Public);
        }
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == crate::prompts::INPUT_REQUIRED_PROMPT {
            return crate::prompts::input_required(request, context).await;
        }
        let router = self.prompts();
        let prompt = PromptContext::new(self, request.name, request.arguments, context);
        router.get_prompt(prompt).await
    }

    // Resources.

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources())
            .with_ttl_ms(RESOURCE_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new(TEMPLATE, "template-data")
            .with_description("Data for the given id")
            .with_mime_type("application/json");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template])
            .with_ttl_ms(RESOURCE_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = read(&request.uri).ok_or_else(|| not_found(&request.uri))?;
        Ok(ReadResourceResult::new(vec![contents])
            .with_ttl_ms(RESOURCE_TTL_MS)
            .with_cache_scope(CacheScope::Public)
            .into())
    }

    // 2025-11-25 resource subscriptions (rmcp answers -32601 to them on 2026-07-28 requests).

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !exists(&request.uri) {
            return Err(not_found(&request.uri));
        }
        lock(&self.session.subscriptions).insert(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        lock(&self.session.subscriptions).remove(&request.uri);
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *lock(&self.session.log_level) = Some(request.level);
        Ok(())
    }

    /// A 2025-11-25 session is open: forward the hooks' changes to it until it closes.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut changes = self.shared.changes.subscribe();
        let session = self.session.clone();
        let peer = context.peer;
        tokio::spawn(async move {
            loop {
                let sent = match changes.recv().await {
                    Ok(Change::Tools) => peer.notify_tool_list_changed().await,
                    Ok(Change::Prompts) => peer.notify_prompt_list_changed().await,
                    Ok(Change::ResourceUpdated(uri)) => {
                        if !lock(&session.subscriptions).contains(&uri) {
                            continue;
                        }
                        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                            .await
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => break,
                };
                if sent.is_err() {
                    break; // the session is gone
                }
            }
        });
    }

    // 2026-07-28 subscriptions/listen.

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = requested.clone();
        if let Some(uris) = accepted.resource_subscriptions.as_mut() {
            uris.retain(|uri| exists(uri));
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.changes.subscribe();
        let sink = context.sink().clone();
        loop {
            let change = tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = changes.recv() => change,
            };
            let sent = match change {
                Ok(Change::Tools) => sink.notify_tool_list_changed().await,
                Ok(Change::Prompts) => sink.notify_prompt_list_changed().await,
                Ok(Change::ResourceUpdated(uri)) => sink.notify_resource_updated(uri).await,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            };
            // The sink refuses what the filter did not accept; it fails for good once the
            // stream is closed.
            if let Err(rmcp::service::SubscriptionSendError::SubscriptionClosed) = sent {
                return Ok(());
            }
        }
    }

    // Completions.

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let prefix = request.argument.value.as_str();
        let values = completions(&request.r#ref)
            .iter()
            .filter(|v| v.starts_with(prefix))
            .map(|v| v.to_string())
            .collect();
        let info = CompletionInfo::with_all_values(values)
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }
}
