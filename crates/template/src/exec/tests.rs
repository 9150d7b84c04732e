use super::*;
use serde_json::json;

fn run(src: &str, data: &Value) -> Result<String, String> {
    let t = Template::parse(src).map_err(|e| e.to_string())?;
    t.render(data).map_err(|e| e.message)
}

#[test]
fn output_is_capped() {
    let data = json!({"s": "x".repeat(1024 * 1024)});
    assert_eq!(
        run("{{range 10}}{{$.s}}{{end}}", &data).map(|s| s.len()),
        Ok(10 * 1024 * 1024)
    );
    assert_eq!(
        run("{{range 11}}{{$.s}}{{end}}", &data).err().as_deref(),
        Some("template output exceeds 10 MiB")
    );
    // Text nodes count too.
    let big_text = "y".repeat(MAX_OUTPUT_BYTES + 1);
    assert_eq!(
        run(&big_text, &json!(null)).err().as_deref(),
        Some("template output exceeds 10 MiB")
    );
}

#[test]
fn values_cannot_double_without_bound() {
    let src = "{{$s := \"x\"}}{{range 100}}{{$s = printf \"%s%s\" $s $s}}{{end}}{{len $s}}";
    let e = run(src, &json!(null)).err().unwrap_or_default();
    assert!(
        e.ends_with("error calling printf: result exceeds 10 MiB"),
        "{e}"
    );
    let src = "{{$s := \"x\"}}{{range 100}}{{$s = print $s $s}}{{end}}";
    assert!(run(src, &json!(null)).is_err());
}

#[test]
fn range_iterations_are_capped() {
    let e = run("{{range 1000000000000}}{{end}}", &json!(null))
        .err()
        .unwrap_or_default();
    assert_eq!(
        e,
        "line 1, column 9: executing <1000000000000>: exceeded 10000000 range iterations"
    );
}

#[test]
fn template_recursion_is_capped() {
    let src = r#"{{define "t"}}{{if .}}{{template "t" .}}{{end}}{{end}}{{template "t" 1}}"#;
    let e = run(src, &json!(null)).err().unwrap_or_default();
    assert!(e.ends_with("exceeded maximum template depth (100)"), "{e}");
    // Recursion that ends in time is fine.
    let src = r#"{{define "t"}}{{if .n}}[{{template "t" .n}}]{{end}}{{end}}{{template "t" .}}"#;
    let mut data = json!(null);
    for _ in 0..30 {
        data = json!({ "n": data });
    }
    assert_eq!(run(src, &data).map(|s| s.len()), Ok(58));
}

#[test]
fn deeply_nested_data_prints_without_recursing_forever() {
    let mut data = json!(1);
    for _ in 0..2000 {
        data = Value::Array(vec![data]);
    }
    let printed = run("{{.}}", &data).unwrap_or_default();
    assert!(printed.starts_with("[[[[") && printed.contains("..."));
    let encoded = run("{{json .}}", &data).unwrap_or_default();
    assert!(encoded.starts_with("[[[[") && encoded.contains("null"));
}

#[test]
fn pipeline_results_feed_the_next_command_last() {
    assert_eq!(
        run("{{1 | printf \"%d-%d\" 2}}", &json!(null)).as_deref(),
        Ok("2-1")
    );
    assert_eq!(
        run("{{.a | len | printf \"%03d\"}}", &json!({"a": [1, 2]})).as_deref(),
        Ok("002")
    );
    assert_eq!(
        run("{{$x := 1}}{{.a | $x}}", &json!({"a": 1}))
            .err()
            .as_deref()
            .map(|e| e.contains("can't give argument to non-function $x")),
        Some(true)
    );
}

#[test]
fn render_is_repeatable_and_does_not_leak_variables() {
    let t = Template::parse("{{range $i, $e := .}}{{$i}}{{end}}{{$x := 5}}{{$x}}")
        .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..3 {
        assert_eq!(t.render(&json!(["a", "b"])).as_deref(), Ok("015"));
    }
}

/// Found by fuzzing (fuzz/fuzz_targets/template.rs): a variable grown a little on each pass of a
/// loop is copied whole by every `printf`, so the work was quadratic (a 250-byte template ran for
/// minutes). The text functions build in one render is now bounded by `MAX_BUILT_BYTES`.
#[test]
fn regression_growing_a_variable_in_a_loop_is_bounded() {
    let grow =
        "{{$s := \"\"}}{{range 6000}}{{$s = printf \"%s%s\" $s \"0123456789\"}}{{end}}{{len $s}}";
    let refused = run(grow, &json!(null)).expect_err("quadratic work is refused");
    assert!(refused.contains("functions built more than"), "{refused}");
    // A loop that builds a little text each pass is untouched.
    let small = "{{range 6000}}{{printf \"%s\" \"0123456789\"}}{{end}}";
    assert_eq!(run(small, &json!(null)).map(|s| s.len()), Ok(60_000));
}

/// Found by fuzzing: printing the whole data in nested loops is linear work, but there was a lot
/// of it under the old 100 MiB bound (~12 s a render in the fuzzer). It is refused at 20 MiB.
#[test]
fn regression_printing_the_data_in_nested_loops_is_bounded() {
    let data = json!({"user": {"name": "Ada", "groups": ["eng", "ops"], "bio": "x".repeat(250)}});
    let t = "{{$s := \"x\"}}{{range 582}}{{range 678}}{{$s = print \"%!sl\" $ 00}}{{end}}{{end}}";
    let refused = run(t, &data).expect_err("bounded");
    assert!(
        refused.contains("functions built more than 20971520"),
        "{refused}"
    );
}
