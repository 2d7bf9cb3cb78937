//! `dnsfix explain [ID]`: what a finding means, why it happens, how it is fixed. Reads no
//! inventory and contacts no host.

use std::io::Write;

use super::exit;
use crate::error::Error;
use crate::report;

pub fn run(id: Option<&str>) -> Result<u8, Error> {
    let text = report::explain::render(id);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(exit::OK)
}
