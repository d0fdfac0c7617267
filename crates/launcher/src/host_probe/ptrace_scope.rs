//! Yama's `kernel.yama.ptrace_scope`, reported by `cordon doctor` for what
//! it means inside a sandbox. `ptrace` and `process_vm_*` are denied by the
//! seccomp filter, but `/proc/<pid>/mem` is an open(2), which a filter
//! cannot tell apart from any other: a sandboxed program may read and write
//! the memory of every process of its own sandbox that the kernel's ptrace
//! access check lets it — including bwrap's namespace init. The launcher no
//! longer trusts the init for anything (it kills the namespace from outside),
//! so this stays inside the sandbox; Yama narrows it further.

use super::{Check, Importance};

const PATH: &str = "/proc/sys/kernel/yama/ptrace_scope";
const NAME: &str = "ptrace scope (Yama)";
const FIX: &str = "sysctl -w kernel.yama.ptrace_scope=2   # persist in /etc/sysctl.d/; 1 also \
                   keeps a program out of its parent's (the namespace init's) memory";
/// Without Yama there is no such sysctl to set: the kernel lacks the module.
const FIX_WITHOUT_YAMA: &str =
    "no sysctl can add it: this kernel has no Yama (CONFIG_SECURITY_YAMA, \
                                \"yama\" in the lsm= boot list); on a kernel with it, set \
                                kernel.yama.ptrace_scope=2";

/// The sysctl's value; `None` when Yama is not in this kernel.
pub fn read_ptrace_scope() -> Option<String> {
    std::fs::read_to_string(PATH)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Pure: scope 1 or more passes; 0 or no Yama is a warning (optional).
pub fn check_ptrace_scope(scope: Option<&str>) -> Check {
    let meaning = match scope {
        None => {
            "no Yama in this kernel: a sandboxed program can read and write \
                 /proc/<pid>/mem of any process of its own sandbox, the namespace init included"
        }
        Some("0") => {
            "0 (classic): a sandboxed program can read and write /proc/<pid>/mem \
                      of any process of its own sandbox, the namespace init included"
        }
        Some("1") => {
            "1 (restricted): a sandboxed program reaches /proc/<pid>/mem of its \
                      own descendants only"
        }
        Some("2") => "2 (admin-only): no /proc/<pid>/mem access inside a sandbox",
        Some("3") => "3 (no attach): no /proc/<pid>/mem access inside a sandbox",
        Some(_) => "an unknown value",
    };
    let detail = format!("{meaning}; never beyond the sandbox (docs/security.md)");
    match scope {
        Some("1" | "2" | "3") => Check::pass(NAME, Importance::Optional, detail),
        None => Check::fail(NAME, Importance::Optional, detail, FIX_WITHOUT_YAMA),
        _ => Check::fail(NAME, Importance::Optional, detail, FIX),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn scope_zero_or_no_yama_warns_with_the_sysctl_and_one_or_more_passes() {
        for scope in [None, Some("0")] {
            let check = check_ptrace_scope(scope);
            assert!(!check.ok);
            assert_eq!(check.importance, Importance::Optional);
            assert!(check.detail.contains("/proc/<pid>/mem"), "{}", check.detail);
            assert!(check.fix.contains("kernel.yama.ptrace_scope"));
        }
        let zero = check_ptrace_scope(Some("0"));
        assert!(zero.fix.starts_with("sysctl -w"), "{}", zero.fix);
        let none = check_ptrace_scope(None);
        assert!(
            !none.fix.starts_with("sysctl"),
            "no sysctl to run without Yama: {}",
            none.fix
        );
        assert!(none.fix.contains("CONFIG_SECURITY_YAMA"), "{}", none.fix);
        for scope in ["1", "2", "3"] {
            let check = check_ptrace_scope(Some(scope));
            assert!(check.ok && check.fix.is_empty(), "{scope}");
            assert!(check.detail.starts_with(scope));
        }
    }
}
