//! One connection, one sandbox (docs/remote.md): the handshake, the
//! uploads, `spawn` (admission, validation, clamps, launch), the relay and
//! `exit`. Every transport ends here: an accepted stream and its [`Peer`].
//! Steps, each bounded:
//! 1. a handshake slot (the concurrency cap, the source's share), taken
//!    by the transport at the accept, or a silent close;
//! 2. `hello` within the first-frame bound, its token checked — any
//!    failure is a silent close (authentication never says why);
//! 3. `welcome`; `upload`* then `spawn` within the upload-phase bound;
//! 4. admission (cap, tenant quota) → `refused` with `retryAfterMs`;
//! 5. validate + clamp + launch → `started` | `refused`;
//! 6. relay (relay.rs) → receipt kept (receipt_store.rs) → `exit`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::Receiver;
use tokio::time::timeout;

use super::events::Refusal;
use super::exit_bound;
use super::frame::{self, Frame, FrameError, Kind};
use super::handshake_slots::HandshakeSlot;
use super::launch_bridge;
use super::peer::Peer;
use super::relay::{self, Relay};
use super::relay_writer::Outgoing;
use super::session_log::{Counted, Outcome, SessionRecord};
use super::spawn_request::{self, SpawnRefusal};
use super::upload::{UploadError, Workspace};
use super::write_stall::StallBounded;
use super::{auth, receipt_index, receipt_store, recovery, Host};

type Frames = Receiver<Result<Frame, FrameError>>;

/// Serves one accepted connection to its end. `permit`: the handshake slot
/// the transport took for it at the accept (handshake_slots.rs).
pub async fn serve<S>(stream: S, peer: Peer, host: Arc<Host>, permit: HandshakeSlot)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut record = SessionRecord::new(
        Arc::clone(&host.log),
        peer.transport.as_str(),
        peer.address.clone(),
    );
    let stream = Counted::new(stream, Arc::clone(&record.bytes));
    let (mut reader, writer) = tokio::io::split(stream);
    // Every write of the session: a client that takes nothing for the
    // bound is gone (write_stall.rs).
    let stall = Duration::from_millis(host.config.liveness.write_stall_ms);
    let mut writer = StallBounded::new(writer, stall);
    let mut bound = Duration::from_millis(host.config.handshake.first_frame_ms);
    if let Some(by) = peer.first_frame_by {
        bound = bound.min(by.saturating_duration_since(Instant::now()));
    }
    let first = timeout(bound, frame::read_frame(&mut reader)).await;
    let who = match first {
        Ok(Ok(frame)) => check_hello(&frame, &peer, &host),
        _ => None,
    };
    let Some(who) = who else {
        host.events.handshake_failed();
        // The line is queued before the connection closes: a client that
        // sees the close knows its failure is accounted (counted or
        // written), which the rate-limit test relies on.
        drop(record);
        return;
    };
    record.tenant = Some(who.tenant.clone());
    record.auth = Some(who.auth.as_str());
    record.outcome = Outcome::Closed;
    let (mut frames, reader_task) = relay::spawn_reader(reader);
    let session = async {
        let welcome = welcome(&host, &peer, &who);
        if send_json(&mut writer, Kind::Welcome, &welcome)
            .await
            .is_err()
        {
            return;
        }
        let phase = Duration::from_millis(host.config.handshake.upload_phase_ms);
        let prepared = timeout(
            phase,
            prepare(&mut frames, &mut writer, &host, &who, &mut record),
        )
        .await;
        drop(permit);
        let Ok(Some((spawn, workspace))) = prepared else {
            return;
        };
        run(
            spawn,
            workspace,
            (frames, writer),
            &host,
            (&peer, &who),
            &mut record,
        )
        .await;
    };
    session.await;
    // Wait (bounded) for the client to close after `exit`, draining what it
    // still sends (relay::spawn_reader); then the socket goes.
    let abort = reader_task.abort_handle();
    if timeout(EXIT_LINGER, reader_task).await.is_err() {
        abort.abort();
    }
}

/// How long the host keeps reading a client that has its `exit` (or was
/// refused) before it closes the connection: enough for the client to read
/// the last frame and close first; nothing else is held meanwhile.
const EXIT_LINGER: Duration = Duration::from_secs(2);

