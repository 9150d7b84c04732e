//! The quickstart as a newcomer runs it: examples/quickstart.yaml unchanged, in front of the
//! example servers of crates/examples (notes over stdio, weather over Streamable HTTP, both
//! built on rmcp): the realistic tools are listed, none of the test fixtures' are, the composite
//! `plan_my_day` combines both servers, and a note added through the gateway shows up in it.

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{Client, Gateway};
use serde_json::{Value, json};

/// The weather server on a free port; killed when dropped.
struct Weather {
    url: String,
    child: Child,
}

impl Drop for Weather {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn weather() -> Weather {
    let bin = vmcp_testkit::workspace_bin("vmcp-examples", "weather-server");
    let mut child = Command::new(bin)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().strip_prefix("listening ").unwrap().to_owned();
    Weather { url, child }
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_quickstart_serves_the_example_servers_and_plans_a_day() {
    let notes_bin = vmcp_testkit::workspace_bin("vmcp-examples", "notes-server");
    let weather = weather();
    let notes_file = common::temp_path("json");
    let yaml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/quickstart.yaml"
    ))
    .unwrap();
    let gw = Gateway::start_env(
        &yaml,
        &[],
        &[
            ("NOTES_SERVER", notes_bin.to_str().unwrap()),
            ("NOTES_FILE", notes_file.to_str().unwrap()),
            ("WEATHER_URL", &weather.url),
        ],
    );
    let c = Client::connect(&gw.url).await;

    let tools = names(&c.ok("tools/list", json!({})).await, "tools");
    for expected in [
        "notes_add_note",
        "notes_list_notes",
        "notes_search_notes",
        "weather_get_forecast",
        "weather_get_alerts",
        "weather_list_cities",
        "plan_my_day",
    ] {
        assert!(
            tools.contains(&expected.to_owned()),
            "{expected} missing from {tools:?}"
        );
    }
    assert_eq!(
        tools.len(),
        7,
        "test fixtures leaked into the quickstart: {tools:?}"
    );

    let plan = c.call("plan_my_day", json!({"city": "berlin"})).await;
    let day = &plan["result"]["structuredContent"];
    assert!(
        day["weather"]
            .as_str()
            .unwrap()
            .starts_with("Berlin today: overcast"),
        "{plan}"
    );
    assert!(day["alerts"].as_str().unwrap().contains("Snow"), "{plan}");
    assert!(day["todo"].as_str().unwrap().contains("Dentist"), "{plan}");

    // A note added through the gateway lands in the file and in the next plan.
    let added = c
        .call(
            "notes_add_note",
            json!({"title": "Buy snow boots", "body": "Before the snow tomorrow.", "tags": ["today"]}),
        )
        .await;
    assert_eq!(added["result"]["structuredContent"]["id"], 4, "{added}");
    let plan = c.call("plan_my_day", json!({"city": "Berlin"})).await;
    assert!(
        plan["result"]["structuredContent"]["todo"]
            .as_str()
            .unwrap()
            .contains("Buy snow boots"),
        "{plan}"
    );
    let stored = std::fs::read_to_string(&notes_file).unwrap();
    assert!(stored.contains("Buy snow boots"));
    let _ = std::fs::remove_file(&notes_file);

    // Each note is a resource; the server announces the new one (resources/list_changed) and the
    // gateway's list follows.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let resources = c.ok("resources/list", json!({})).await;
        let count = resources["resources"].as_array().unwrap().len();
        if count == 4 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the added note never became a resource: {resources}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let note = c.ok("resources/read", json!({"uri": "note://4"})).await;
    assert!(
        note["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# Buy snow boots"),
        "{note}"
    );
    let prompts = names(&c.ok("prompts/list", json!({})).await, "prompts");
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    assert!(prompts[0].contains("summarize_notes"), "{prompts:?}");

    // An unknown city is a precise error from the server, relayed.
    let unknown = c
        .call("weather_get_forecast", json!({"city": "Atlantis"}))
        .await;
    assert!(unknown.to_string().contains("unknown city"), "{unknown}");
}
