//! `modprobe`: a kernel module, loaded now and listed in a modules-load.d file unless one
//! already lists it.

use minijinja::Value as Ctx;

use super::error::PlanErrorKind;
use super::{Outcome, Run, State};
use crate::facts::kernel_cmdline::KernelCmdline;
use crate::facts::modprobe_d::module_denials;
use crate::facts::modules_load::{
    ETC_MODULES, MODULES_LOAD_DIRS, normalize_module, persisted_modules,
};
use crate::facts::raw::FileState;
use crate::plan::model::Reason;
use crate::playbook::action::ModprobeArgs;

pub const MODULES_FILE: &str = "/etc/modules-load.d/dnsfix.conf";

impl Run<'_> {
    pub(super) fn modprobe(
        &mut self,
        args: &ModprobeArgs,
        ctx: &Ctx,
        state: &mut State,
        reason: &Reason,
    ) -> Result<Outcome, PlanErrorKind> {
        let name = normalize_module(&self.string_arg(Some(&args.name), "name", ctx)?);
        let file = self.boot_file(
            args.file.as_ref(),
            ctx,
            MODULES_FILE,
            &MODULES_LOAD_DIRS,
            ETC_MODULES,
        )?;
        let loaded = self.module_loaded(&name)?;
        self.digest.modules.insert(name.clone(), loaded);
        // A deny-list the fix cannot get past: refuse, rather than promise a load that
        // fails or a boot that skips it. Whose deny-list it is, is not dnsfix's call.
        if let Some(why) = self.denied(&name) {
            return Ok(Outcome::Failed(why));
        }
        let mut changed = Vec::new();
        if !loaded {
            state
                .modules
                .entry(name.clone())
                .or_default()
                .push(reason.clone());
            changed.push(format!("{name} loaded"));
        }
        let files = self.config_files(state, &MODULES_LOAD_DIRS, ETC_MODULES)?;
        let inputs: Vec<(String, &str)> = files
            .iter()
            .map(|(p, t, _)| (p.clone(), t.as_str()))
            .collect();
        let systemd = crate::facts::sysctl::booted_by_systemd(&self.facts.raw);
        // systemd-modules-load loads what `modules_load=` names on the kernel command line.
        let on_cmdline = systemd
            && KernelCmdline::from_raw(&self.facts.raw)
                .modules_load(&name)
                .is_some();
        if !on_cmdline && !persisted_modules(&inputs, systemd).contains_key(&name) {
            let text = self.read(state, &file)?;
            let mut new = match text {
                Some(t) if !t.is_empty() && !t.ends_with('\n') => format!("{t}\n"),
                Some(t) => t,
                None => {
                    "# Managed by dnsfix: kernel modules Kubernetes networking needs at boot.\n"
                        .to_string()
                }
            };
            new.push_str(&name);
            new.push('\n');
            self.write(
                state,
                &file,
                new,
                None,
                format!("load {name} at boot"),
                reason,
            )?;
            changed.push(format!("{file} lists {name}"));
        }
        Ok(if changed.is_empty() {
            Outcome::Already(format!("{name} already loaded, now and at boot"))
        } else {
            Outcome::Changed {
                what: changed.join(", "),
                file: None,
            }
        })
    }

    /// Why a deny-list defeats loading `name` now or at boot (see
    /// [`crate::facts::modprobe_d`]), said for the plan's reader; None where none does.
    /// br_netfilter's are in its facts (with the modules it needs); another module's are
    /// its own lines only.
    fn denied(&self, name: &str) -> Option<String> {
        let (at_boot, now) = if name == "br_netfilter" {
            let b = &self.facts.br_netfilter;
            (b.denied_at_boot.clone(), b.denied_now.clone())
        } else {
            let loaded = self.module_loaded(name).unwrap_or(false);
            let (at_boot, now, _) = module_denials(&self.facts.raw, &[name], &|_| loaded);
            (at_boot, now)
        };
        if at_boot.is_empty() && now.is_empty() {
            return None;
        }
        let mut said: Vec<String> = now
            .iter()
            .map(|d| {
                format!(
                    "`modprobe {name}` would not load it now: {}",
                    d.describe(name)
                )
            })
            .collect();
        said.extend(
            at_boot
                .iter()
                .filter(|d| !now.contains(d))
                .map(|d| format!("the boot would not load it: {}", d.describe(name))),
        );
        let lines = if said.len() > 1 {
            "those lines"
        } else {
            "that line"
        };
        Some(format!(
            "a deny-list keeps {name} from loading, which no modules-load.d line dnsfix writes gets past: {}. dnsfix does not edit deny-lists: where {name} may load, remove {lines} (or take {name} off it), then plan again",
            said.join("; ")
        ))
    }

    pub(super) fn module_loaded(&self, name: &str) -> Result<bool, PlanErrorKind> {
        if name == "br_netfilter" {
            if self.facts.br_netfilter.built_in {
                return Ok(true);
            }
            return match &self.facts.br_netfilter.loaded {
                crate::facts::node_facts::Observed::Known(loaded) => Ok(*loaded),
                crate::facts::node_facts::Observed::Absent => Ok(false),
                crate::facts::node_facts::Observed::Unknown(why) => {
                    Err(PlanErrorKind::ModuleState(why.clone()))
                }
            };
        }
        let listed = self
            .facts
            .module_loaded(name)
            .ok_or_else(|| PlanErrorKind::Unreadable {
                path: "/proc/modules".into(),
            })?;
        Ok(listed
            || self
                .facts
                .files
                .contains_key(&format!("/sys/module/{name}"))
                && self.facts.files[&format!("/sys/module/{name}")].state == FileState::Directory)
    }
}