/// Step 2: a `hello` of version 1 whose token (when the host has tokens)
/// names a tenant. `None`: close silently.
fn check_hello(frame: &Frame, peer: &Peer, host: &Host) -> Option<TenantAuth> {
    if frame.kind != Kind::Hello {
        return None;
    }
    let value: Value = serde_json::from_slice(&frame.payload).ok()?;
    let object = value.as_object()?;
    if object.keys().any(|k| k != "v" && k != "token") || object.get("v")? != &json!(1) {
        return None;
    }
    let token = match object.get("token") {
        Some(Value::String(token)) => Some(token.as_str()),
        Some(_) => return None,
        None => None,
    };
    if host.config.tokens.is_empty() {
        return Some(TenantAuth {
            tenant: peer.tenant.clone(),
            auth: peer.auth,
        });
    }
    let tenant = auth::tenant_of(&host.config.tokens, token?)?;
    // A certificate names its tenant; another tenant's token cannot change it.
    if peer.auth == auth::AuthMode::Mtls && tenant != peer.tenant {
        return None;
    }
    Some(TenantAuth {
        tenant,
        auth: peer.auth.with_token(),
    })
}

/// `exit.signature` over the receipt (signing.rs), when the host has a key
/// and the run left a receipt.
fn sign(host: &Host, frame: &mut Value) {
    let Some(signer) = &host.signer else { return };
    let signature = match frame.get("receipt") {
        Some(receipt @ Value::Object(map)) if !map.is_empty() => signer.sign(receipt),
        _ => return,
    };
    frame["signature"] = Value::String(signature);
}

/// Who the session runs for, once authenticated.
#[derive(Debug, Clone)]
pub struct TenantAuth {
    pub tenant: String,
    pub auth: auth::AuthMode,
}

fn welcome(host: &Host, peer: &Peer, who: &TenantAuth) -> Value {
    let mut welcome = welcome_fields(host, peer, who);
    if let Some(signer) = &host.signer {
        welcome["host"]["publicKey"] = json!(signer.public_key_pem());
    }
    welcome
}

fn welcome_fields(host: &Host, peer: &Peer, who: &TenantAuth) -> Value {
    let c = &host.config.ceilings;
    json!({
        "v": 1,
        "host": {
            "id": host.config.host_id,
            "version": env!("CARGO_PKG_VERSION"),
            "transport": peer.transport.as_str(),
            "auth": who.auth.as_str(),
        },
        "tenant": who.tenant,
        "ceilings": {
            "deadlineMs": c.deadline_ms,
            "memoryBytes": c.memory_bytes,
            "processes": c.processes,
            "openFiles": c.open_files,
            "cpuSeconds": c.cpu_seconds,
            "fileSizeBytes": c.file_size_bytes,
            "networkStreams": c.network[0],
            "networkConcurrentStreams": c.network[1],
            "networkBytesOut": c.network[2],
            "networkBytesIn": c.network[3],
            "uploadBytes": c.upload_bytes,
            "stopMs": c.stop_ms,
        },
        "programs": host.config.programs.keys().collect::<Vec<_>>(),
    })
}

async fn send_json<W: AsyncWrite + Unpin>(
    writer: &mut W,
    kind: Kind,
    value: &Value,
) -> std::io::Result<()> {
    frame::write_frame(writer, kind, value.to_string().as_bytes()).await
}

async fn refuse<W: AsyncWrite + Unpin>(
    record: &mut SessionRecord,
    writer: &mut W,
    code: &str,
    message: &str,
    retry: Option<u64>,
) {
    record.outcome = Outcome::Refused;
    record.refused = Some(code.to_string());
    let mut body = json!({"code": code, "message": message});
    if let Some(ms) = retry {
        body["retryAfterMs"] = json!(ms);
    }
    let _ = send_json(writer, Kind::Refused, &body).await;
    let _ = writer.shutdown().await;
}

