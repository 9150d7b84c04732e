//! `notes-server`: an MCP server over stdio keeping notes in a JSON file: tools to add, list and
//! search them, a resource per note (`note://<id>`), and a prompt that asks for a summary. Built
//! with rmcp, the official Rust SDK.
//!
//! Usage: `notes-server [--file PATH]` (default: `$NOTES_FILE`, else `vmcp-quickstart-notes.json`
//! in the temporary directory); a missing file starts with three example notes.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use clap::Parser;
use rmcp::handler::server::prompt::PromptContext;
use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourcesResult, PaginatedRequestParams, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities,
    ServerConfig,
};
use rmcp::schemars::JsonSchema;
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt, prompt, prompt_router, tool, tool_handler,
    tool_router,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Note {
    id: u64,
    title: String,
    body: String,
    tags: Vec<String>,
}

impl Note {
    fn uri(&self) -> String {
        format!("note://{}", self.id)
    }

    fn markdown(&self) -> String {
        format!(
            "# {}\n\n{}\n\ntags: {}\n",
            self.title,
            self.body,
            self.tags.join(", ")
        )
    }

    fn matches(&self, query: &str) -> bool {
        let q = query.to_lowercase();
        self.title.to_lowercase().contains(&q)
            || self.body.to_lowercase().contains(&q)
            || self.tags.iter().any(|t| t.to_lowercase() == q)
    }
}

/// The notes and the file they live in (rewritten whole on every change).
struct Store {
    file: PathBuf,
    notes: Vec<Note>,
}

impl Store {
    fn open(file: PathBuf) -> std::io::Result<Self> {
        let notes = match std::fs::read(&file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                std::io::Error::other(format!("{} is not a notes file: {e}", file.display()))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => examples(),
            Err(e) => return Err(e),
        };
        let store = Self { file, notes };
        store.save()?;
        Ok(store)
    }

    fn save(&self) -> std::io::Result<()> {
        let tmp = self.file.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(&self.notes)?)?;
        std::fs::rename(tmp, &self.file)
    }
}

