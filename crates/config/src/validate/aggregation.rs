//! Rules for `aggregation`, after ToolHive's validator: strategy requirements,
//! `priorityOrder` under `deny`, unique workloads, meaningful overrides; plus ours:
//! names must refer to configured backends and renames must not collide.

use std::collections::{BTreeMap, BTreeSet};

use super::{backend_names, check_backend_ref};
use crate::error::{Issues, KeyPath};
use crate::schema::{Config, ConflictStrategy, ToolVisibility};

pub(super) fn check(config: &Config, issues: &Issues) {
    let agg = &config.aggregation;
    let path = KeyPath::root().key("aggregation");
    let crc_path = path.key("conflictResolutionConfig");
    let names = backend_names(config);
    let crc = &agg.conflict_resolution_config;

    // The format also names prompts under every strategy, so it is always checked.
    if crc.prefix_format.is_empty() {
        issues.push_new(
            &crc_path.key("prefixFormat"),
            "must not be empty (e.g. \"{workload}_\")",
        );
    } else if !crc.prefix_format.contains("{workload}") {
        issues.push_new(
            &crc_path.key("prefixFormat"),
            format!(
                "{:?} must contain {{workload}}, or names from different backends collide",
                crc.prefix_format
            ),
        );
    }

    let order_path = crc_path.key("priorityOrder");
    if agg.conflict_resolution == ConflictStrategy::Priority && crc.priority_order.is_empty() {
        issues.push_new(&order_path, "is required for the priority strategy");
    }
    let mut seen = BTreeSet::new();
    for (i, name) in crc.priority_order.iter().enumerate() {
        check_backend_ref(names.as_ref(), name, &order_path.index(i), issues);
        if !seen.insert(name.as_str()) {
            issues.push_new(&order_path.index(i), format!("{name:?} is listed twice"));
        }
    }

    if agg.conflict_resolution == ConflictStrategy::Manual && agg.tools.is_empty() {
        issues.push_new(
            &path.key("tools"),
            "tool overrides are required for the manual strategy",
        );
    }

    // Under deny, a priority winner without a tools entry would win a conflict and
    // then be hidden, leaving the tool advertised by nobody.
    if agg.default_tool_visibility == ToolVisibility::Deny
        && agg.conflict_resolution == ConflictStrategy::Priority
    {
        for (i, name) in crc.priority_order.iter().enumerate() {
            if agg.tools_for(name).is_none() {
                issues.push_new(
                    &order_path.index(i),
                    format!(
                        "{name:?} has no tools entry: under defaultToolVisibility deny it could \
                         win a name conflict and then be hidden; add a tools entry for it or \
                         remove it from priorityOrder"
                    ),
                );
            }
        }
    }

    check_tools(config, names.as_ref(), &path.key("tools"), issues);
}

fn check_tools(config: &Config, names: Option<&BTreeSet<&str>>, path: &KeyPath, issues: &Issues) {
    let mut seen = BTreeSet::new();
    for (i, w) in config.aggregation.tools.iter().enumerate() {
        let wpath = path.index(i);
        if w.workload.is_empty() {
            issues.push_new(&wpath.key("workload"), "is required");
        } else if !seen.insert(w.workload.as_str()) {
            issues.push_new(
                &wpath.key("workload"),
                format!("duplicate workload configuration {:?}", w.workload),
            );
        }
        check_backend_ref(names, &w.workload, &wpath.key("workload"), issues);
        if let Some(r) = &w.tool_config_ref
            && r.name.is_empty()
        {
            issues.push_new(&wpath.key("toolConfigRef").key("name"), "is required");
        }
        let mut renamed: BTreeMap<&str, &str> = BTreeMap::new();
        for (tool, o) in &w.overrides {
            let opath = wpath.key("overrides").key(tool);
            if o.name.is_none() && o.description.is_none() && o.annotations.is_none() {
                issues.push_new(
                    &opath,
                    "at least one of name, description or annotations must be specified",
                );
            }
            if let Some(new) = &o.name
                && let Some(other) = renamed.insert(new, tool)
            {
                issues.push_new(
                    &opath.key("name"),
                    format!("{other:?} is also renamed to {new:?}"),
                );
            }
        }
    }
}