/// Step 3: uploads until `spawn`; `None` when the session ends here.
async fn prepare<W: AsyncWrite + Unpin>(
    frames: &mut Frames,
    writer: &mut W,
    host: &Host,
    who: &TenantAuth,
    record: &mut SessionRecord,
) -> Option<(Value, Workspace)> {
    let name = format!(
        "ws-{}",
        cordon_launcher::host::process_identity::random_hex(12).ok()?
    );
    // Made at the first upload, on the blocking pool (upload.rs).
    let mut workspace = Workspace::new(&host.workspaces, &name, host.config.ceilings.upload_bytes);
    loop {
        let frame = frames.recv().await?.ok()?;
        match frame.kind {
            Kind::Upload => {
                // File-system work goes to a blocking thread: on the
                // runtime's few workers it stalled every other session's
                // handshake and relay (black-box round 6, finding 1). If the
                // upload phase times out meanwhile, the task still owns the
                // workspace and its drop removes it.
                let payload = frame.payload;
                let added = tokio::task::spawn_blocking(move || {
                    let added = match serde_json::from_slice::<Value>(&payload) {
                        Ok(v) => workspace.add(&v),
                        Err(e) => Err(UploadError::Invalid(e.to_string())),
                    };
                    (workspace, added)
                })
                .await
                .ok()?;
                workspace = added.0;
                if let Err(e) = added.1 {
                    let code = match e {
                        UploadError::Workspace(_) => "ERR_CORDON_SPAWN_FAILED",
                        _ => "ERR_CORDON_INVALID_OPTIONS",
                    };
                    refuse(record, writer, code, &e.to_string(), None).await;
                    return None;
                }
            }
            Kind::Spawn => {
                let Ok(value) = serde_json::from_slice::<Value>(&frame.payload) else {
                    refuse(
                        record,
                        writer,
                        "ERR_CORDON_INVALID_OPTIONS",
                        "spawn: not valid JSON",
                        None,
                    )
                    .await;
                    return None;
                };
                return Some((value, workspace));
            }
            Kind::Ping if frame.payload.len() == 8 => {
                frame::write_frame(writer, Kind::Pong, &frame.payload)
                    .await
                    .ok()?;
            }
            Kind::ReceiptQuery if workspace.is_empty() => {
                record.outcome = Outcome::ReceiptQuery;
                answer_query(&frame.payload, writer, host, who).await;
                return None;
            }
            // Anything else here breaks the order: close.
            _ => return None,
        }
    }
}

/// `receipt-query` → `receipts` (this tenant's receipts of the id, newest
/// first), then the host closes. A malformed query is a silent close.
async fn answer_query<W: AsyncWrite + Unpin>(
    payload: &[u8],
    writer: &mut W,
    host: &Host,
    who: &TenantAuth,
) {
    let query: Option<String> = serde_json::from_slice::<Value>(payload)
        .ok()
        .and_then(|v| v.get("invocationId")?.as_str().map(str::to_string));
    let Some(id) = query else { return };
    let (dir, tenant) = (host.receipts.clone(), who.tenant.clone());
    // After an upgrade, until the flat layout is moved (mod.rs).
    let moving = host.flat_move.load(std::sync::atomic::Ordering::Acquire);
    let found = tokio::task::spawn_blocking(move || match moving {
        true => receipt_index::find_during_move(&dir, &id, &tenant),
        false => receipt_index::find(&dir, &id, &tenant),
    })
    .await;
    // Newest first, as many as one control frame holds.
    let mut receipts = Vec::new();
    let mut room = frame::MAX_CONTROL_BYTES - 64;
    for receipt in found.unwrap_or_default() {
        let size = receipt.to_string().len() + 1;
        if size > room {
            break;
        }
        room -= size;
        receipts.push(receipt);
    }
    let _ = send_json(writer, Kind::Receipts, &json!({ "receipts": receipts })).await;
    let _ = writer.shutdown().await;
}

/// A launched sandbox, as `started` reports it.
struct Running {
    launched: launch_bridge::Launched,
    /// On disk until the receipt is kept (recovery.rs).
    marker: recovery::Marker,
    invocation_id: String,
    clamped: Value,
}

