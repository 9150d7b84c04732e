use serde_json::{Map, json};

use super::*;
use crate::catalog::Catalog;
use crate::policy::{ToolOverride, WorkloadPolicy};

fn caps(backend: &str, tools: &[&str]) -> BackendCapabilities {
    BackendCapabilities {
        backend: backend.into(),
        tools: tools.iter().map(|t| json!({"name": t, "description": format!("{t} of {backend}"), "inputSchema": {"type": "object"}})).collect(),
        ..Default::default()
    }
}

fn names(tools: &[ResolvedTool]) -> Vec<(String, String, String, bool)> {
    tools
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.backend.clone(),
                t.original.clone(),
                t.advertised,
            )
        })
        .collect()
}

fn row(n: &str, b: &str, o: &str) -> (String, String, String, bool) {
    (n.into(), b.into(), o.into(), true)
}

#[test]
fn prefix_prefixes_every_tool_with_its_backend() {
    let p = AggregationPolicy::default();
    let out = resolve_tools(&p, &[caps("a", &["echo", "x"]), caps("b", &["echo"])]).unwrap();
    assert_eq!(
        names(&out),
        vec![
            row("a_echo", "a", "echo"),
            row("a_x", "a", "x"),
            row("b_echo", "b", "echo")
        ]
    );
    assert_eq!(out[0].tool["name"], "a_echo");
    assert_eq!(out[0].tool["description"], "echo of a");
}

#[test]
fn prefix_custom_format() {
    let p = AggregationPolicy {
        prefix_format: "{workload}.".into(),
        ..Default::default()
    };
    let out = resolve_tools(&p, &[caps("gh", &["issue"])]).unwrap();
    assert_eq!(out[0].name, "gh.issue");
}

#[test]
fn prefix_name_never_depends_on_other_backends() {
    let p = AggregationPolicy::default();
    let alone = resolve_tools(&p, &[caps("a", &["echo"])]).unwrap();
    let with = resolve_tools(&p, &[caps("a", &["echo"]), caps("b", &["echo"])]).unwrap();
    assert_eq!(alone[0].name, with[0].name);
}

#[test]
fn prefix_collision_after_prefixing_keeps_first_in_sorted_order() {
    // backend "a" tool "b_x" and backend "a_b" tool "x" both become "a_b_x".
    let p = AggregationPolicy::default();
    let out = resolve_tools(&p, &[caps("a", &["b_x"]), caps("a_b", &["x"])]).unwrap();
    assert_eq!(names(&out), vec![row("a_b_x", "a", "b_x")]);
}

#[test]
fn priority_keeps_bare_names_and_highest_priority_wins() {
    let p = AggregationPolicy {
        strategy: Strategy::Priority,
        priority_order: vec!["b".into(), "a".into()],
        ..Default::default()
    };
    let out = resolve_tools(
        &p,
        &[
            caps("a", &["echo", "only_a"]),
            caps("b", &["echo"]),
            caps("c", &["only_c"]),
        ],
    )
    .unwrap();
    assert_eq!(
        names(&out),
        vec![
            row("echo", "b", "echo"),
            row("only_a", "a", "only_a"),
            row("only_c", "c", "only_c")
        ]
    );
}

#[test]
fn priority_conflict_among_unlisted_backends_falls_back_to_prefix() {
    let p = AggregationPolicy {
        strategy: Strategy::Priority,
        priority_order: vec!["z".into()],
        ..Default::default()
    };
    let out = resolve_tools(&p, &[caps("a", &["echo"]), caps("b", &["echo"])]).unwrap();
    assert_eq!(
        names(&out),
        vec![row("a_echo", "a", "echo"), row("b_echo", "b", "echo")]
    );
}

#[test]
fn priority_listed_beats_unlisted() {
    let p = AggregationPolicy {
        strategy: Strategy::Priority,
        priority_order: vec!["b".into()],
        ..Default::default()
    };
    let out = resolve_tools(&p, &[caps("a", &["echo"]), caps("b", &["echo"])]).unwrap();
    assert_eq!(names(&out), vec![row("echo", "b", "echo")]);
}

fn rename(to: &str) -> ToolOverride {
    ToolOverride {
        name: Some(to.into()),
        ..Default::default()
    }
}

#[test]
fn manual_requires_every_conflict_resolved() {
    let p = AggregationPolicy {
        strategy: Strategy::Manual,
        ..Default::default()
    };
    let err = resolve_tools(&p, &[caps("a", &["echo"]), caps("b", &["echo", "y"])]).unwrap_err();
    assert!(err.contains("echo [a, b]"), "{err}");
}

