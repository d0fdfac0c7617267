//! Owner uids that agent sessions hold (lib/sessions/owner-claims.js), as
//! a run on a caller's workspace must see them: the workspace-owner range
//! is both the uids docs/policy.md offers for a caller's workspaces and the
//! uids sessions draw their owners from. A run as a session's uid shares
//! it, and the sweep that follows a dead provider (uid_sweep.rs) kills
//! every process of that uid, the run included (round 8, R8-1). So a run
//! whose workspace owner a session holds is refused before anything exists:
//!
//! - a root provider: the uid has a claim in [`CLAIMS_DIR`] (root-owned,
//!   host-wide; a claim lives as long as the session's workspace, across a
//!   dead provider until its `recover()` or a takeover) that names another
//!   workspace than this run's (a session's own sandbox runs on the claimed
//!   workspace, compared by device and inode, not by spelling);
//! - a non-root provider: a live process of its uid maps exactly that uid
//!   (`U U 1`, a session holder's map: holder.js). Its claims are in a
//!   directory of its choosing that the launcher does not know, so a dead
//!   holder's session is not seen (docs/sessions.md says so).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where every root provider on the host claims session owner uids.
pub const CLAIMS_DIR: &str = "/run/cordon-session-owners";

/// Pure: the workspace a claim's text names: `{"workspace": …}` (JSON, one
/// line), or the first format, the path alone.
pub fn claimed_workspace(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("workspace")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| text.strip_suffix('\n').unwrap_or(text).to_owned())
}

/// Pure over a `/proc/<pid>/uid_map` read from the initial namespace:
/// whether it is a session holder's map of `uid` (exactly that uid, to
/// itself). A wider map that covers it (rootless Podman's) is no session's.
pub fn maps_as_holder(map: &str, uid: u32) -> bool {
    map.lines().any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let want = uid.to_string();
        fields == [want.as_str(), want.as_str(), "1"]
    })
}

/// Pure over a `/proc/<pid>/cmdline`: whether the process is a session
/// holder (`cordon-exec-agent session-holder`: holder.js). A run's own
/// uid-map helper (userns_map.rs, a fork of the provider that never execs)
/// has the same `U U 1` map for an instant; counted as a holder, it refused
/// a second run on the same workspace (white-box review of round 12).
pub fn is_session_holder(cmdline: &[u8]) -> bool {
    cmdline.split(|b| *b == 0).nth(1) == Some(b"session-holder".as_slice())
}

/// Whether a session other than one on `workspace` holds `uid` (module
/// doc). An unreadable claim is held: refusing a run is the safe side.
pub fn held_by_another_session(provider_is_root: bool, uid: u32, workspace: &Path) -> bool {
    if provider_is_root {
        held_by_root_claim(Path::new(CLAIMS_DIR), uid, workspace)
    } else {
        mapped_by_live_holder(uid)
    }
}

/// The check of [`held_by_another_session`] made again once the run's
/// bwrap exists as the uid, before it gets its options (nothing of the
/// sandbox has run yet). The check at planning alone left a window: a
/// session of another provider could claim the uid after it and look for
/// processes of the uid before the run's bwrap existed, and both went on
/// (round 8, R8-1's race). The session side writes its claim (or its
/// holder's map) and then looks for processes of the uid; the run's side
/// makes its process and then looks for the claim (or map) again. Each
/// writes before it reads, so at least one of them sees the other: the
/// session gives the uid back, or the run is refused here.
#[derive(Debug, Clone)]
pub struct ClaimRecheck {
    provider_is_root: bool,
    uid: u32,
    workspace: PathBuf,
}

impl ClaimRecheck {
    pub fn new(provider_is_root: bool, uid: u32, workspace: &Path) -> Self {
        Self {
            provider_is_root,
            uid,
            workspace: workspace.to_path_buf(),
        }
    }

    pub fn uid(&self) -> u32 {
        self.uid
    }

