//! `cordon host` over a Unix socket, before and around a sandbox: the
//! socket's placement, peer uids, tokens, bounds, refusals — a real host
//! child process and a raw frame client (docs/remote.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod support;
mod host_support;

use std::time::{Duration, Instant};

use host_support::*;
use serde_json::json;
use sha2::Digest;

#[test]
fn a_peer_uid_not_in_allow_uids_is_closed_without_a_byte() {
    require_sandbox!();
    let other = nix_uid().wrapping_add(54_321);
    let host = HostProcess::start("host-uid", json!({"allowUids": [other]}));
    let mut client = host.connect();
    client.send_json(HELLO, &json!({"v": 1}));
    assert_eq!(client.read_to_close(), b"");
}

#[test]
fn a_client_cannot_pass_a_descriptor_to_the_host_before_or_after_the_accept() {
    require_sandbox!();
    use std::os::fd::AsRawFd;
    // Where the kernel has no SO_PASSRIGHTS (before 6.16) there is no
    // refusal to see: the refused peer's drain is what remains there.
    let (probe, _) = std::os::unix::net::UnixStream::pair().unwrap();
    if !cordon_passed_fds::refuse_passed_descriptors(std::os::fd::AsFd::as_fd(&probe)) {
        eprintln!("SO_PASSRIGHTS unknown to this kernel: nothing to check");
        return;
    }
    let other = nix_uid().wrapping_add(54_321);
    for (overrides, allowed) in [(json!({}), true), (json!({"allowUids": [other]}), false)] {
        let host = HostProcess::start("host-rights", overrides);
        let client = host.connect();
        let devnull = std::fs::File::open("/dev/null").unwrap();
        let fds = [devnull.as_raw_fd()];
        for flags in [
            nix::sys::socket::MsgFlags::empty(),
            nix::sys::socket::MsgFlags::MSG_OOB,
        ] {
            let sent = nix::sys::socket::sendmsg::<()>(
                client.stream.as_raw_fd(),
                &[std::io::IoSlice::new(b"x")],
                &[nix::sys::socket::ControlMessage::ScmRights(&fds)],
                flags,
                None,
            );
            // A refused peer may find its connection already closed: then
            // nothing was queued either.
            let closed = [nix::errno::Errno::EPIPE, nix::errno::Errno::ECONNRESET];
            match sent {
                Err(nix::errno::Errno::EPERM) => {}
                Err(e) if !allowed && closed.contains(&e) => {}
                other => panic!("{flags:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_wrong_or_missing_token_is_closed_silently_and_the_right_one_names_its_tenant() {
    require_sandbox!();
    let digest: String = sha2::Sha256::digest(b"right-token")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let host = HostProcess::start("host-token", json!({"tokens": {digest: "acme"}}));
    for hello in [json!({"v": 1, "token": "wrong-token"}), json!({"v": 1})] {
        let mut client = host.connect();
        client.send_json(HELLO, &hello);
        assert_eq!(client.read_to_close(), b"", "{hello}");
    }
    let mut client = host.connect();
    client.send_json(HELLO, &json!({"v": 1, "token": "right-token"}));
    let welcome = client.expect_json(WELCOME);
    assert_eq!(welcome["tenant"], "acme");
    assert_eq!(welcome["host"]["auth"], "peercred+token");
}

#[test]
fn a_silent_client_is_closed_after_the_first_frame_bound() {
    require_sandbox!();
    let host = HostProcess::start("host-silent", json!({"handshake": {"firstFrameMs": 300}}));
    let mut client = host.connect();
    let began = Instant::now();
    assert_eq!(client.read_to_close(), b"");
    // Closed by the bound, not by the test's own read timeout (20 s).
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
}

#[test]
fn an_oversize_frame_closes_the_connection_before_its_payload_is_read() {
    require_sandbox!();
    let host = HostProcess::start("host-oversize", json!({}));
    // Before hello: a 2 MiB hello header alone.
    let mut client = host.connect();
    let mut head = ((2 << 20) as u32).to_be_bytes().to_vec();
    head.push(HELLO);
    std::io::Write::write_all(&mut client.stream, &head).unwrap();
    assert_eq!(client.read_to_close(), b"");
    // After welcome: a data frame one byte over 64 KiB, header only.
    let (mut client, _) = host.session();
    let mut head = ((64 * 1024 + 2) as u32).to_be_bytes().to_vec();
    head.push(DATA);
    std::io::Write::write_all(&mut client.stream, &head).unwrap();
    assert_eq!(client.read_to_close(), b"");
}

#[test]
fn an_unknown_program_and_a_policy_with_extra_binds_are_refused_with_their_codes() {
    require_sandbox!();
    let host = HostProcess::start("host-refuse", json!({}));
    let (mut client, _) = host.session();
    client.send_json(
        SPAWN,
        &json!({"program": "/bin/sh", "args": [], "options": {"policy": read_only()}}),
    );
    let refused = client.expect_json(REFUSED);
    assert_eq!(refused["code"], "ERR_CORDON_INVALID_OPTIONS", "{refused}");
    assert!(client.recv().is_none(), "the host closes after refused");
    let (mut client, _) = host.session();
    let mut policy = read_only();
    policy["filesystem"]["extra"] = json!([{"path": "/etc", "access": "read"}]);
    let refused = client.spawn(&["-c", "true"], json!({"policy": policy}));
    assert_eq!(refused["code"], "ERR_CORDON_UNSUPPORTED", "{refused}");
    // The launcher's own validation answers the rest (same codes as local).
    let (mut client, _) = host.session();
    let mut policy = read_only();
    policy["surprise"] = json!(true);
    let refused = client.spawn(&["-c", "true"], json!({"policy": policy}));
    assert_eq!(refused["code"], "ERR_CORDON_POLICY_INVALID", "{refused}");
}

#[test]
fn a_tenant_cannot_choose_the_hosts_own_uid_or_private_addresses() {
    require_sandbox!();
    let host = HostProcess::start("host-reach", json!({}));
    let (mut client, _) = host.session();
    let mut policy = read_only();
    policy["process"]["identity"] = json!("shared-with-provider");
    let refused = client.spawn(&["-c", "true"], json!({"policy": policy}));
    assert_eq!(refused["code"], "ERR_CORDON_UNSUPPORTED", "{refused}");
    assert!(refused["message"]
        .as_str()
        .unwrap_or_default()
        .contains("process.identity"));
    let (mut client, _) = host.session();
    let mut policy = read_only();
    policy["network"] = json!({"mode": "mediated", "allow": [
        {"protocol": "tcp", "host": "127.0.0.1", "port": 80, "allowPrivateAddresses": true}]});
    let refused = client.spawn(&["-c", "true"], json!({"policy": policy}));
    assert_eq!(refused["code"], "ERR_CORDON_UNSUPPORTED", "{refused}");
    assert!(refused["message"]
        .as_str()
        .unwrap_or_default()
        .contains("allowPrivateAddresses"));
}

#[test]
fn an_upload_outside_the_workspace_is_refused_and_nothing_is_written() {
    require_sandbox!();
    let host = HostProcess::start("host-upload", json!({}));
    let name = format!("escape-{}.txt", std::process::id());
    let outside = std::env::temp_dir().join(&name);
    let tries = [
        format!("../{name}"),
        outside.to_string_lossy().into_owned(),
        format!("a/../../{name}"),
    ];
    for path in &tries {
        let (mut client, _) = host.session();
        client.send_json(UPLOAD, &json!({"path": path, "data": "eA=="}));
        let refused = client.expect_json(REFUSED);
        assert_eq!(
            refused["code"], "ERR_CORDON_INVALID_OPTIONS",
            "{path}: {refused}"
        );
    }
    assert!(!outside.exists(), "{} was written", outside.display());
    let mut dirs = vec![host.dir.path().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            assert_ne!(
                entry.file_name().to_string_lossy(),
                name,
                "written in {}",
                dir.display()
            );
            if entry.file_type().unwrap().is_dir() {
                dirs.push(entry.path());
            }
        }
    }
}

#[test]
fn uploads_whose_paths_create_directories_count_each_directory_against_the_entry_bound() {
    require_sandbox!();
    let host = HostProcess::start("host-inodes", json!({}));
    let (mut client, _) = host.session();
    // 330 empty files, each 31 entries deep (the most a 32-part path makes):
    // 10 230 inodes, 330 files. Counting files alone let a session create
    // ~2000 directories per 4 KiB frame, 20 million per session (round 6,
    // R6-1); a path of more than 32 parts is refused on its own.
    let deep = "a/".repeat(29);
    for i in 0..330 {
        client.send_json(
            UPLOAD,
            &json!({"path": format!("f{i}/{deep}x"), "data": ""}),
        );
    }
    let answer = client.spawn(&["-c", "true"], json!({"policy": read_only()}));
    assert_eq!(answer["code"], "ERR_CORDON_INVALID_OPTIONS", "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(message.contains("10000 files and directories"), "{message}");
}

#[test]
fn a_second_host_on_a_live_socket_is_refused_and_sigterm_stops_sandboxes_and_removes_the_socket() {
    require_sandbox!();
    let mut host = HostProcess::start("host-stop", json!({}));
    // Its own stateDir: on the first host's, the state lock refuses it
    // before the socket is looked at (host_recovery.rs).
    let mut second_config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(host.dir.path().join("host.json")).unwrap()).unwrap();
    second_config["stateDir"] = json!(host.dir.path().join("state-2"));
    let config = host.dir.path().join("second.json");
    std::fs::write(&config, second_config.to_string()).unwrap();
    let second = finish_within(
        std::process::Command::new(support::CORDON)
            .args(["host", "--config"])
            .arg(&config)
            .stderr(std::process::Stdio::piped()),
    );
    assert_eq!(second.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&second.stderr).contains("another host is listening"));
    let (_client, pid) = running_sleeper(&host, "stopped-1");
    // Our own unreaped child: the pid cannot have been reused.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(host.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let status = host.child.wait().expect("wait host");
    assert_eq!(status.code(), Some(0));
    assert!(
        !alive(pid),
        "the host exited with its sandbox {pid} running"
    );
    assert!(!host.socket.exists(), "the socket is removed");
    assert_eq!(host.kept_receipt("stopped-1")["stop"]["reason"], "signal");
}

#[test]
fn connections_past_the_handshake_cap_are_closed_without_a_byte() {
    require_sandbox!();
    let handshake = json!({"maxConcurrent": 1, "firstFrameMs": 5000});
    let host = HostProcess::start("host-handshakes", json!({"handshake": handshake}));
    // The first connection holds the one handshake slot, silently.
    let holder = host.connect();
    std::thread::sleep(Duration::from_millis(200));
    let mut client = host.connect();
    client.send_json(HELLO, &json!({"v": 1}));
    assert_eq!(client.read_to_close(), b"");
    drop(holder);
    std::thread::sleep(Duration::from_millis(200));
    let (_client, welcome) = host.session();
    assert_eq!(welcome["v"], 1);
}

#[test]
fn a_stale_socket_is_replaced_and_a_path_that_is_not_a_socket_never_is() {
    require_sandbox!();
    let mut host = HostProcess::start("host-stale", json!({}));
    // Our own unreaped child: the pid cannot have been reused.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(host.child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    host.child.wait().expect("wait host");
    assert!(host.socket.exists(), "a killed host leaves its socket");
    let config = host.dir.path().join("host.json");
    let mut again = std::process::Command::new(support::CORDON)
        .args(["host", "--config"])
        .arg(&config)
        .spawn()
        .expect("restart");
    let until = Instant::now() + Duration::from_secs(20);
    let mut stream = loop {
        if let Ok(stream) = std::os::unix::net::UnixStream::connect(&host.socket) {
            break stream;
        }
        assert!(Instant::now() < until, "the new host never listened");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::io::Write::write_all(&mut stream, b"\0\0\0\x08\x01{\"v\":1}").unwrap();
    let mut head = [0u8; 5];
    std::io::Read::read_exact(&mut stream, &mut head).unwrap();
    assert_eq!(head[4], WELCOME);
    // Our own unreaped child: the pid cannot have been reused.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(again.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    assert_eq!(again.wait().unwrap().code(), Some(0));
    // A regular file at the path: refused, left as it was.
    std::fs::write(&host.socket, b"keep me").unwrap();
    let out = finish_within(
        std::process::Command::new(support::CORDON)
            .args(["host", "--config"])
            .arg(&config)
            .stderr(std::process::Stdio::piped()),
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a socket"));
    assert_eq!(std::fs::read(&host.socket).unwrap(), b"keep me");
}

#[test]
fn help_lists_host_a_usage_error_exits_2_and_an_invalid_configuration_exits_125() {
    let help = std::process::Command::new(support::CORDON)
        .arg("--help")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("cordon host --config FILE"));
    let usage = std::process::Command::new(support::CORDON)
        .arg("host")
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("host.json");
    let plain_tcp = json!({"listen": {"tcp": "127.0.0.1:7443"},
                           "stateDir": dir.path(), "programs": {}});
    std::fs::write(&config, plain_tcp.to_string()).unwrap();
    let (status, stderr) = start_refused(&config);
    assert_eq!(status, Some(125));
    assert!(
        stderr.contains("config.listen.tcp") && stderr.contains("plain TCP is refused"),
        "{stderr}"
    );
}
