//! `dnsfix man [--dir DIR]`: the man pages, for packagers (`dnsfix man > dnsfix.1`). With
//! `--dir`, every page (`dnsfix.1`, `dnsfix-plan.1`, ...) is written into DIR and each
//! path written is named on stderr. Reads no inventory and contacts no host.

use std::io::Write;
use std::path::Path;

use super::exit;
use crate::error::Error;

pub fn run(dir: Option<&Path>) -> Result<u8, Error> {
    let pages = crate::cli::man_pages()?;
    match dir {
        None => {
            if let Some((_, roff)) = pages.first() {
                std::io::stdout().lock().write_all(roff)?;
            }
        }
        Some(dir) => {
            for (name, roff) in &pages {
                let path = dir.join(name);
                std::fs::write(&path, roff).map_err(|source| Error::ManPage {
                    path: path.clone(),
                    source,
                })?;
                eprintln!("wrote {}", path.display());
            }
        }
    }
    Ok(exit::OK)
}
