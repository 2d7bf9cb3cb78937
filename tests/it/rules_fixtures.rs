//! Rule fixtures as data: `tests/fixtures/rules/<ID>/<case>/` holds a node tree under
//! `root/` (the same format as tests/fixtures/facts, see raw::from_tree), optional
//! `vars.json` (the host's inventory variables) and `expected.json`:
//!
//! ```json
//! { "findings": [ { "id": "DNS-KUBELET-LOOPBACK", "severity": "critical", "status": "failed",
//!                   "evidence_contains": ["kubelet-config.yaml:31", "127.0.0.53"] } ],
//!   "not_applicable": ["DNS-K3S-FALLBACK"] }
//! ```
//!
//! A finding may also give `"wanted": {"clusterDNS": ["10.96.0.10"]}`: then the values its
//! fix sets (`check --format json`'s `wanted`) must be exactly these; and
//! `"remediation_contains": [...]`: texts its fix must say.
//!
//! The findings listed must be exactly the findings the per-host rules produce (fleet
//! drift needs a fleet and is tested elsewhere): a healthy case lists none, and a false
//! positive fails the test. `not_applicable`, when given, must be exactly the rules that
//! said so.

use std::path::Path;

use dnsfix::diagnose::{Finding, RuleOutcome, diagnose_host};
use dnsfix::facts::{NodeFacts, raw};
use dnsfix::inventory::Host;
use serde_json::Value;

fn cases(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for rule in std::fs::read_dir(dir).expect("rules fixtures dir") {
        let rule = rule.expect("entry").path();
        if !rule.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&rule).expect("rule dir") {
            let case = case.expect("entry").path();
            if !case.is_dir() {
                continue;
            }
            // A case is a node tree and what it must produce: a folder without both is a
            // fixture that silently tests nothing.
            assert!(
                case.join("root").is_dir() && case.join("expected.json").is_file(),
                "{}: a case needs both root/ and expected.json",
                case.display()
            );
            out.push(case);
        }
    }
    out.sort();
    out
}

#[test]
fn rule_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rules");
    let cases = cases(&dir);
    assert_eq!(
        folders(&dir),
        expected_folders(),
        "the folders under {} are one per per-host rule in the catalog, and {GROUPS:?}",
        dir.display()
    );
    let failures: Vec<String> = cases
        .iter()
        .flat_map(|case| check_case(&dir, case))
        .collect();
    assert!(
        failures.is_empty(),
        "{} rule fixture failures:\n{}",
        failures.len(),
        failures.join("\n")
    );

    // Every per-host rule has a positive case (its folder has a case that expects it to
    // fail) and a negative one (a case there that expects it not to).
    for (id, _) in dnsfix::diagnose::rules::RULES {
        let rule_dir = dir.join(id);
        let (mut positive, mut negative) = (false, false);
        for case in cases.iter().filter(|c| c.starts_with(&rule_dir)) {
            if expected_ids(case).iter().any(|found| found == id) {
                positive = true;
            } else {
                negative = true;
            }
        }
        assert!(
            positive && negative,
            "{id} needs a positive and a negative case under {}",
            rule_dir.display()
        );
    }
}

/// Diagnoses one case and says how the result differs from its expected.json (nothing
/// when it matches).
fn check_case(dir: &Path, case: &Path) -> Vec<String> {
    let name = case.strip_prefix(dir).unwrap_or(case).display().to_string();
    let raw = raw::from_tree(&case.join("root")).unwrap_or_else(|e| panic!("{name}: {e}"));
    let facts = NodeFacts::from_raw("node1", &raw);
    let host = case_host(case, &name);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(case.join("expected.json"))
            .unwrap_or_else(|e| panic!("{name}: {e}")),
    )
    .unwrap_or_else(|e| panic!("{name}: expected.json: {e}"));
    let diagnosis = diagnose_host(&host, &facts);
    let found: Vec<_> = diagnosis.findings().collect();

    let want = expected["findings"].as_array().cloned().unwrap_or_default();
    if let Some(failure) = other_findings(&name, &found, &want) {
        return vec![failure];
    }
    let mut failures = missing_evidence(&name, &found, &want);
    if let Some(na) = expected["not_applicable"].as_array() {
        let mut want_na: Vec<&str> = na.iter().filter_map(Value::as_str).collect();
        let mut got_na: Vec<&str> = diagnosis
            .outcomes
            .iter()
            .filter(|(_, o)| matches!(o, RuleOutcome::NotApplicable(_)))
            .map(|(id, _)| *id)
            .collect();
        want_na.sort();
        got_na.sort();
        if want_na != got_na {
            failures.push(format!(
                "{name}: not_applicable expected {want_na:?}, got {got_na:?}"
            ));
        }
    }
    failures
}

/// node1, with the case's vars.json as its inventory variables.
fn case_host(case: &Path, name: &str) -> Host {
    let mut host = Host::new("node1");
    if let Ok(text) = std::fs::read_to_string(case.join("vars.json")) {
        let vars: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: vars.json: {e}"));
        host.vars = vars
            .as_object()
            .cloned()
            .unwrap_or_else(|| panic!("{name}: vars.json is not an object"));
    }
    host
}

