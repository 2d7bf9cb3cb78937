//! The dnsfix binary: parse arguments, call the library, map the error to an exit code.

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    // Bad arguments are bad input: exit 1 (DESIGN.md), not clap's 2, which dnsfix uses for
    // "findings". Help and version go to stdout with 0.
    let cli = match dnsfix::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(dnsfix::exit::BAD_INPUT),
            };
        }
    };
    let result = dnsfix::Config::from_cli(cli).and_then(dnsfix::run);
    // Whatever `run` returned, nothing it started outlives it (an ssh of a session left
    // unclosed on an error, a ProxyCommand an ssh killed on drop left behind).
    dnsfix::transport::children::end_all();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            let mut message = format!("dnsfix: error: {error}");
            let mut source = std::error::Error::source(&error);
            while let Some(s) = source {
                let text = s.to_string();
                if !message.contains(&text) {
                    message.push_str(&format!("\n  caused by: {text}"));
                }
                source = s.source();
            }
            eprintln!("{}", dnsfix::report::terminal_text(&message));
            ExitCode::from(dnsfix::exit::BAD_INPUT)
        }
    }
}
