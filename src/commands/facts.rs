//! `dnsfix facts`: gather and print each selected host's facts (read-only).

use super::{Context, exit};
use crate::config::{Config, Format};
use crate::error::Error;
use crate::report;

/// 0, or 3 when a host could not be gathered.
pub fn run(config: &Config) -> Result<u8, Error> {
    let ctx = Context::new(config)?;
    let outcomes = ctx.gather(Vec::new());
    let unreachable = outcomes.iter().any(|o| o.result.is_err());
    let rendered = match config.format {
        Format::Json => report::facts::json(&outcomes, ctx.inventory.path()),
        Format::Text | Format::Junit | Format::Markdown => report::facts::text(&outcomes),
    };
    super::print(&rendered)?;
    Ok(super::unless_unreachable(unreachable, exit::OK))
}
