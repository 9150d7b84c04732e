//! `optimizer`: ToolHive's rules (ranges, the OpenAI provider's model and headers).

use crate::error::{Issues, KeyPath};
use crate::schema::{EmbeddingProvider, OptimizerConfig};

pub(crate) fn check(o: &OptimizerConfig, path: &KeyPath, issues: &Issues) {
    if !(1..=50).contains(&o.max_tools_to_return) {
        issues.push_new(&path.key("maxToolsToReturn"), "must be between 1 and 50");
    }
    if !(0.0..=1.0).contains(&o.hybrid_search_semantic_ratio) {
        issues.push_new(
            &path.key("hybridSearchSemanticRatio"),
            "must be between 0 and 1",
        );
    }
    if !(0.0..=2.0).contains(&o.semantic_distance_threshold) {
        issues.push_new(
            &path.key("semanticDistanceThreshold"),
            "must be between 0 and 2 (a cosine distance)",
        );
    }
    if let Some(url) = &o.embedding_service
        && !super::is_http_url(url)
    {
        issues.push_new(
            &path.key("embeddingService"),
            "must be an http:// or https:// URL",
        );
    }
    if o.embedding_provider == EmbeddingProvider::OpenAi
        && o.embedding_service.is_some()
        && o.embedding_model.is_none()
    {
        issues.push_new(
            &path.key("embeddingModel"),
            "is required when embeddingProvider is openai",
        );
    }
    let local = o.embedding_provider == EmbeddingProvider::Local;
    if local && o.embedding_model_path.is_none() {
        issues.push_new(
            &path.key("embeddingModelPath"),
            "is required when embeddingProvider is local (a directory with config.json, model.safetensors and tokenizer.json)",
        );
    }
    if local && o.embedding_service.is_some() {
        issues.push_new(
            &path.key("embeddingService"),
            "must not be set when embeddingProvider is local (the model runs in vmcp)",
        );
    }
    if !local && o.embedding_model_path.is_some() {
        issues.push_new(
            &path.key("embeddingModelPath"),
            "is used only with embeddingProvider: local",
        );
    }
    let headers = path.key("embeddingHeaders");
    for (name, value) in &o.embedding_headers {
        let lower = name.to_ascii_lowercase();
        let problem = if lower == "authorization" || lower == "content-type" {
            Some(format!(
                "{name:?} is set by vmcp itself (Authorization from OPENAI_API_KEY)"
            ))
        } else if !(1..=8192).contains(&value.len()) {
            Some("values must be 1 to 8192 characters".to_owned())
        } else {
            super::header_name_problem(name)
        };
        if let Some(p) = problem {
            issues.push_new(&headers.key(name), p);
        }
    }
}
