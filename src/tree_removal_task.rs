//! The launcher's bounded tree removal (`cordon_launcher::host::tree_removal`)
//! for JS: sessions remove a workspace a sandbox wrote with it, off the
//! event loop (a planted tree may hold as many entries as its quota's
//! inodes allow).

use std::path::PathBuf;

use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;

/// JavaScript's largest exact integer: a budget past it is not a count.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
/// Code of a removal that stopped (a step failed or `..` left the tree).
const TREE_REMOVAL_FAILED: &str = "ERR_CORDON_TREE_REMOVAL_FAILED";

/// What the walk removes.
enum Removal {
    /// The directory and everything below it.
    Tree,
    /// Everything below the directory (a mount point: only emptied).
    Contents,
}

pub struct RemoveTree {
    path: PathBuf,
    removal: Removal,
    max_entries: u64,
}

impl Task for RemoveTree {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        let result = match self.removal {
            Removal::Tree => cordon_launcher::host::tree_removal::remove_tree_within(
                &self.path,
                self.max_entries,
            ),
            Removal::Contents => {
                cordon_launcher::host::tree_removal::empty_tree(&self.path, self.max_entries)
            }
        };
        result.map_err(|e| {
            napi::Error::new(
                napi::Status::GenericFailure,
                format!("{TREE_REMOVAL_FAILED}: {e}"),
            )
        })
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}

/// An entry budget from JS: a positive safe integer, else unbounded.
fn budget(max_entries: Option<f64>) -> u64 {
    match max_entries {
        Some(n) if (1.0..=MAX_SAFE_INTEGER).contains(&n) => n as u64,
        _ => u64::MAX,
    }
}

/// Removes `path` and everything below it without following any link,
/// visiting at most `maxEntries` entries (default: no bound). Resolves
/// when done; rejects with a message starting
/// `ERR_CORDON_TREE_REMOVAL_FAILED:`.
#[napi]
pub fn remove_tree(path: String, max_entries: Option<f64>) -> AsyncTask<RemoveTree> {
    AsyncTask::new(RemoveTree {
        path: PathBuf::from(path),
        removal: Removal::Tree,
        max_entries: budget(max_entries),
    })
}

/// Empties the directory `path` (kept) like `removeTree`.
#[napi]
pub fn empty_tree(path: String, max_entries: Option<f64>) -> AsyncTask<RemoveTree> {
    AsyncTask::new(RemoveTree {
        path: PathBuf::from(path),
        removal: Removal::Contents,
        max_entries: budget(max_entries),
    })
}
