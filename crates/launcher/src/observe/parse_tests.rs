use super::*;

const STATUS: &str = "Name:\tsleep\nUid:\t1879048192\t1879048192\t1879048192\t1879048192\n\
Gid:\t1879048192\t1879048192\t1879048192\t1879048192\nGroups:\t\nCapInh:\t0000000000000000\n\
CapEff:\t0000000000000000\nCapBnd:\t000001fffeffffff\nNoNewPrivs:\t1\nSeccomp:\t2\n\
Seccomp_filters:\t1\n";

#[test]
fn status_yields_seccomp_caps_and_host_ids() {
    let s = status(STATUS).unwrap();
    assert_eq!((s.seccomp_mode, s.seccomp_filters), (2, 1));
    assert!(s.no_new_privs);
    assert_eq!(s.cap_eff, 0);
    assert_eq!(s.cap_bnd, 0x1fffeffffff);
    assert_eq!(s.uids, [0x7000_0000; 4]);
    assert_eq!(s.groups, Vec::<u32>::new());
    let grouped = status(&STATUS.replace("Groups:\t\n", "Groups:\t27 1000 \n")).unwrap();
    assert_eq!(grouped.groups, [27, 1000]);
}

#[test]
fn a_status_without_seccomp_lines_is_not_parsed() {
    assert_eq!(status(&STATUS.replace("Seccomp_filters:\t1\n", "")), None);
}

#[test]
fn id_maps_parse_every_range() {
    let map = id_map("1879048192 1879048192          1\n         0          0 4294967295\n");
    assert_eq!(
        map.unwrap(),
        [
            IdRange {
                inside: 0x7000_0000,
                outside: 0x7000_0000,
                count: 1
            },
            IdRange {
                inside: 0,
                outside: 0,
                count: 4_294_967_295
            },
        ]
    );
    assert_eq!(id_map("1 2\n"), None);
}

#[test]
fn limits_read_soft_and_hard_with_unlimited_as_none() {
    let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
Max cpu time              30                   31                   seconds   \n\
Max file size             67108864             67108864             bytes     \n\
Max data size             unlimited            unlimited            bytes     \n\
Max stack size            8388608              unlimited            bytes     \n\
Max core file size        0                    0                    bytes     \n\
Max processes             4096                 4096                 processes \n\
Max open files            256                  256                  files     \n\
Max locked memory         8388608              8388608              bytes     \n\
Max address space         268435456            268435456            bytes     \n\
Max pending signals       1024                 1024                 signals   \n\
Max msgqueue size         819200               819200               bytes     \n\
Max nice priority         0                    0                              \n\
Max realtime priority     0                    0                              \n\
Max realtime timeout      unlimited            unlimited            us        \n";
    let rows = limits(text).unwrap();
    let cpu = rows.iter().find(|l| l.name == "CPU").unwrap();
    assert_eq!((cpu.soft, cpu.hard), (Some(30), Some(31)));
    let stack = rows.iter().find(|l| l.name == "STACK").unwrap();
    assert_eq!(stack.hard, None);
    let rttime = rows.iter().find(|l| l.name == "RTTIME").unwrap();
    assert_eq!(rttime.soft, None);
    assert_eq!(limits("Limit\n"), None);
}

#[test]
fn mountinfo_reads_points_flags_types_and_unescapes_paths() {
    let text = "68 45 0:41 /newroot / ro,nosuid,nodev,relatime - tmpfs tmpfs rw,uid=1\n\
73 72 0:6 /null /dev/null rw,nosuid,relatime - devtmpfs devtmpfs rw,size=1k\n\
80 68 0:45 / /tmp rw,nosuid,nodev,relatime shared:5 - tmpfs tmpfs rw,size=131072k\n\
90 68 254:0 /a\\040b /opt/my\\040data ro,relatime - ext4 /dev/vda rw\n";
    let mounts = mountinfo(text).unwrap();
    assert_eq!(mounts.len(), 4);
    assert!(
        !mounts[0].writable,
        "per-mount ro wins over the superblock's rw"
    );
    assert_eq!(
        (mounts[1].root.as_str(), mounts[1].point.as_str()),
        ("/null", "/dev/null")
    );
    assert!(mounts[2].writable);
    assert_eq!(mounts[2].fs_type, "tmpfs");
    assert_eq!(mounts[3].point, "/opt/my data");
    assert_eq!(mountinfo("garbage\n"), None);
}

#[test]
fn namespace_links_and_fdinfo_yield_numbers() {
    assert_eq!(ns_inode("net:[4026532256]"), Some(4_026_532_256));
    assert_eq!(ns_inode("net"), None);
    assert_eq!(
        fdinfo_mnt_id("pos:\t0\nflags:\t010000000\nmnt_id:\t80\n"),
        Some(80)
    );
}