fn examples() -> Vec<Note> {
    let note = |id, title: &str, body: &str, tags: &[&str]| Note {
        id,
        title: title.into(),
        body: body.into(),
        tags: tags.iter().map(|t| (*t).into()).collect(),
    };
    vec![
        note(
            1,
            "Dentist",
            "Dentist at 16:30, bring the insurance card.",
            &["today", "health"],
        ),
        note(
            2,
            "Bike to work",
            "Ride in if it stays dry and the wind is under 25 km/h.",
            &["today", "commute"],
        ),
        note(
            3,
            "Gateway rollout",
            "Move the team's IDEs to the vmcp endpoint; keep the old servers as backends.",
            &["work"],
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct AddArgs {
    /// A short title.
    title: String,
    /// The note's text.
    body: String,
    /// Tags, e.g. ["today", "work"].
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct ListArgs {
    /// Only notes with this tag.
    #[serde(default)]
    tag: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct SearchArgs {
    /// Words to look for in titles and bodies, or a tag.
    query: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct SummarizeArgs {
    /// Only notes with this tag (default: all).
    #[serde(default)]
    tag: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Found {
    count: usize,
    notes: Vec<Note>,
    /// One line a person can read.
    summary: String,
}

impl Found {
    fn of(notes: Vec<Note>) -> Self {
        let summary = if notes.is_empty() {
            "No notes.".to_owned()
        } else {
            notes
                .iter()
                .map(|n| format!("{}: {}", n.title, n.body))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        Self {
            count: notes.len(),
            notes,
            summary,
        }
    }
}

#[derive(Clone)]
struct Notes {
    store: Arc<Mutex<Store>>,
    prompt_router: PromptRouter<Self>,
}

impl Notes {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn tagged(&self, tag: Option<&str>) -> Vec<Note> {
        self.store()
            .notes
            .iter()
            .filter(|n| tag.is_none_or(|t| n.tags.iter().any(|x| x.eq_ignore_ascii_case(t))))
            .cloned()
            .collect()
    }
}

#[tool_router]
impl Notes {
    #[tool(description = "Adds a note (title, body, optional tags) and returns it.")]
    async fn add_note(
        &self,
        Parameters(args): Parameters<AddArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Note>, ErrorData> {
        if args.title.trim().is_empty() {
            return Err(ErrorData::invalid_params("title must not be empty", None));
        }
        let note = {
            let mut store = self.store();
            let id = store.notes.iter().map(|n| n.id).max().unwrap_or(0) + 1;
            let note = Note {
                id,
                title: args.title,
                body: args.body,
                tags: args.tags,
            };
            store.notes.push(note.clone());
            store.save().map_err(|e| {
                ErrorData::internal_error(format!("could not save the notes: {e}"), None)
            })?;
            note
        };
        // The new note is a new resource: clients (and gateways) re-read the list.
        let _ = context.peer.notify_resource_list_changed().await;
        Ok(Json(note))
    }

    #[tool(
        description = "Lists notes, optionally only those with a tag.",
        annotations(read_only_hint = true)
    )]
    fn list_notes(&self, Parameters(args): Parameters<ListArgs>) -> Json<Found> {
        Json(Found::of(self.tagged(args.tag.as_deref())))
    }

    #[tool(
        description = "Finds notes whose title or body contains the words, or that carry the tag.",
        annotations(read_only_hint = true)
    )]
    fn search_notes(&self, Parameters(args): Parameters<SearchArgs>) -> Json<Found> {
        let found = self
            .store()
            .notes
            .iter()
            .filter(|n| n.matches(&args.query))
            .cloned()
            .collect();
        Json(Found::of(found))
    }
}

#[prompt_router]
impl Notes {
    #[prompt(
        description = "Asks the model to summarise the notes (optionally one tag's) as a short to-do list."
    )]
    fn summarize_notes(&self, Parameters(args): Parameters<SummarizeArgs>) -> Vec<PromptMessage> {
        let notes = self.tagged(args.tag.as_deref());
        let listed: String = notes
            .iter()
            .map(Note::markdown)
            .collect::<Vec<_>>()
            .join("\n");
        vec![PromptMessage::new_text(
            Role::User,
            format!("Summarise these notes as a short to-do list, most urgent first:\n\n{listed}"),
        )]
    }
}

#[tool_handler]
impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_resources_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "notes-server",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Notes kept in a file: add, list and search them; each is a note:// resource.",
            )
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            self.prompt_router.list_all(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let prompt = PromptContext::new(self, request.name, request.arguments, context);
        self.prompt_router.get_prompt(prompt).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self
            .store()
            .notes
            .iter()
            .map(|n| {
                Resource::new(n.uri(), n.title.clone())
                    .with_description(format!("tags: {}", n.tags.join(", ")))
                    .with_mime_type("text/markdown")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let note = self
            .store()
            .notes
            .iter()
            .find(|n| n.uri() == request.uri)
            .cloned()
            .ok_or_else(|| {
                ErrorData::resource_not_found(format!("no note {}", request.uri), None)
            })?;
        let contents =
            ResourceContents::text(note.markdown(), note.uri()).with_mime_type("text/markdown");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// An MCP notes server over stdio.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// The notes file (created with three example notes when missing; default `$NOTES_FILE`).
    #[arg(long)]
    file: Option<PathBuf>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let file = cli
        .file
        .or_else(|| std::env::var_os("NOTES_FILE").map(PathBuf::from))
        .unwrap_or_else(|| std::env::temp_dir().join("vmcp-quickstart-notes.json"));
    let notes = Notes {
        store: Arc::new(Mutex::new(Store::open(file)?)),
        prompt_router: Notes::prompt_router(),
    };
    let running = notes
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
