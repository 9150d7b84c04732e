//! The smallest useful program per engine: index three tools, answer one query. Built with
//! exactly one of the features `ours`, `fts5`, `tantivy` (or none, for the baseline), it shows
//! what each engine adds to a stripped release binary and to a clean release build.

#[allow(unused_imports)]
use search_compare::Tool;

#[allow(dead_code)]
fn tools() -> Vec<Tool> {
    let tool = |name: &str, description: &str, params: &str| Tool {
        name: name.into(),
        description: description.into(),
        params: params.into(),
    };
    vec![
        tool(
            "github_create_issue",
            "Create a new issue in a GitHub repository.",
            "owner repo title body",
        ),
        tool(
            "slack_post_message",
            "Post a message to a Slack channel.",
            "channel text",
        ),
        tool(
            "filesystem_read_file",
            "Read the complete contents of a file.",
            "path",
        ),
    ]
}

fn main() {
    // The query comes from the command line so nothing can be folded at compile time.
    let task = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "open a bug report on github".into());
    #[allow(unused_variables)]
    let words: Vec<String> = task.split_whitespace().map(str::to_owned).collect();
    #[cfg(feature = "ours")]
    println!(
        "{:?}",
        search_compare::ours::Ours::build(&tools()).search(&task, 8)
    );
    #[cfg(feature = "fts5")]
    println!(
        "{:?}",
        search_compare::fts5::Fts5::build(&tools())
            .and_then(|e| e.search_words(&words, 8))
            .expect("fts5")
    );
    #[cfg(feature = "tantivy")]
    println!(
        "{:?}",
        search_compare::tantivy_bm25::Tantivy::build(&tools())
            .and_then(|e| e.search_words(&words, 8))
            .expect("tantivy")
    );
    #[cfg(not(any(feature = "ours", feature = "fts5", feature = "tantivy")))]
    println!("{task}");
}