/// Steps 4–6.
async fn run<W: AsyncWrite + Unpin + Send + 'static>(
    spawn: Value,
    workspace: Workspace,
    (frames, mut writer): (Frames, W),
    host: &Host,
    (peer, who): (&Peer, &TenantAuth),
    record: &mut SessionRecord,
) {
    let slot = match host.admissions.admit(&who.tenant) {
        Ok(slot) => slot,
        Err(reason) => {
            host.events.refused(reason);
            let message = match reason {
                Refusal::TenantQuota => "this tenant's session quota is reached",
                _ => "the host's session cap is reached",
            };
            let retry = Some(host.config.admission.retry_after_ms);
            return refuse(record, &mut writer, "ERR_CORDON_HOST_BUSY", message, retry).await;
        }
    };
    let running = match launch(&spawn, &workspace, host, (peer, who)).await {
        Ok(running) => running,
        Err((reason, code, message)) => {
            host.events.refused(reason);
            return refuse(record, &mut writer, &code, &message, None).await;
        }
    };
    host.events.session_started();
    let started = json!({
        "pid": running.launched.handle.pid,
        "invocationId": running.invocation_id,
        "clamped": running.clamped,
    });
    let _ = send_json(&mut writer, Kind::Started, &started).await;
    let bound = Duration::from_millis(host.config.liveness.pong_timeout_ms);
    let relayed = Relay {
        outgoing: Outgoing::spawn(writer, bound),
        handle: Arc::clone(&running.launched.handle),
        events: running.launched.events,
        frames,
        liveness: host.config.liveness,
        shutdown: host.shutdown.subscribe(),
    }
    .run()
    .await;
    let remote = receipt_store::Remote {
        host,
        peer,
        who,
        clamped: &running.clamped,
    };
    let mut exit = receipt_store::settle(relayed.outcome, &remote);
    // The client's bytes outside the receipt (round 17w, R17w-1).
    if let Some(frame) = exit.frame.as_object_mut() {
        frame.insert(
            "inbound".into(),
            serde_json::json!({
                "received": relayed.inbound.received,
                "dropped": relayed.inbound.dropped,
            }),
        );
    }
    // Kept (fsynced) before `exit` says anything, and only then the marker
    // goes; both on the blocking pool.
    receipt_store::keep_then_release(
        host.receipts.clone(),
        running.invocation_id.clone(),
        exit.receipt.take(),
        running.marker,
    )
    .await;
    exit_bound::fit(&mut exit.frame, exit_bound::EXIT_BUDGET);
    record.runs += 1;
    record.outcome = Outcome::Ran;
    let program = spawn.get("program").and_then(Value::as_str).unwrap_or("");
    let error = exit.frame.pointer("/error/code").and_then(Value::as_str);
    let receipt = exit.frame.get("receipt").cloned().unwrap_or(Value::Null);
    record.run_line(program, &receipt, error);
    sign(host, &mut exit.frame);
    host.events.session_ended(exit.stop_reason.as_deref());
    // The sandbox is gone and its receipt kept: its place is free before
    // `exit` says so, so a client that starts its next run on `exit` is
    // never refused for this one.
    drop(slot);
    if let Some(mut writer) = relayed.writer {
        let _ = timeout(bound, async {
            send_json(&mut writer, Kind::Exit, &exit.frame).await?;
            writer.shutdown().await
        })
        .await;
    }
    drop(workspace);
}

/// Step 5: validate, clamp, name the run, launch. The error is what
/// `refused` says.
async fn launch(
    spawn: &Value,
    workspace: &Workspace,
    host: &Host,
    (peer, who): (&Peer, &TenantAuth),
) -> Result<Running, (Refusal, String, String)> {
    let began = Instant::now();
    let ws_path = (!workspace.is_empty()).then(|| workspace.path().to_string_lossy().into_owned());
    let mut spawn = spawn_request::build(spawn, ws_path.as_deref(), &host.config).map_err(
        |SpawnRefusal { code, message }| (Refusal::Invalid, code.as_str().into(), message),
    )?;
    // Named here, not by the launcher, so that `started` can report it.
    let invocation_id = match spawn.request.invocation_id.clone() {
        Some(id) => id,
        None => cordon_launcher::host::process_identity::random_hex(16).map_err(|e| {
            let message = format!("an invocation id: {e}");
            (
                Refusal::LaunchFailed,
                "ERR_CORDON_SPAWN_FAILED".into(),
                message,
            )
        })?,
    };
    spawn.request.invocation_id = Some(invocation_id.clone());
    let clamped = Value::Object(spawn.clamped);
    let section = receipt_store::Remote {
        host,
        peer,
        who,
        clamped: &clamped,
    }
    .section();
    let marker =
        recovery::Marker::write_off_runtime(host.runs.clone(), invocation_id.clone(), section)
            .await
            .map_err(|e| {
                let message = format!("record the run in stateDir/runs: {e}");
                (
                    Refusal::LaunchFailed,
                    "ERR_CORDON_SPAWN_FAILED".into(),
                    message,
                )
            })?;
    let launched = launch_bridge::launch(spawn.request).await.map_err(|e| {
        let code = match &e {
            launch_bridge::BridgeError::Launch(e) => e.code().as_str(),
            launch_bridge::BridgeError::Join(_) => "ERR_CORDON_SPAWN_FAILED",
        };
        (Refusal::LaunchFailed, code.to_string(), e.to_string())
    })?;
    host.events.launched(began.elapsed());
    Ok(Running {
        launched,
        marker,
        invocation_id,
        clamped,
    })
}