    /// Whether a session holds the uid now.
    pub fn held(&self) -> bool {
        held_by_another_session(self.provider_is_root, self.uid, &self.workspace)
    }
}

fn held_by_root_claim(dir: &Path, uid: u32, workspace: &Path) -> bool {
    let text = match std::fs::read_to_string(dir.join(uid.to_string())) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    let identity = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let claimed = identity(Path::new(&claimed_workspace(&text)));
    claimed.is_none() || claimed != identity(workspace)
}

fn mapped_by_live_holder(uid: u32) -> bool {
    let me = nix::unistd::geteuid().as_raw();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        let ours = std::fs::metadata(&path).is_ok_and(|m| m.uid() == me);
        // A zombie (a dead holder not yet reaped) still shows its map, and holds nothing.
        let zombie = std::fs::read_to_string(path.join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'))
        });
        ours && !zombie
            && std::fs::read(path.join("cmdline")).is_ok_and(|c| is_session_holder(&c))
            && std::fs::read_to_string(path.join("uid_map"))
                .is_ok_and(|map| maps_as_holder(&map, uid))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_names_its_workspace_in_either_format() {
        let json = "{\"workspace\":\"/srv/s/k/ws\",\"pid\":12,\"start\":\"3\",\"nonce\":\"n\"}\n";
        assert_eq!(claimed_workspace(json), "/srv/s/k/ws");
        assert_eq!(claimed_workspace("/srv/s/k/ws\n"), "/srv/s/k/ws");
        assert_eq!(claimed_workspace("/srv/s/k/ws"), "/srv/s/k/ws");
    }

    #[test]
    fn only_a_holders_single_uid_map_holds_the_uid() {
        let uid = 1_342_180_000;
        assert!(maps_as_holder(" 1342180000 1342180000          1\n", uid));
        assert!(!maps_as_holder("1342180000 1342180000 1\n", uid + 1));
        assert!(!maps_as_holder("0 65534 1\n1 1342177280 65536\n", uid));
        assert!(!maps_as_holder("1342180000 1342180000 2\n", uid));
        assert!(!maps_as_holder("0 1342180000 1\n", uid));
        assert!(!maps_as_holder("0 0 4294967295\n", uid));
    }

    #[test]
    fn only_the_exec_agents_session_holder_command_is_a_holder() {
        assert!(is_session_holder(
            b"/opt/cordon/cordon-exec-agent\0session-holder\0"
        ));
        // A run's uid-map helper: a fork of the provider (node), never exec'd.
        assert!(!is_session_holder(b"node\0/srv/provider.js\0"));
        assert!(!is_session_holder(b"cordon-exec-agent\0"));
        assert!(!is_session_holder(b"x\0session-holder-not\0"));
        assert!(!is_session_holder(b""));
    }

    #[test]
    fn a_claim_holds_its_uid_against_every_workspace_but_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (claims, own, other) = (
            dir.path().join("claims"),
            dir.path().join("own"),
            dir.path().join("other"),
        );
        for d in [&claims, &own, &other] {
            std::fs::create_dir(d).unwrap();
        }
        assert!(!held_by_root_claim(&claims, 7, &other), "no claim");
        let text = format!("{{\"workspace\":{:?}}}\n", own.display().to_string());
        std::fs::write(claims.join("7"), text).unwrap();
        assert!(held_by_root_claim(&claims, 7, &other));
        assert!(
            !held_by_root_claim(&claims, 7, &own),
            "the session's own run"
        );
        assert!(
            !held_by_root_claim(&claims, 7, &own.join(".")),
            "by inode, not by spelling"
        );
        assert!(
            !held_by_root_claim(&claims, 8, &other),
            "another uid's claim"
        );
        // A claim whose workspace is gone still holds the uid (its provider may resume it).
        std::fs::write(claims.join("9"), "/nonexistent/ws\n").unwrap();
        assert!(held_by_root_claim(&claims, 9, &other));
    }
}
