//! The dnsfix binary: parse arguments, call the library, map the error to an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = dnsfix::cli::Cli::parse();
    let result = dnsfix::Config::from_cli(cli).and_then(dnsfix::run);
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
