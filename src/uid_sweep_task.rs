//! The launcher's uid sweep (`cordon_launcher::host::uid_sweep`) for JS:
//! sessions kill the orphans of their owner uid (a bwrap namespace init a
//! killed provider left blocked) before a workspace is reused or removed,
//! off the event loop (a round waits for the killed processes to exit).

use std::time::Duration;

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
/// `userns`: a non-root session holder's user namespace (the inode of
/// `/proc/<holder>/ns/user`): only processes in it or below it are killed.
#[napi]
pub fn kill_uid_processes(uid: u32, userns: Option<i64>) -> AsyncTask<KillUid> {
    let within = userns.and_then(|ino| u64::try_from(ino).ok());
    AsyncTask::new(KillUid { uid, within })
}
