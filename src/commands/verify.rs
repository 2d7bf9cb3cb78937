//! `dnsfix verify`: gather each node's facts, then ask its DNS paths real questions from
//! the node's own vantage point (read-only).

use std::sync::Arc;

use super::{Context, exit};
use crate::config::{Config, Format, VerifyConfig};
use crate::error::Error;
use crate::report;

/// 2 when some path fails, 3 (first) when a host could not be verified, else 0.
pub fn run(config: &Config, args: &VerifyConfig) -> Result<u8, Error> {
    let ctx = Context::new(config)?;
    // The cluster's view of its DNS pods, from the first control-plane host that can give
    // it (whatever --limit selected).
    let access = ctx.cluster_access();
    let cluster = Arc::new(
        ctx.runtime
            .block_on(crate::cluster::read(&ctx.transport, &access)),
    );
    let results = ctx.runtime.block_on(crate::verify::verify(
        &ctx.hosts(),
        Arc::clone(&ctx.transport),
        config.forks,
        Arc::clone(&ctx.sink),
        args.probe_name.clone(),
        args.timeout,
        Arc::clone(&cluster),
    ));
    ctx.sink.finish();
    let rendered = match config.format {
        Format::Json => report::verify::json(&results, &cluster, ctx.inventory.path()),
        Format::Junit => report::verify::junit(&results),
        Format::Text | Format::Markdown => report::verify::text(&results, &cluster),
    };
    super::print(&rendered)?;
    let unreachable = results.iter().any(|r| r.result.is_err());
    let failing = results
        .iter()
        .any(|r| r.result.as_ref().is_ok_and(|c| c.failed()));
    let code = if failing { exit::FINDINGS } else { exit::OK };
    Ok(super::unless_unreachable(unreachable, code))
}
