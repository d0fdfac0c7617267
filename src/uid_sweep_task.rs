//! The launcher's uid sweep (`cordon_launcher::host::uid_sweep`) for JS:
//! sessions kill the orphans of their owner uid (a bwrap namespace init a
//! killed provider left blocked) before a workspace is reused or removed,
//! off the event loop (a round waits for the killed processes to exit).

use std::time::Duration;

use cordon_launcher::host::userns_chain;
use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;

/// Code of a sweep that was refused or left a process alive.
const UID_SWEEP_FAILED: &str = "ERR_CORDON_SESSION_SWEEP_FAILED";
/// How long a sweep keeps killing before it reports what is still alive.
const SWEEP_DEADLINE: Duration = Duration::from_secs(5);

pub struct KillUid {
    uid: u32,
    within: Option<u64>,
}

impl Task for KillUid {
    type Output = u32;
    type JsValue = u32;

    fn compute(&mut self) -> napi::Result<u32> {
        cordon_launcher::host::uid_sweep::kill_uid(self.uid, self.within, SWEEP_DEADLINE).map_err(
            |e| {
                napi::Error::new(
                    napi::Status::GenericFailure,
                    format!("{UID_SWEEP_FAILED}: {e}"),
                )
            },
        )
    }

    fn resolve(&mut self, _env: Env, output: u32) -> napi::Result<u32> {
        Ok(output)
    }
}

/// Kills every process whose real uid is `uid` — a session owner uid of this
/// provider only (root's workspace-owner range, or the owner half of a
/// non-root provider's subordinate uids, each but its first: never root,
/// this process's own uid or a host account's, round 8 R8-7) — and resolves with how many it signalled once none is
/// left; rejects with a message starting `ERR_CORDON_SESSION_SWEEP_FAILED:`.
/// `nsId`: a non-root session holder's user namespace, its `NS_GET_ID` as a
/// decimal string (userNamespaceId): only processes in it or below it are
/// killed. Anything but such a string is refused before a process is looked
/// at (never read as "no scope": that would sweep the whole uid).
#[napi]
pub fn kill_uid_processes(uid: u32, ns_id: Option<String>) -> napi::Result<AsyncTask<KillUid>> {
    let within = match ns_id {
        None => None,
        Some(text) => Some(userns_chain::parse_id(&text).ok_or_else(|| {
            napi::Error::new(
                napi::Status::InvalidArg,
                format!("{UID_SWEEP_FAILED}: not a namespace id: {text:?}"),
            )
        })?),
    };
    Ok(AsyncTask::new(KillUid { uid, within }))
}

/// The `NS_GET_ID` of `pid`'s user namespace as a decimal string (a JSON
/// number would lose precision above 2^53): the identity a non-root
/// session record keeps for its holder (round 10, R10-1). Null when it is
/// not known: a kernel without `NS_GET_ID` (before 6.18), or the process
/// gone or not ours to inspect.
#[napi]
pub fn user_namespace_id(pid: u32) -> Option<String> {
    match userns_chain::id_of(pid) {
        userns_chain::NsId::Id(id) => Some(id.to_string()),
        userns_chain::NsId::Unsupported | userns_chain::NsId::Unknown => None,
    }
}
