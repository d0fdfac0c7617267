//! A non-root provider's subordinate ids (`/etc/subuid`, `/etc/subgid`, the
//! ranges `newuidmap`/`newgidmap` let that user map): where its sandboxes'
//! host uids and gids come from, so that no sandbox ever runs as the
//! provider's own uid (docs/security.md, "A non-root provider").
//!
//! Each usable range (uid and gid alike) is split in two halves, as the
//! root provider's reserved range is (process_identity.rs):
//! - the first half: stable *workspace owners*, one per caller workspace
//!   that runs may write (the same owner every run, so the workspace keeps
//!   working across runs);
//! - the second half: *per-run* ids, leased for one run's life
//!   (uid_lease.rs).
//!
//! Pure parsing and splitting here; the only I/O is reading the two files.

use std::path::Path;

/// Where shadow's `newuidmap`/`newgidmap` read the ranges.
pub const SUBUID_FILE: &str = "/etc/subuid";
pub const SUBGID_FILE: &str = "/etc/subgid";
/// The setuid helpers (Debian/Ubuntu package `uidmap`), at fixed trusted
/// paths (never a `$PATH` lookup).
pub const NEWUIDMAP: &str = "/usr/bin/newuidmap";
pub const NEWGIDMAP: &str = "/usr/bin/newgidmap";
/// The smallest range cordon uses: two halves of at least one id each. A
/// usual range is 65536 ids (`usermod --add-subuids 100000-165535`).
pub const MIN_RANGE_IDS: u32 = 2;
/// What `cordon doctor` and the refusal suggest (65536 ids per user, the
/// convention of `useradd` and rootless Podman).
pub const SUGGESTED_RANGE_IDS: u32 = 65536;

/// `first..first + count` of one subordinate file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IdRange {
    pub first: u32,
    pub count: u32,
}

impl IdRange {
    /// The first half: stable workspace owners.
    pub fn owners(self) -> IdRange {
        IdRange {
            first: self.first,
            count: self.count / 2,
        }
    }

    /// The second half: per-run leases.
    pub fn per_run(self) -> IdRange {
        let owners = self.count / 2;
        IdRange {
            first: self.first + owners,
            count: self.count - owners,
        }
    }

    pub fn contains(self, id: u32) -> bool {
        id >= self.first && id - self.first < self.count
    }
}

/// The provider's usable uid and gid ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SubordinateIds {
    pub uids: IdRange,
    pub gids: IdRange,
}

impl SubordinateIds {
    /// The gid paired with `uid` of the uid range: the same offset in the
    /// gid range, so a run's gid is as much its own as its uid.
    pub fn gid_for(self, uid: u32) -> Option<u32> {
        let offset = uid.checked_sub(self.uids.first)?;
        (offset < self.gids.count).then(|| self.gids.first + offset)
    }

    /// Ranges cut to the same length (the shorter of the two), so that every
    /// uid of either half has its gid.
    fn paired(self) -> SubordinateIds {
        let count = self.uids.count.min(self.gids.count);
        SubordinateIds {
            uids: IdRange { count, ..self.uids },
            gids: IdRange { count, ..self.gids },
        }
    }
}

/// Who the ranges are looked up for: shadow matches a line by user name or
/// by the decimal uid.
#[derive(Debug, Clone, Copy)]
pub struct Account<'a> {
    pub name: Option<&'a str>,
    pub uid: u32,
}

/// Pure: the first range of `text` (one file) for `account` that holds at
/// least [`MIN_RANGE_IDS`] ids and does not contain the provider's own id
/// `own` (a range holding it would let a sandbox be the provider). Malformed
/// lines are skipped, as shadow does.
pub fn find_range(text: &str, account: Account<'_>, own: u32) -> Option<IdRange> {
    let uid = account.uid.to_string();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|line| {
            let mut parts = line.split(':');
            let (who, first, count) = (parts.next()?, parts.next()?, parts.next()?);
            if parts.next().is_some() || !(Some(who) == account.name || who == uid) {
                return None;
            }
            let first: u32 = first.parse().ok()?;
            let count: u32 = count.parse().ok()?;
            first.checked_add(count)?;
            Some(IdRange { first, count })
        })
        .find(|r| r.count >= MIN_RANGE_IDS && !r.contains(own))
}

/// Pure: both files' text → the provider's paired ranges, if each has one.
pub fn from_texts(
    subuid: &str,
    subgid: &str,
    account: Account<'_>,
    own_gid: u32,
) -> Option<SubordinateIds> {
    let uids = find_range(subuid, account, account.uid)?;
    let gids = find_range(subgid, account, own_gid)?;
    Some(SubordinateIds { uids, gids }.paired())
}

/// Why the provider has no usable subordinate ids, for the refusal and
/// `cordon doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// `newuidmap`/`newgidmap` are not installed (package `uidmap`).
    Helpers,
    /// No usable range in one of the files for this user.
    Range { file: &'static str },
}

