//! `dnsfix completions SHELL`: print a completion script for SHELL on stdout. Reads no
//! inventory and contacts no host; the script is generated from the command-line
//! definitions in `cli`, so it always offers exactly what this binary accepts.

use std::io::Write;

use super::exit;
use crate::cli::Shell;
use crate::error::Error;

pub fn run(shell: Shell) -> Result<u8, Error> {
    let script = crate::cli::completion_script(shell);
    std::io::stdout().lock().write_all(&script)?;
    Ok(exit::OK)
}
