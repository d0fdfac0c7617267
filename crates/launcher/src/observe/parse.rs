//! Pure parsers for the `/proc/<pid>` files the observation reads. Each
//! takes the file's text and returns only what the receipt and the
//! comparison need; anything malformed is `None` (the caller names the file).

use serde::Serialize;

/// The `status` lines that describe confinement.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// `Seccomp`: 0 disabled, 1 strict, 2 filter.
    pub seccomp_mode: u32,
    /// `Seccomp_filters`: filters attached (inherited ones included).
    pub seccomp_filters: u32,
    pub no_new_privs: bool,
    /// `CapEff`, `CapBnd` as the kernel prints them (hex).
    pub cap_eff: u64,
    pub cap_bnd: u64,
    /// `Uid`/`Gid`: real, effective, saved, filesystem — as seen from the
    /// reader's user namespace, i.e. host ids.
    pub uids: [u32; 4],
    pub gids: [u32; 4],
    /// `Groups`: supplementary groups, as host gids (bounded by the
    /// kernel's NGROUPS_MAX).
    pub groups: Vec<u32>,
}

/// Parses `/proc/<pid>/status`. `None` when a needed line is missing.
pub fn status(text: &str) -> Option<Status> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let ids = |name: &str| -> Option<[u32; 4]> {
        let v: Vec<u32> = field(name)?
            .split_whitespace()
            .map(|n| n.parse().ok())
            .collect::<Option<_>>()?;
        v.try_into().ok()
    };
    let hex = |name: &str| u64::from_str_radix(field(name)?, 16).ok();
    Some(Status {
        seccomp_mode: field("Seccomp")?.parse().ok()?,
        seccomp_filters: field("Seccomp_filters")?.parse().ok()?,
        no_new_privs: field("NoNewPrivs")? == "1",
        cap_eff: hex("CapEff")?,
        cap_bnd: hex("CapBnd")?,
        uids: ids("Uid")?,
        gids: ids("Gid")?,
        groups: field("Groups")?
            .split_whitespace()
            .map(|n| n.parse().ok())
            .collect::<Option<_>>()?,
    })
}

/// One line of `uid_map`/`gid_map`: `count` ids from `inside` map to `outside`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IdRange {
    pub inside: u32,
    pub outside: u32,
    pub count: u64,
}

/// Parses a `uid_map`/`gid_map` (at most 340 lines by kernel rule).
pub fn id_map(text: &str) -> Option<Vec<IdRange>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split_whitespace().map(str::parse::<u64>);
            let (inside, outside, count) = (f.next()?.ok()?, f.next()?.ok()?, f.next()?.ok()?);
            Some(IdRange {
                inside: u32::try_from(inside).ok()?,
                outside: u32::try_from(outside).ok()?,
                count,
            })
        })
        .collect()
}

/// One rlimit as `/proc/<pid>/limits` shows it; `None` = unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limit {
    pub name: &'static str,
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// The `limits` rows by the short names the plan uses (`RLIMIT_` dropped).
pub const LIMIT_ROWS: &[(&str, &str)] = &[
    ("CPU", "Max cpu time"),
    ("FSIZE", "Max file size"),
    ("DATA", "Max data size"),
    ("STACK", "Max stack size"),
    ("CORE", "Max core file size"),
    ("NPROC", "Max processes"),
    ("NOFILE", "Max open files"),
    ("MEMLOCK", "Max locked memory"),
    ("AS", "Max address space"),
    ("SIGPENDING", "Max pending signals"),
    ("MSGQUEUE", "Max msgqueue size"),
    ("NICE", "Max nice priority"),
    ("RTPRIO", "Max realtime priority"),
    ("RTTIME", "Max realtime timeout"),
];

/// Parses `/proc/<pid>/limits` into the rows of [`LIMIT_ROWS`].
pub fn limits(text: &str) -> Option<Vec<Limit>> {
    LIMIT_ROWS
        .iter()
        .map(|(name, row)| {
            let line = text.lines().find(|l| l.starts_with(row))?;
            let mut values = line[row.len()..].split_whitespace();
            let value = |v: &str| match v {
                "unlimited" => Some(None),
                n => n.parse().ok().map(Some),
            };
            Some(Limit {
                name,
                soft: value(values.next()?)?,
                hard: value(values.next()?)?,
            })
        })
        .collect()
}

/// One mount of `/proc/<pid>/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub id: u64,
    /// The mounted subtree of the source filesystem (`/null` for a bound node).
    pub root: String,
    /// Where it is mounted, as the sandbox sees it.
    pub point: String,
    /// The per-mount flag: `false` when the mount is read-only.
    pub writable: bool,
    pub fs_type: String,
}

/// Parses `mountinfo` (fields: id parent major:minor root point options
/// [optional…] - fstype source super-options). Paths are unescaped (`\040`).
pub fn mountinfo(text: &str) -> Option<Vec<Mount>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (head, tail) = line.split_once(" - ")?;
            let f: Vec<&str> = head.split(' ').collect();
            let fs_type = tail.split(' ').next()?;
            let options = f.get(5)?;
            Some(Mount {
                id: f.first()?.parse().ok()?,
                root: unescape(f.get(3)?),
                point: unescape(f.get(4)?),
                writable: options.split(',').any(|o| o == "rw"),
                fs_type: fs_type.to_string(),
            })
        })
        .collect()
}

/// Undoes the kernel's octal escapes of space, tab, newline and backslash.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let s = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(s, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The inode of a namespace link (`net:[4026532256]`).
pub fn ns_inode(link: &str) -> Option<u64> {
    link.rsplit_once(":[")?.1.strip_suffix(']')?.parse().ok()
}

/// The `mnt_id:` line of `/proc/self/fdinfo/<fd>`.
pub fn fdinfo_mnt_id(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("mnt_id:"))?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "parse_tests.rs"]
mod tests;
