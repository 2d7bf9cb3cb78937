//! `dnsfix inventory`: the inventory as dnsfix reads it (groups, connections, DNS
//! variables and the files they came from). Contacts no host.

use super::{context, exit};
use crate::config::{Config, Format};
use crate::error::Error;
use crate::report;

pub fn run(config: &Config) -> Result<u8, Error> {
    let inventory = context::load_inventory(config)?;
    let hosts = inventory.select(config.limit.as_deref())?;
    let rendered = match config.format {
        Format::Json => report::inventory::json(&inventory, &hosts),
        Format::Text | Format::Junit | Format::Markdown => {
            report::inventory::text(&inventory, &hosts)
        }
    };
    super::print(&rendered)?;
    Ok(exit::OK)
}
