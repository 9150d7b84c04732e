//! End-to-end ranking over a small, realistic tool catalog.

use vmcp_search::{Index, Query};

const CATALOG: &[(&str, &str)] = &[
    (
        "github.create_issue",
        "Create a new issue in a GitHub repository",
    ),
    (
        "github.list_issues",
        "List issues in a GitHub repository with optional filters",
    ),
    (
        "github.get_issue",
        "Get details of a specific issue in a GitHub repository",
    ),
    (
        "github.merge_pull_request",
        "Merge a pull request in a GitHub repository",
    ),
    (
        "github.create_pull_request",
        "Create a new pull request in a GitHub repository",
    ),
    (
        "github.search_repositories",
        "Search for GitHub repositories",
    ),
    ("slack.post_message", "Post a message to a Slack channel"),
    (
        "slack.list_channels",
        "List public channels in the Slack workspace",
    ),
    (
        "filesystem.read_file",
        "Read the complete contents of a file from the file system",
    ),
    (
        "filesystem.write_file",
        "Create a new file or overwrite an existing file with new content",
    ),
    (
        "filesystem.list_directory",
        "List files and directories in a given path",
    ),
    (
        "weather.get_forecast",
        "Get the weather forecast for a location",
    ),
    (
        "weather.get_alerts",
        "Get active weather alerts for a US state",
    ),
    (
        "fetch.fetch",
        "Fetches a URL from the internet and extracts its contents as markdown",
    ),
    (
        "jira.create_ticket",
        "Create a new Jira ticket in a project",
    ),
];

fn catalog() -> Index {
    Index::build(CATALOG.iter().copied())
}

fn names(results: &[(usize, f64)]) -> Vec<&'static str> {
    results.iter().map(|&(i, _)| CATALOG[i].0).collect()
}

fn search(description: &str, keywords: &[&str]) -> Vec<&'static str> {
    let keywords: Vec<String> = keywords.iter().map(|k| k.to_string()).collect();
    let query = Query::from_request(description, &keywords);
    names(&catalog().search(&query, 5, |_| true))
}

#[test]
fn natural_queries_rank_the_expected_tool_first() {
    assert_eq!(
        search("open a new github issue", &[])[0],
        "github.create_issue"
    );
    assert_eq!(search("", &["weather"])[0], "weather.get_forecast");
    assert_eq!(search("read a file", &[])[0], "filesystem.read_file");
    assert_eq!(
        search("post a message on slack", &[])[0],
        "slack.post_message"
    );
    assert_eq!(
        search("merge the pull request", &[])[0],
        "github.merge_pull_request"
    );
    // Keywords take precedence over the description.
    assert_eq!(
        search("open a new github issue", &["slack", "message"])[0],
        "slack.post_message"
    );
    // Stemming: "forecasts" and "alerting" reach "forecast" and "alert".
    assert_eq!(search("weather forecasts", &[])[0], "weather.get_forecast");
    assert_eq!(search("alerting", &[])[0], "weather.get_alerts");
}

#[test]
fn scores_are_positive_and_descending() {
    let query = Query::from_request("list github issues", &[]);
    let results = catalog().search(&query, 100, |_| true);
    assert!(!results.is_empty());
    assert!(results.windows(2).all(|w| w[0].1 >= w[1].1));
    assert!(results.iter().all(|r| r.1 > 0.0));
    assert_eq!(CATALOG[results[0].0].0, "github.list_issues");
}

#[test]
fn allowed_filters_results_but_not_statistics() {
    let index = catalog();
    let query = Query::from_request("open a new github issue", &[]);
    let all = index.search(&query, 100, |_| true);
    let create_issue = 0;
    let filtered = index.search(&query, 100, |i| i != create_issue);
    assert!(filtered.iter().all(|r| r.0 != create_issue));
    assert_eq!(filtered.len(), all.len() - 1);
    // Same scores as unfiltered: IDF and avgdl come from the whole catalog.
    let expected: Vec<_> = all
        .iter()
        .copied()
        .filter(|r| r.0 != create_issue)
        .collect();
    assert_eq!(filtered, expected);
    // Only weather tools allowed.
    let only_weather = index.search(&query, 100, |i| CATALOG[i].0.starts_with("weather."));
    assert!(
        names(&only_weather)
            .iter()
            .all(|n| n.starts_with("weather."))
    );
    assert!(index.search(&query, 100, |_| false).is_empty());
}

