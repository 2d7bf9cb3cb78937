//! `dnsfix show PLAN`: a saved plan rendered from the file alone (no inventory, no
//! connection), as the text `plan` printed, as Markdown for a change review, or as JSON;
//! `--limit` narrows it to some hosts. Provenance (the file's sha256, when, by which
//! version, from which inventory and limit) goes to stderr, so the text on stdout is byte
//! for byte what `plan` printed.

use std::io::Read as _;
use std::path::Path;

use super::exit;
use crate::config::{Config, Format, ShowConfig};
use crate::error::Error;
use crate::plan::model::PLAN_FORMAT_VERSION;
use crate::plan::{self, Plan};
use crate::util::sha256_hex;

/// A saved plan larger than this is refused before it is read whole.
const MAX_PLAN: u64 = 512 << 20;

/// Always 0 for a plan that reads; 1 (an error) for a file that is not one.
pub fn run(config: &Config, args: &ShowConfig) -> Result<u8, Error> {
    let (text, sha256) = read_file(&args.plan)?;
    let mut plan = parse_plan(&args.plan, &text)?;
    eprintln!("{}", provenance(&args.plan, &plan, &sha256));
    if let Some(limit) = &config.limit {
        plan = plan::subset(&plan, limit)?;
    }
    let rendered = match config.format {
        Format::Json => plan::render::json(&plan),
        Format::Markdown => plan::markdown::markdown(&plan, &sha256),
        Format::Text | Format::Junit => plan::render::text(&plan, args.colour),
    };
    super::print(&rendered)?;
    Ok(exit::OK)
}

/// "plan.json: sha256 …, made 2026-11-22T17:03:41Z by dnsfix 0.1.0 from inventory
/// inventory/prod/hosts.yaml, limit kube_node".
fn provenance(path: &Path, plan: &Plan, sha256: &str) -> String {
    let from = match &plan.inventory {
        Some(inventory) => format!("inventory {}", inventory.path),
        None => "no inventory (this machine)".to_owned(),
    };
    let limit = plan
        .limit
        .as_deref()
        .map_or_else(|| "all hosts".to_owned(), |l| format!("limit {l}"));
    crate::report::escape(&format!(
        "{}: sha256 {sha256}, made {} by dnsfix {} from {from}, {limit}",
        path.display(),
        plan.created,
        plan.dnsfix_version
    ))
    .into_owned()
}

/// The text of a saved plan and its sha256 (what a reviewer compares).
pub(super) fn read_file(path: &Path) -> Result<(String, String), Error> {
    let bad = |reason: String| Error::SavedPlan {
        path: path.to_path_buf(),
        reason,
    };
    let unreadable = |e: std::io::Error| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_owned(),
            std::io::ErrorKind::IsADirectory => "a directory, not a plan file".to_owned(),
            std::io::ErrorKind::PermissionDenied => "not readable by this user".to_owned(),
            _ => format!("cannot read it: {e}"),
        };
        bad(format!(
            "{why}: give a plan saved with `dnsfix plan -o FILE`"
        ))
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_PLAN + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_PLAN {
        return Err(bad(format!(
            "larger than {} MiB: not a plan dnsfix wrote",
            MAX_PLAN >> 20
        )));
    }
    let sha256 = sha256_hex(&bytes);
    let text = String::from_utf8(bytes).map_err(|e| bad(format!("not UTF-8 text: {e}")))?;
    Ok((text, sha256))
}

/// The plan in `text` (read from `path`), if it is one this dnsfix reads: a `dnsfix-plan`
/// of this format version, every field as it should be.
pub(super) fn parse_plan(path: &Path, text: &str) -> Result<Plan, Error> {
    let bad = |reason: String| Error::SavedPlan {
        path: path.to_path_buf(),
        reason,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not a saved plan: {e}")))?;
    if value.get("kind").and_then(|k| k.as_str()) != Some("dnsfix-plan") {
        return Err(bad(
            "not a saved plan (write one with `dnsfix plan -o FILE`)".into(),
        ));
    }
    let version = value.get("format_version").and_then(|v| v.as_u64());
    if version != Some(u64::from(PLAN_FORMAT_VERSION)) {
        let newer = version.is_some_and(|v| v > u64::from(PLAN_FORMAT_VERSION));
        return Err(bad(format!(
            "plan format version {}, this dnsfix reads version {PLAN_FORMAT_VERSION}{}",
            version.map_or("unknown".into(), |v| v.to_string()),
            if newer {
                ": it was made by a newer dnsfix; use that one"
            } else {
                ""
            }
        )));
    }
    let plan: Plan =
        serde_json::from_value(value).map_err(|e| bad(format!("not a valid saved plan: {e}")))?;
    plan::saved::checked(plan)
        .map_err(|e| bad(format!("{e}: the plan file was edited; refused whole")))
}
