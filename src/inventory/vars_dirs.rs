//! `group_vars/` and `host_vars/` beside the inventory, found the way Ansible's
//! `host_group_vars` plugin finds them (`DataLoader.find_vars_files`):
//!
//! - for an entity `name`, the first of `name`, `name.yml`, `name.yaml`, `name.json` that
//!   exists is used and the others are ignored (dnsfix warns about the ignored ones);
//! - if that is a directory, every file in it is read, recursively, in sorted order, skipping
//!   hidden names, names ending in `~`, and files whose extension is not empty, `.yml`,
//!   `.yaml` or `.json` (so `.swp`, `.retry`, `.md`, `.orig` are never read); subdirectories
//!   with an extension are skipped too;
//! - files are merged in that order, later files replacing earlier top-level keys.
//!
//! Only groups and hosts that exist in the inventory are looked up: a stray
//! `group_vars/foo.yml` for a group nobody defines is ignored, as in Ansible.

use std::fs;
use std::path::{Path, PathBuf};

use super::Vars;
use super::error::InventoryError;
use super::origin::top_level_lines;
use super::warning::InventoryWarning;
use super::yaml_vars::{VAULT_WARNING, parse_vars_file, vault_lines};

/// One variables file, read: its variables and the line each top-level key is on.
#[derive(Debug, Clone)]
pub(crate) struct VarsFile {
    pub(crate) path: PathBuf,
    pub(crate) vars: Vars,
    pub(crate) lines: std::collections::BTreeMap<String, usize>,
    /// The variables tagged `!unsafe`, whose values Ansible never renders.
    pub(crate) literal: std::collections::BTreeSet<String>,
}

const EXTENSIONS: [&str; 3] = ["yml", "yaml", "json"];

/// What Ansible looks for of `name` under `root` (a `group_vars` or `host_vars`
/// directory), in order; it reads the first that exists.
pub(crate) fn candidates(root: &Path, name: &str) -> [PathBuf; 4] {
    [
        root.join(name),
        root.join(format!("{name}.yml")),
        root.join(format!("{name}.yaml")),
        root.join(format!("{name}.json")),
    ]
}

/// The variables files of `name` under `base/<dir>/` (`dir` is `group_vars` or
/// `host_vars`), in merge order: a later file's top-level keys replace an earlier one's.
pub(crate) fn load(
    base: &Path,
    dir: &str,
    name: &str,
    warnings: &mut Vec<InventoryWarning>,
) -> Result<Vec<VarsFile>, InventoryError> {
    let mut out = Vec::new();
    // A name with a path separator would escape the directory; Ansible skips such entities
    // too (chroot-style host names like `/srv/jail`).
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Ok(out);
    }
    let root = base.join(dir);
    if !root.is_dir() {
        return Ok(out);
    }
    let candidates = candidates(&root, name);
    let mut existing = candidates.iter().filter(|p| p.exists());
    let Some(chosen) = existing.next() else {
        return Ok(out);
    };
    for shadowed in existing {
        warnings.push(InventoryWarning {
            path: shadowed.clone(),
            line: None,
            message: format!(
                "ignored: Ansible reads only {} for `{name}`",
                chosen.display()
            ),
        });
    }
    let files = if chosen.is_dir() {
        let mut files = Vec::new();
        list_dir(chosen, 0, &mut files)?;
        files
    } else {
        vec![chosen.clone()]
    };
    for file in files {
        let text = InventoryError::read_text(&file)?;
        // A whole file encrypted with ansible-vault (Kubespray's secrets, become passwords):
        // Ansible needs the vault password to read it; dnsfix never decrypts one.
        if vault_encrypted(&text) {
            warnings.push(InventoryWarning {
                path: file.clone(),
                line: Some(1),
                message: "encrypted with ansible-vault: dnsfix does not decrypt it, so its variables are not read: a DNS variable set only there (upstream_dns_servers, nodelocaldns_ip, ...) reads as unset, and findings and plans that depend on it may be wrong; keep DNS variables in a plain vars file".into(),
            });
            continue;
        }
        let (vars, literal) = parse_vars_file(&file, &text)?;
        for line in vault_lines(&text) {
            warnings.push(InventoryWarning {
                path: file.clone(),
                line: Some(line),
                message: VAULT_WARNING.into(),
            });
        }
        let lines = top_level_lines(&text, vars.keys().map(String::as_str))
            .into_iter()
            .map(|(k, line)| (k.to_owned(), line))
            .collect();
        out.push(VarsFile {
            path: file,
            vars,
            lines,
            literal,
        });
    }
    Ok(out)
}

/// A whole file encrypted with ansible-vault (its `$ANSIBLE_VAULT;` header).
pub(crate) fn vault_encrypted(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .starts_with("$ANSIBLE_VAULT;")
}

/// All the files' variables merged, for tests.
#[cfg(test)]
fn merged(files: Vec<VarsFile>) -> Vars {
    let mut vars = Vars::new();
    for f in files {
        vars.extend(f.vars);
    }
    vars
}

/// Deeper than any real vars tree; reaching it means a symlink loop.
const MAX_DEPTH: usize = 32;

