//! Rendering `dnsfix explain`: the list of finding ids, or one finding's full text.

use std::fmt::Write as _;

use crate::diagnose::catalog::{RULES, rule};

pub fn render(id: Option<&str>) -> String {
    let mut out = String::new();
    match id.and_then(rule) {
        None => {
            for r in RULES {
                let _ = writeln!(out, "{:<32} {:<9} {}", r.id, r.severity, r.title);
            }
            let _ = writeln!(
                out,
                "\n`dnsfix explain ID` for the symptom, the mechanism, the fix and how to verify it."
            );
        }
        Some(r) => {
            let _ = writeln!(out, "{} ({})\n{}\n", r.id, r.severity, r.title);
            for (heading, text) in [
                ("WHAT YOU SEE", r.symptom),
                ("WHY IT HAPPENS", r.mechanism),
                ("THE FIX", r.fix),
                ("WHAT MUST RESTART", r.restart),
                ("HOW TO VERIFY", r.verify),
            ] {
                let _ = writeln!(out, "{heading}\n{}\n", indent(text));
            }
            if let Some(p) = r.playbook {
                let _ = writeln!(out, "FIXED BY PLAYBOOK\n  {p}\n");
            }
        }
    }
    out
}

fn indent(text: &str) -> String {
    text.trim_end()
        .lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("  {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
