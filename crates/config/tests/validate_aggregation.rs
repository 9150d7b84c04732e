//! Validation rules for `aggregation` (ToolHive's, plus backend references).

#![allow(clippy::unwrap_used)] // Test helpers: a panic is the failure report.

mod common;

use common::{TWO, error_at, errors, ok};
use vmcp_config::{ConflictStrategy, ToolVisibility};

fn with(agg: &str) -> String {
    format!("{TWO}aggregation:\n{agg}")
}

#[test]
fn tools_filters_and_overrides_parse() {
    let c = ok(&with(
        "  conflictResolution: priority
  conflictResolutionConfig:
    priorityOrder: [jira, github]
  excludeAllTools: false
  defaultToolVisibility: deny
  tools:
    - workload: github
      filter: [create_pr]
      overrides:
        create_pr:
          name: gh_create_pr
          annotations:
            title: Create PR
            readOnlyHint: false
            destructiveHint: true
    - workload: jira
      excludeAll: true
",
    ));
    let a = &c.aggregation;
    assert_eq!(a.conflict_resolution, ConflictStrategy::Priority);
    assert_eq!(
        a.conflict_resolution_config.priority_order,
        ["jira", "github"]
    );
    assert_eq!(a.default_tool_visibility, ToolVisibility::Deny);
    let gh = a.tools_for("github").expect("github entry");
    assert_eq!(gh.filter, ["create_pr"]);
    let o = &gh.overrides["create_pr"];
    assert_eq!(o.name.as_deref(), Some("gh_create_pr"));
    let ann = o.annotations.as_ref().expect("annotations");
    assert_eq!(ann.title.as_deref(), Some("Create PR"));
    assert_eq!(ann.read_only_hint, Some(false));
    assert_eq!(ann.idempotent_hint, None);
    assert!(a.tools_for("jira").expect("jira").exclude_all);
}

#[test]
fn priority_needs_priority_order_of_known_backends() {
    error_at(
        &with("  conflictResolution: priority\n"),
        "aggregation.conflictResolutionConfig.priorityOrder",
        "required for the priority strategy",
    );
    let e = error_at(
        &with(
            "  conflictResolution: priority\n  conflictResolutionConfig:\n    priorityOrder:\n      - github\n      - jria\n",
        ),
        "aggregation.conflictResolutionConfig.priorityOrder[1]",
        "not a configured backend",
    );
    assert!(e.message.contains("did you mean \"jira\""));
    assert_eq!(e.line, Some(11));
    error_at(
        &with(
            "  conflictResolution: priority\n  conflictResolutionConfig:\n    priorityOrder: [jira, jira]\n",
        ),
        "aggregation.conflictResolutionConfig.priorityOrder[1]",
        "listed twice",
    );
}

#[test]
fn prefix_format_must_contain_workload() {
    error_at(
        &with("  conflictResolutionConfig:\n    prefixFormat: \"mcp_\"\n"),
        "aggregation.conflictResolutionConfig.prefixFormat",
        "must contain {workload}",
    );
    error_at(
        &with("  conflictResolutionConfig:\n    prefixFormat: \"\"\n"),
        "aggregation.conflictResolutionConfig.prefixFormat",
        "must not be empty",
    );
    let c = ok(&with(
        "  conflictResolutionConfig:\n    prefixFormat: \"{workload}.\"\n",
    ));
    assert_eq!(
        c.aggregation.conflict_resolution_config.prefix_format,
        "{workload}."
    );
}

#[test]
fn manual_needs_tool_entries() {
    error_at(
        &with("  conflictResolution: manual\n"),
        "aggregation.tools",
        "required for the manual strategy",
    );
    ok(&with(
        "  conflictResolution: manual\n  tools:\n    - workload: github\n      overrides:\n        a: {name: b}\n",
    ));
}

#[test]
fn deny_with_priority_needs_tools_entry_for_each_priority_backend() {
    error_at(
        &with(
            "  conflictResolution: priority\n  defaultToolVisibility: deny\n  conflictResolutionConfig:\n    priorityOrder: [github]\n",
        ),
        "aggregation.conflictResolutionConfig.priorityOrder[0]",
        "has no tools entry",
    );
}

#[test]
fn workload_entries_are_required_unique_and_known() {
    let yaml = with(
        "  tools:
    - filter: [x]
    - workload: github
    - workload: github
    - workload: gitlab
",
    );
    error_at(&yaml, "aggregation.tools[0].workload", "is required");
    error_at(&yaml, "aggregation.tools[2].workload", "duplicate workload");
    error_at(
        &yaml,
        "aggregation.tools[3].workload",
        "not a configured backend",
    );
}

#[test]
fn overrides_must_change_something_and_not_collide() {
    let yaml = with(
        "  tools:
    - workload: github
      overrides:
        a: {}
        b: {name: same}
        c: {name: same}
        d: {description: \"\"}
",
    );
    error_at(
        &yaml,
        "aggregation.tools[0].overrides.a",
        "at least one of name",
    );
    error_at(
        &yaml,
        "aggregation.tools[0].overrides.c.name",
        "also renamed to \"same\"",
    );
    error_at(
        &yaml,
        "aggregation.tools[0].overrides.d",
        "at least one of name",
    );
    error_at(
        &with(
            "  tools:\n    - workload: github\n      overrides:\n        a:\n          annotations: {readOnly: true}\n",
        ),
        "aggregation.tools[0].overrides.a.annotations.readOnly",
        "did you mean \"readOnlyHint\"",
    );
}

#[test]
fn enum_values_are_checked() {
    let yaml = with("  conflictResolution: first\n  defaultToolVisibility: hide\n");
    let errs = errors(&yaml);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    error_at(
        &yaml,
        "aggregation.conflictResolution",
        "prefix, priority, manual",
    );
    error_at(&yaml, "aggregation.defaultToolVisibility", "allow, deny");
}
