//! `dnsfix check`: gather, diagnose (rules and fleet drift), print the findings
//! (read-only).

use std::collections::HashMap;

use super::{Context, exit};
use crate::config::{Config, Format};
use crate::diagnose::{self, HostDiagnosis, Severity};
use crate::error::Error;
use crate::facts::NodeFacts;
use crate::inventory::Host;
use crate::report::{self, check::Checked};

/// 2 when a finding is at least `fail_on` severe, 3 (first) when a host could not be
/// checked, else 0.
pub fn run(config: &Config, fail_on: Severity) -> Result<u8, Error> {
    let ctx = Context::new(config)?;
    // The cluster (its DNS pods and ConfigMaps) is read meanwhile, for the cluster rules.
    let (outcomes, cluster) = ctx.gather_with_cluster(Vec::new());
    let unreachable = outcomes.iter().any(|o| o.result.is_err());
    let gathered: Vec<(&Host, &NodeFacts)> = ctx
        .hosts()
        .into_iter()
        .zip(&outcomes)
        .filter_map(|(h, o)| o.result.as_ref().ok().map(|f| (h, f)))
        .collect();
    let diagnoses = diagnose::diagnose_in(&gathered, &cluster);
    let by_host: HashMap<&str, &HostDiagnosis> =
        diagnoses.iter().map(|d| (d.host.as_str(), d)).collect();
    let checked: Vec<Checked> = outcomes
        .iter()
        .filter_map(|o| match &o.result {
            Ok(_) => by_host.get(o.host.as_str()).map(|d| Checked::Diagnosed(d)),
            Err(error) => Some(Checked::Failed {
                host: &o.host,
                error,
            }),
        })
        .collect();
    let rendered = match config.format {
        Format::Text | Format::Markdown => {
            report::check::text(&checked) + &report::verify::cluster_line(&cluster)
        }
        Format::Json => report::check::json(&checked, ctx.inventory.path()),
        Format::Junit => report::check::junit(&checked),
    };
    super::print(&rendered)?;
    let failing = diagnoses
        .iter()
        .flat_map(|d| d.findings())
        .any(|f| f.severity >= fail_on);
    let code = if failing { exit::FINDINGS } else { exit::OK };
    Ok(super::unless_unreachable(unreachable, code))
}
