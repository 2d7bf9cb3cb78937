//! `dnsfix plan [-o FILE]`: gather, run the playbooks against every host's facts and
//! findings, print (and save) the exact per-host changes `apply` would make (read-only).

use super::{Context, exit};
use crate::config::{Config, Format, PlanConfig};
use crate::error::Error;
use crate::plan::{self, Plan};
use crate::playbook::Playbooks;
use crate::util::sha256_hex;

/// 2 when there is anything to change, 3 (first) when a host could not be planned or
/// reached, else 0.
pub fn run(config: &Config, args: &PlanConfig) -> Result<u8, Error> {
    // Playbooks are checked before any host is contacted: a typo is exit 1, not a fleet run.
    let playbooks = Playbooks::load(args.playbooks.as_deref())?;
    let ctx = Context::new(config)?;
    let (plan, unreachable) = make(&ctx, &playbooks);
    if let Some(path) = &args.output {
        let text = plan::render::json(&plan);
        save(path, &text)?;
        // The reviewer compares this with what `apply` prints for the file it applies.
        eprintln!(
            "plan saved to {} (sha256 {})",
            path.display(),
            sha256_hex(text.as_bytes())
        );
    }
    let rendered = match config.format {
        Format::Json => plan::render::json(&plan),
        // The digest of the file `-o` saves (or would save): what `apply` prints.
        Format::Markdown => {
            plan::markdown::markdown(&plan, &sha256_hex(plan::render::json(&plan).as_bytes()))
        }
        Format::Text | Format::Junit => plan::render::text(&plan, args.colour),
    };
    super::print(&rendered)?;
    Ok(super::unless_unreachable(unreachable, exit_code(&plan)))
}

/// Gathers every selected host and plans: `plan` and a fresh `apply` plan the same way.
/// Returns the plan and whether a host could not be gathered.
pub(super) fn make(ctx: &Context, playbooks: &Playbooks) -> (Plan, bool) {
    // What the playbooks may write is read too, so the plan knows what it replaces.
    // The cluster is read meanwhile: the DNS pods a fix recreates are in the plan.
    let (outcomes, cluster) = ctx.gather_with_cluster(playbooks.paths_to_gather());
    let unreachable = outcomes.iter().any(|o| o.result.is_err());
    let plan = plan::build(
        &ctx.inventory,
        ctx.config.limit.as_deref(),
        &ctx.hosts(),
        outcomes,
        playbooks,
        &cluster,
    );
    (plan, unreachable)
}

/// Exit code for a plan (DESIGN.md): 3 if a host could not be planned, 2 if anything is
/// to be changed or blocked, else 0.
pub(super) fn exit_code(plan: &Plan) -> u8 {
    let s = &plan.summary;
    if s.hosts_failed > 0 {
        exit::UNREACHABLE
    } else if s.hosts_changing > 0
        || s.hosts_blocked > 0
        || s.inventory_files > 0
        || s.configmaps > 0
    {
        exit::FINDINGS
    } else {
        exit::OK
    }
}

/// Writes the saved plan to `path` atomically (temp file, fsync, rename), so an
/// interrupted run never leaves half a plan for someone to apply.
fn save(path: &std::path::Path, text: &str) -> Result<(), Error> {
    crate::util::write_atomic(path, text.as_bytes()).map_err(|source| Error::SavePlan {
        path: path.to_path_buf(),
        source,
    })
}