/// The files of a variables directory Ansible reads, in the order it merges them.
pub(crate) fn dir_files(dir: &Path) -> Result<Vec<PathBuf>, InventoryError> {
    let mut files = Vec::new();
    list_dir(dir, 0, &mut files)?;
    Ok(files)
}

fn list_dir(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), InventoryError> {
    if depth > MAX_DEPTH {
        return Err(InventoryError::parse(
            dir,
            None,
            None,
            format!(
                "expected at most {MAX_DEPTH} nested directories of variables (a symlink loop?)"
            ),
        ));
    }
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| InventoryError::io(dir, e))? {
        let entry = entry.map_err(|e| InventoryError::io(dir, e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    for name in names {
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let path = dir.join(&name);
        let extension = Path::new(&name).extension().and_then(|e| e.to_str());
        if path.is_dir() {
            if extension.is_none() {
                list_dir(&path, depth + 1, out)?;
            }
        } else if path.is_file() && extension.is_none_or(|e| EXTENSIONS.contains(&e)) {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A scratch directory under the system temp dir, unique per test and process.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("dnsfix-vars-dirs-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create scratch dir");
        dir
    }

    fn write(path: &Path, text: &str) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parent");
        }
        fs::write(path, text).expect("write file");
    }

    #[test]
    fn directory_files_merge_in_sorted_order_and_junk_is_skipped() {
        let base = scratch("dir");
        let gv = base.join("group_vars/k8s_cluster");
        write(&gv.join("a.yml"), "x: a\ny: a\n");
        write(&gv.join("b.yaml"), "y: b\n");
        write(&gv.join("c/nested"), "z: nested\n");
        write(&gv.join(".hidden.yml"), "x: hidden\n");
        write(&gv.join("d.yml~"), "x: backup\n");
        write(&gv.join("d.yml.swp"), "x: swap\n");
        write(&gv.join("README.md"), "not yaml: [\n");
        write(&gv.join("e.retry"), "x: retry\n");
        let mut warnings = Vec::new();
        let vars = merged(load(&base, "group_vars", "k8s_cluster", &mut warnings).expect("load"));
        assert_eq!(
            serde_json::Value::Object(vars),
            serde_json::json!({"x": "a", "y": "b", "z": "nested"})
        );
        assert!(warnings.is_empty());
        let _ = fs::remove_dir_all(&base);
    }

    /// `ansible-vault encrypt group_vars/all/vault.yml`: skipped with a warning naming the
    /// file, the plain files beside it still read.
    #[test]
    fn a_vault_encrypted_file_is_skipped_with_a_warning() {
        let base = scratch("vault");
        write(
            &base.join("group_vars/all/all.yml"),
            "upstream_dns_servers: [192.0.2.53]\n",
        );
        write(
            &base.join("group_vars/all/vault.yml"),
            "$ANSIBLE_VAULT;1.1;AES256\n62313365396662343061393464336163383764373764613633653634306231386433626436623361\n",
        );
        let mut warnings = Vec::new();
        let vars = merged(load(&base, "group_vars", "all", &mut warnings).expect("load"));
        assert_eq!(
            serde_json::Value::Object(vars),
            serde_json::json!({"upstream_dns_servers": ["192.0.2.53"]})
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].path.ends_with("group_vars/all/vault.yml"));
        assert!(
            warnings[0].message.contains("ansible-vault"),
            "{warnings:?}"
        );
        let _ = fs::remove_dir_all(&base);
    }

    #[test]
    fn first_candidate_wins_and_the_rest_are_reported() {
        let base = scratch("shadow");
        write(&base.join("group_vars/all/main.yml"), "x: dir\n");
        write(&base.join("group_vars/all.yml"), "x: file\n");
        let mut warnings = Vec::new();
        let vars = merged(load(&base, "group_vars", "all", &mut warnings).expect("load"));
        assert_eq!(vars.get("x"), Some(&serde_json::json!("dir")));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].path.ends_with("group_vars/all.yml"));
        let _ = fs::remove_dir_all(&base);
    }

    #[test]
    fn missing_directories_and_names_are_empty() {
        let base = scratch("missing");
        let mut warnings = Vec::new();
        assert!(
            load(&base, "host_vars", "node1", &mut warnings)
                .expect("load")
                .is_empty()
        );
        write(&base.join("host_vars/node2.json"), "{\"a\": 1}");
        assert!(
            load(&base, "host_vars", "node1", &mut warnings)
                .expect("load")
                .is_empty()
        );
        assert!(
            load(&base, "host_vars", "../x", &mut warnings)
                .expect("load")
                .is_empty()
        );
        let vars = merged(load(&base, "host_vars", "node2", &mut warnings).expect("load"));
        assert_eq!(vars.get("a"), Some(&serde_json::json!(1)));
        let _ = fs::remove_dir_all(&base);
    }

    #[test]
    fn a_list_file_is_an_error_naming_file_and_line() {
        let base = scratch("bad");
        write(&base.join("group_vars/etcd.yml"), "---\n- a\n");
        let mut warnings = Vec::new();
        let err = load(&base, "group_vars", "etcd", &mut warnings)
            .expect_err("a list is not vars")
            .to_string();
        assert!(
            err.ends_with("group_vars/etcd.yml:2:1: expected a mapping of variables (`name: value`), found a list"),
            "{err}"
        );
        let _ = fs::remove_dir_all(&base);
    }
}