#[test]
fn limit_caps_the_results() {
    let index = catalog();
    let query = Query::from_request("github", &[]);
    assert_eq!(index.search(&query, 100, |_| true).len(), 6);
    let top3 = index.search(&query, 3, |_| true);
    assert_eq!(top3.len(), 3);
    assert_eq!(top3[..], index.search(&query, 100, |_| true)[..3]);
    assert!(index.search(&query, 0, |_| true).is_empty());
}

#[test]
fn empty_queries_find_nothing() {
    let index = catalog();
    for (description, keywords) in [
        ("", vec![]),
        ("tool name description", vec![]),
        ("...", vec!["--"]),
    ] {
        let keywords: Vec<String> = keywords.into_iter().map(String::from).collect();
        let query = Query::from_request(description, &keywords);
        assert!(query.is_empty());
        assert!(index.search(&query, 10, |_| true).is_empty());
    }
    let unknown = Query::from_request("kubernetes", &[]);
    assert!(!unknown.is_empty());
    assert!(index.search(&unknown, 10, |_| true).is_empty());
}

#[test]
fn hand_computed_bm25() {
    // Tokens per row (porter-stemmed):
    //   0: name [get, weather]   description [get, the, weather, forecast]       D = 6
    //   1: name [send, email]    description [send, an, email]                   D = 5
    //   2: name [list, file]     description [list, file, in, a, directori]      D = 7
    // N = 3, avgdl = 18 / 3 = 6, k1 = 1.2, b = 0.75.
    let index = Index::build([
        ("get_weather", "Get the weather forecast"),
        ("send_email", "Send an email"),
        ("list_files", "List files in a directory"),
    ]);

    // "weather": n = 1, IDF = ln((3 - 1 + 0.5) / (1 + 0.5)) = ln(5/3) = 0.5108256237659907.
    // Row 0: f = 2 (one hit per column, weights 1), D / avgdl = 1,
    //   score = IDF * (2 * 2.2) / (2 + 1.2 * (0.25 + 0.75)) = IDF * 4.4 / 3.2 = 0.7023852326782373.
    let weather = index.search(&Query::from_request("", &["weather".into()]), 10, |_| true);
    assert_eq!(weather.len(), 1);
    assert_eq!(weather[0].0, 0);
    assert!(
        (weather[0].1 - 0.702_385_232_678_237_3).abs() < 1e-12,
        "{weather:?}"
    );

    // "send email": two phrases, each n = 1 (IDF = ln(5/3)) and f = 2 in row 1, D = 5:
    //   K = 1.2 * (0.25 + 0.75 * 5/6) = 1.05; per phrase IDF * 4.4 / 3.05 = 0.7369287687115933;
    //   score = 2 * 0.7369287687115933 = 1.4738575374231866.
    let email = index.search(&Query::from_request("send email", &[]), 10, |_| true);
    assert_eq!(email.len(), 1);
    assert_eq!(email[0].0, 1);
    assert!(
        (email[0].1 - 1.473_857_537_423_186_6).abs() < 1e-12,
        "{email:?}"
    );
}

#[test]
fn ties_keep_insertion_order() {
    let index = Index::build([
        ("alpha", "same words"),
        ("beta", "same words"),
        ("gamma", "other"),
    ]);
    let results = index.search(&Query::from_request("words", &[]), 10, |_| true);
    assert_eq!(results.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(results[0].1, results[1].1);
}

#[test]
fn garbage_and_unicode_inputs_do_not_panic() {
    let long = "x".repeat(10_000);
    let long_word = "ing".repeat(1_000);
    let garbage: Vec<&str> = vec![
        "",
        "\0\0\0",
        "\"\"\" OR AND NOT NEAR( * ^ : {name} -",
        "🚀🔥💥",
        "\u{301}\u{302}\u{303}",
        "e\u{301}\u{301}\u{301}",
        "ﷺ مرحبا بالعالم",
        "日本語のテキスト",
        "\u{FEFF}\u{200B}\u{202E}reversed",
        "ǅǈǋ İı ß ẞ ﬁ",
        "\u{E000}\u{F8FF}\u{10FFFD}",
        "a\u{1000}ed \u{1000}\u{1000}ing",
        "aed aing yed eed ied sss yyy",
        &long,
        &long_word,
    ];
    let index = Index::build(garbage.iter().map(|g| (*g, *g)));
    assert_eq!(index.len(), garbage.len());
    for g in &garbage {
        let _ = vmcp_search::tokens(g);
        let _ = vmcp_search::stem(g);
        let keywords = vec![g.to_string()];
        for query in [
            Query::from_request(g, &[]),
            Query::from_request("", &keywords),
        ] {
            let _ = index.search(&query, 5, |_| true);
            let _ = catalog().search(&query, 5, |_| true);
        }
    }
}