/// The findings (id, severity, status) differ from those the case expects.
fn other_findings(name: &str, found: &[&Finding], want: &[Value]) -> Option<String> {
    let mut got_keys: Vec<String> = found
        .iter()
        .map(|f| format!("{} {} {:?}", f.id, f.severity, f.status).to_lowercase())
        .collect();
    let mut want_keys: Vec<String> = want
        .iter()
        .map(|w| {
            format!(
                "{} {} {}",
                w["id"].as_str().unwrap_or("?"),
                w["severity"].as_str().unwrap_or("?"),
                w["status"].as_str().unwrap_or("failed")
            )
            .to_lowercase()
        })
        .collect();
    got_keys.sort();
    want_keys.sort();
    if got_keys == want_keys {
        return None;
    }
    let detail: Vec<String> = found
        .iter()
        .map(|f| {
            format!(
                "{} {}: {} | {}",
                f.id,
                f.severity,
                f.summary,
                f.evidence.join(" | ")
            )
        })
        .collect();
    Some(format!(
        "{name}: expected {want_keys:?}, got {got_keys:?}\n    {}",
        detail.join("\n    ")
    ))
}

/// Each text of `needles` (a JSON list) that `text`, the `what` of finding `id`, lacks.
fn lacking(name: &str, id: &str, what: &str, text: &str, needles: &Value) -> Vec<String> {
    needles
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|needle| !text.contains(needle))
        .map(|needle| format!("{name}: {id} {what} lacks {needle:?}:\n{text}"))
        .collect()
}

/// Each `evidence_contains` text the evidence of its finding lacks, each
/// `remediation_contains` text its fix lacks.
fn missing_evidence(name: &str, found: &[&Finding], want: &[Value]) -> Vec<String> {
    let mut failures = Vec::new();
    for w in want {
        let id = w["id"].as_str().unwrap_or("?");
        let of_id = || found.iter().filter(|f| f.id.eq_ignore_ascii_case(id));
        let evidence: Vec<&str> = of_id()
            .flat_map(|f| f.evidence.iter().map(String::as_str))
            .collect();
        failures.extend(lacking(
            name,
            id,
            "evidence",
            &evidence.join("\n"),
            &w["evidence_contains"],
        ));
        let fixes: Vec<&str> = of_id().map(|f| f.remediation.as_str()).collect();
        failures.extend(lacking(
            name,
            id,
            "fix",
            &fixes.join("\n"),
            &w["remediation_contains"],
        ));
        if let Some(want) = w.get("wanted") {
            let got: Vec<Value> = of_id().map(|f| serde_json::json!(f.wanted)).collect();
            if got.iter().any(|g| g != want) {
                failures.push(format!("{name}: {id} wanted {want}, got {got:?}"));
            }
        }
    }
    failures
}

/// The folders of cases that are not about one rule: healthy nodes, unreadable inputs and
/// cases taken from upstream incident reports.
const GROUPS: &[&str] = &["_healthy", "_unknown", "_upstream"];

/// The folders under tests/fixtures/rules, sorted.
fn folders(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("rules fixtures dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// One folder per rule in the catalog that a single host's facts decide (fleet drift
/// needs a fleet and is tested elsewhere), plus [`GROUPS`], sorted. The catalog and the
/// rules run per host must name the same rules.
fn expected_folders() -> Vec<String> {
    let per_host: Vec<&str> = dnsfix::diagnose::rules::RULES
        .iter()
        .map(|(id, _)| *id)
        .collect();
    let catalog: Vec<&str> = dnsfix::diagnose::catalog::RULES
        .iter()
        .map(|r| r.id)
        // Fleet drift needs a fleet, the cluster rules a cluster (diagnose::cluster's
        // tests and the lab's end-to-end runs cover them).
        .filter(|id| {
            ![
                dnsfix::diagnose::drift::DRIFT_ID,
                dnsfix::diagnose::cluster::POD_LOOP,
                dnsfix::diagnose::cluster::NODELOCAL_DOWN,
                dnsfix::diagnose::cluster::KUBEADM_DRIFT,
                dnsfix::diagnose::cluster::COREFILE_UPSTREAM,
                dnsfix::diagnose::cluster::COREFILE_LOOP,
            ]
            .contains(id)
        })
        .collect();
    let (mut a, mut b) = (per_host.clone(), catalog);
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "the catalog and the per-host rules differ");
    let mut names: Vec<String> = per_host
        .iter()
        .chain(GROUPS)
        .map(|s| (*s).to_owned())
        .collect();
    names.sort();
    names
}

/// The finding ids a case's expected.json lists.
fn expected_ids(case: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(case.join("expected.json")).unwrap_or_default();
    let expected: Value = serde_json::from_str(&text).unwrap_or_default();
    expected["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["id"].as_str().map(str::to_owned))
        .collect()
}