#[test]
fn manual_overrides_resolve_conflicts() {
    let mut p = AggregationPolicy {
        strategy: Strategy::Manual,
        ..Default::default()
    };
    p.workloads.insert(
        "b".into(),
        WorkloadPolicy {
            overrides: [("echo".to_string(), rename("b_echo"))].into(),
            ..Default::default()
        },
    );
    let out = resolve_tools(&p, &[caps("a", &["echo"]), caps("b", &["echo"])]).unwrap();
    assert_eq!(
        names(&out),
        vec![row("b_echo", "b", "echo"), row("echo", "a", "echo")]
    );
}

#[test]
fn overrides_rename_before_prefixing_and_rewrite_description_and_annotations() {
    let mut p = AggregationPolicy::default();
    let mut ann = Map::new();
    ann.insert("readOnlyHint".into(), json!(true));
    p.workloads.insert(
        "gh".into(),
        WorkloadPolicy {
            overrides: [(
                "create_issue".to_string(),
                ToolOverride {
                    name: Some("new_issue".into()),
                    description: Some("Open an issue".into()),
                    annotations: ann,
                },
            )]
            .into(),
            ..Default::default()
        },
    );
    let out = resolve_tools(&p, &[caps("gh", &["create_issue"])]).unwrap();
    assert_eq!(names(&out), vec![row("gh_new_issue", "gh", "create_issue")]);
    assert_eq!(out[0].tool["description"], "Open an issue");
    assert_eq!(out[0].tool["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(out[0].tool["inputSchema"], json!({"type": "object"}));
}

#[test]
fn filter_exclude_all_and_default_deny_control_advertising_only() {
    let mut p = AggregationPolicy {
        deny_unlisted: true,
        ..Default::default()
    };
    p.workloads.insert(
        "a".into(),
        WorkloadPolicy {
            filter: vec!["keep".into()],
            ..Default::default()
        },
    );
    p.workloads.insert(
        "b".into(),
        WorkloadPolicy {
            exclude_all: true,
            ..Default::default()
        },
    );
    let input = [
        caps("a", &["keep", "drop"]),
        caps("b", &["t"]),
        caps("c", &["unlisted"]),
    ];
    let out = resolve_tools(&p, &input).unwrap();
    let adv: Vec<_> = out
        .iter()
        .map(|t| (t.name.as_str(), t.advertised))
        .collect();
    assert_eq!(
        adv,
        vec![
            ("a_drop", false),
            ("a_keep", true),
            ("b_t", false),
            ("c_unlisted", false)
        ]
    );
    // Hidden tools stay routable.
    let cat = Catalog::build(&p, input.to_vec(), vec![]).unwrap();
    assert_eq!(cat.tools().len(), 1);
    assert_eq!(cat.tool("b_t").map(|r| r.original.as_str()), Some("t"));
}

#[test]
fn filter_matches_the_backend_original_name_even_when_renamed() {
    let mut p = AggregationPolicy::default();
    p.workloads.insert(
        "a".into(),
        WorkloadPolicy {
            filter: vec!["orig".into()],
            overrides: [("orig".to_string(), rename("renamed"))].into(),
            ..Default::default()
        },
    );
    let out = resolve_tools(&p, &[caps("a", &["orig", "other"])]).unwrap();
    let adv: Vec<_> = out
        .iter()
        .map(|t| (t.name.as_str(), t.advertised))
        .collect();
    assert_eq!(adv, vec![("a_other", false), ("a_renamed", true)]);
}

#[test]
fn exclude_all_tools_hides_everything() {
    let p = AggregationPolicy {
        exclude_all_tools: true,
        ..Default::default()
    };
    let cat = Catalog::build(&p, vec![caps("a", &["x"])], vec![]).unwrap();
    assert!(cat.tools().is_empty());
    assert!(cat.tool("a_x").is_some());
}

#[test]
fn resolution_is_deterministic_whatever_the_input_order() {
    let p = AggregationPolicy {
        strategy: Strategy::Priority,
        ..Default::default()
    };
    let one = resolve_tools(&p, &[caps("a", &["x", "y"]), caps("b", &["x"])]).unwrap();
    let two = resolve_tools(&p, &[caps("b", &["x"]), caps("a", &["y", "x"])]);
    // resolve_tools expects sorted input; Catalog::build sorts, so compare through it.
    let c1 = Catalog::build(&p, vec![caps("a", &["x", "y"]), caps("b", &["x"])], vec![]).unwrap();
    let c2 = Catalog::build(&p, vec![caps("b", &["x"]), caps("a", &["x", "y"])], vec![]).unwrap();
    assert_eq!(c1.tools(), c2.tools());
    // Each backend's tools keep the order the backend lists them in, as a direct client sees.
    let c3 = Catalog::build(&p, vec![caps("b", &["x"]), caps("a", &["y", "x"])], vec![]).unwrap();
    let names = |c: &Catalog| {
        c.tools()
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&c1), ["a_x", "y", "b_x"]);
    assert_eq!(names(&c3), ["y", "a_x", "b_x"]);
    assert_eq!(
        c3.advertised_tool("a_x").map(|t| &t["name"]),
        Some(&json!("a_x"))
    );
    assert_eq!(one.len(), 3);
    assert!(two.is_ok());
}

fn prompt_caps(backend: &str, prompts: &[&str]) -> BackendCapabilities {
    BackendCapabilities {
        backend: backend.into(),
        prompts: prompts.iter().map(|p| json!({"name": p})).collect(),
        ..Default::default()
    }
}

fn prompt_names(
    p: &AggregationPolicy,
    caps: Vec<BackendCapabilities>,
) -> Vec<(String, String, String)> {
    let cat = Catalog::build(p, caps, vec![]).unwrap();
    cat.prompts()
        .iter()
        .map(|v| {
            let n = v["name"].as_str().unwrap().to_string();
            let r = cat.prompt(&n).unwrap();
            (n, r.backend.clone(), r.original.clone())
        })
        .collect()
}

#[test]
fn prompts_are_always_prefixed_by_default_even_under_manual() {
    for strategy in [Strategy::Prefix, Strategy::Manual] {
        let p = AggregationPolicy {
            strategy,
            ..Default::default()
        };
        assert_eq!(
            prompt_names(
                &p,
                vec![prompt_caps("a", &["review"]), prompt_caps("b", &["review"])]
            ),
            vec![
                ("a_review".into(), "a".into(), "review".into()),
                ("b_review".into(), "b".into(), "review".into())
            ]
        );
    }
}

#[test]
fn prompts_under_priority_listed_keep_bare_names_unlisted_stay_prefixed() {
    let p = AggregationPolicy {
        strategy: Strategy::Priority,
        priority_order: vec!["b".into(), "a".into()],
        ..Default::default()
    };
    assert_eq!(
        prompt_names(
            &p,
            vec![
                prompt_caps("a", &["review", "solo"]),
                prompt_caps("b", &["review"]),
                prompt_caps("c", &["solo"])
            ]
        ),
        vec![
            ("c_solo".into(), "c".into(), "solo".into()),
            ("review".into(), "b".into(), "review".into()),
            ("solo".into(), "a".into(), "solo".into()),
        ]
    );
}

#[test]
fn ambiguous_composed_prompt_names_are_all_dropped() {
    // b1's "x_y" and b1_x's "y" both compose to "b1_x_y".
    let p = AggregationPolicy::default();
    assert_eq!(
        prompt_names(
            &p,
            vec![
                prompt_caps("b1", &["x_y", "ok"]),
                prompt_caps("b1_x", &["y"])
            ]
        ),
        vec![("b1_ok".into(), "b1".into(), "ok".into())]
    );
    // A prefixed name hitting a listed backend's literal name is ambiguous too.
    let p = AggregationPolicy {
        strategy: Strategy::Priority,
        priority_order: vec!["lit".into()],
        ..Default::default()
    };
    assert!(
        prompt_names(
            &p,
            vec![prompt_caps("lit", &["u_p"]), prompt_caps("u", &["p"])]
        )
        .is_empty()
    );
}

#[test]
fn resources_and_templates_are_never_rewritten_and_first_sorted_backend_wins() {
    let mk = |b: &str, uris: &[&str], templates: &[&str]| BackendCapabilities {
        backend: b.into(),
        resources: uris
            .iter()
            .map(|u| json!({"uri": u, "name": format!("{u} from {b}")}))
            .collect(),
        templates: templates
            .iter()
            .map(|t| json!({"uriTemplate": t, "name": b}))
            .collect(),
        ..Default::default()
    };
    let p = AggregationPolicy::default();
    let cat = Catalog::build(
        &p,
        vec![
            mk("b", &["s://shared", "s://b"], &["t://{x}"]),
            mk("a", &["s://shared"], &["t://{x}", "a://{id}"]),
        ],
        vec![],
    )
    .unwrap();
    let uris: Vec<_> = cat
        .resources()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, vec!["s://b", "s://shared"]);
    assert_eq!(cat.resources()[1]["name"], "s://shared from a");
    assert_eq!(cat.resource_backend("s://shared"), Some("a"));
    assert_eq!(cat.resource_backend("s://b"), Some("b"));
    let templates: Vec<_> = cat
        .templates()
        .iter()
        .map(|r| r["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(templates, vec!["a://{id}", "t://{x}"]);
    assert_eq!(cat.resource_backend("t://7"), Some("a"));
    assert_eq!(cat.template_backend("t://{x}"), Some("a"));
    assert_eq!(cat.resource_backend("nope://"), None);
}
