//! The control-root base (`<TMPDIR or /dev/shm>/cordon-<euid>`), checked by
//! the very function a launch uses (`control_root::base_dir`): a base that
//! another uid pre-created, or that is a symlink or group/other-writable,
//! refuses every launch, and doctor says so with the way out.

use super::{Check, Importance};
use crate::host::control_root::{self, ControlRootError};

const NAME: &str = "control-root base";

/// Thin: creates the base when missing (as a launch would) and checks it.
pub fn check_control_root_base() -> Check {
    judge(control_root::base_dir())
}

/// Pure: the launch's verdict on the base → the doctor check.
pub fn judge(base: Result<std::path::PathBuf, ControlRootError>) -> Check {
    match base {
        Ok(path) => Check::pass(
            NAME,
            Importance::Required,
            format!("{} (private, mode 0711)", path.display()),
        ),
        Err(error) => {
            let path = control_root::base_path();
            let fix = format!(
                "every launch is refused while {p} is not this uid's own: find out who created it \
                 (ls -ld {p}), then remove it as root (rm -rf -- {p}); or set TMPDIR to a private \
                 directory of this user for the provider",
                p = path.display()
            );
            Check::fail(NAME, Importance::Required, error.to_string(), &fix)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn an_unsafe_base_fails_required_and_names_the_removal() {
        let path = control_root::base_path();
        let check = judge(Err(ControlRootError::UnsafeBase {
            path: path.clone(),
            uid: 1000,
        }));
        assert!(!check.ok);
        assert_eq!(check.importance, Importance::Required);
        assert!(check
            .detail
            .contains("not a private directory owned by uid 1000"));
        assert!(check.fix.contains(&format!("rm -rf -- {}", path.display())));
        assert!(check.fix.contains("TMPDIR"));
    }

    #[test]
    fn a_usable_base_passes() {
        let check = judge(Ok("/dev/shm/cordon-0".into()));
        assert!(check.ok && check.fix.is_empty(), "{check:?}");
    }
}
