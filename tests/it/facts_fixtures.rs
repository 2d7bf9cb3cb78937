//! Fixture tests as data: each `tests/fixtures/facts/<case>/` holds a node's files under
//! `root/` (symlinks included; `root/.dnsfix/cmd/units` stands for `systemctl is-active`
//! output, `root/.dnsfix/pid/kubelet` for the running kubelet) and `expected.json`, a
//! subset of the `NodeFacts` JSON that must match exactly. A new incident is a new folder.

use std::path::Path;

use dnsfix::facts::NodeFacts;
use dnsfix::facts::raw;
use serde_json::Value;

/// Every key in `expected` must be in `actual` with an equal value (recursively for
/// objects; arrays and scalars compare whole). `null` in expected means "absent or null".
fn assert_subset(expected: &Value, actual: &Value, at: &str, failures: &mut Vec<String>) {
    match expected {
        Value::Object(map) => {
            for (k, v) in map {
                let next = format!("{at}.{k}");
                let a = actual.get(k).unwrap_or(&Value::Null);
                assert_subset(v, a, &next, failures);
            }
        }
        _ => {
            if expected != actual {
                failures.push(format!("{at}: expected {expected}, got {actual}"));
            }
        }
    }
}

#[test]
fn facts_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/facts");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures dir")
        .map(|e| e.expect("entry").path())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 6,
        "fixture cases are missing from {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let name = case
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_owned();
        let raw = raw::from_tree(&case.join("root"))
            .unwrap_or_else(|e| panic!("{name}: cannot read tree: {e}"));
        let facts = NodeFacts::from_raw(&name, &raw);
        let actual = serde_json::to_value(&facts).expect("serializes");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(case.join("expected.json"))
                .unwrap_or_else(|e| panic!("{name}: expected.json: {e}")),
        )
        .unwrap_or_else(|e| panic!("{name}: expected.json does not parse: {e}"));
        let mut case_failures = Vec::new();
        assert_subset(&expected, &actual, "", &mut case_failures);
        failures.extend(case_failures.into_iter().map(|f| format!("{name}: {f}")));
    }
    assert!(
        failures.is_empty(),
        "fixture mismatches:\n{}",
        failures.join("\n")
    );
}
