//! Where the reference implementations the tests compare dnsfix with are found
//! (ansible-core, kubectl: from PyPI, in venvs `.ci/run` makes under `target/`).

use std::path::{Path, PathBuf};

/// `tool` in the directory `env_var` names, else in `target/VENV/bin`, else on `PATH`, the
/// first that `accept` takes. Panics, with `install` (the command that installs it), when
/// there is none: a comparison with the reference never passes by skipping.
pub fn find(
    tool: &str,
    env_var: &str,
    venv: &str,
    install: &str,
    accept: impl Fn(&Path) -> bool,
) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = std::env::var_os(env_var)
        .map(PathBuf::from)
        .into_iter()
        .chain([root.join("target").join(venv).join("bin")])
        .chain(
            std::env::var_os("PATH")
                .into_iter()
                .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>()),
        );
    for dir in candidates {
        let path = dir.join(tool);
        if path.is_file() && accept(&path) {
            return path;
        }
    }
    panic!(
        "{tool} not found: these tests compare dnsfix with it. Install it with `{install}` \
         (bash .ci/run does), or point {env_var} at a directory holding {tool}"
    );
}