/// Reads the files for the calling process's real user (the one
/// `newuidmap` checks): its ranges, or what is missing.
pub fn for_current_user() -> Result<SubordinateIds, Missing> {
    if !Path::new(NEWUIDMAP).exists() || !Path::new(NEWGIDMAP).exists() {
        return Err(Missing::Helpers);
    }
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid().as_raw();
    let user = nix::unistd::User::from_uid(uid).ok().flatten();
    let account = Account {
        name: user.as_ref().map(|u| u.name.as_str()),
        uid: uid.as_raw(),
    };
    let read = |file| std::fs::read_to_string(file).unwrap_or_default();
    let (subuid, subgid) = (read(SUBUID_FILE), read(SUBGID_FILE));
    let uids =
        find_range(&subuid, account, account.uid).ok_or(Missing::Range { file: SUBUID_FILE })?;
    let gids = find_range(&subgid, account, gid).ok_or(Missing::Range { file: SUBGID_FILE })?;
    Ok(SubordinateIds { uids, gids }.paired())
}

/// The commands that give the current user a range (run as root), for the
/// refusal and `cordon doctor`: `usermod` where the user has a name,
/// appending to the files otherwise.
pub fn fix_commands(missing: &Missing) -> String {
    let uid = nix::unistd::getuid();
    let user = nix::unistd::User::from_uid(uid).ok().flatten();
    let first = 100_000 + SUGGESTED_RANGE_IDS * (uid.as_raw() % 1000 + 1);
    let last = first + SUGGESTED_RANGE_IDS - 1;
    let install = "apt-get install uidmap";
    match (missing, user) {
        (Missing::Helpers, _) => format!("as root: {install}"),
        (Missing::Range { .. }, Some(user)) => format!(
            "as root: usermod --add-subuids {first}-{last} --add-subgids {first}-{last} {} \
             (pick a range no other user's /etc/subuid or /etc/subgid line overlaps)",
            user.name
        ),
        (Missing::Range { .. }, None) => format!(
            "as root: echo '{uid}:{first}:{SUGGESTED_RANGE_IDS}' >> {SUBUID_FILE} && \
             echo '{uid}:{first}:{SUGGESTED_RANGE_IDS}' >> {SUBGID_FILE} \
             (pick a range no other line overlaps)"
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const ALICE: Account<'static> = Account {
        name: Some("alice"),
        uid: 1000,
    };

    #[test]
    fn a_range_is_found_by_user_name_or_by_uid_and_malformed_lines_are_skipped() {
        let text = "# comment\nbob:200000:65536\nalice:x:1\nalice:100000:65536\n";
        assert_eq!(
            find_range(text, ALICE, 1000),
            Some(IdRange {
                first: 100_000,
                count: 65536
            })
        );
        let by_uid = "1000:300000:10\n";
        assert_eq!(
            find_range(by_uid, ALICE, 1000).map(|r| r.first),
            Some(300_000)
        );
        assert_eq!(find_range("bob:1:65536\n", ALICE, 1000), None);
    }

    #[test]
    fn a_range_holding_the_provider_own_id_or_too_small_or_overflowing_is_not_used() {
        assert_eq!(
            find_range("alice:900:200\n", ALICE, 1000),
            None,
            "holds 1000"
        );
        assert_eq!(find_range("alice:5000:1\n", ALICE, 1000), None, "one id");
        assert_eq!(find_range("alice:4294967295:2\n", ALICE, 1000), None);
        let second = "alice:900:200\nalice:5000:4\n";
        assert_eq!(find_range(second, ALICE, 1000).map(|r| r.first), Some(5000));
    }

    #[test]
    fn owners_take_the_first_half_and_per_run_ids_the_second() {
        let range = IdRange {
            first: 100_000,
            count: 65536,
        };
        assert_eq!(range.owners().first, 100_000);
        assert_eq!(range.owners().count, 32768);
        assert_eq!(range.per_run().first, 132_768);
        assert_eq!(range.per_run().count, 32768);
        assert!(!range.owners().contains(132_768));
        assert!(range.per_run().contains(165_535));
        assert!(!range.per_run().contains(165_536));
    }

    #[test]
    fn uid_and_gid_ranges_are_paired_by_offset_and_cut_to_the_shorter() {
        let ids = from_texts("alice:100000:100\n", "alice:500000:60\n", ALICE, 1000).unwrap();
        assert_eq!(ids.uids.count, 60);
        assert_eq!(ids.gid_for(100_007), Some(500_007));
        assert_eq!(ids.gid_for(100_060), None);
        assert_eq!(ids.gid_for(99), None);
        assert_eq!(from_texts("alice:100000:100\n", "", ALICE, 1000), None);
    }
}
