//! The fetch extension's frames and per-run count, apart from the bridge
//! that installs `fetch` (`fetch_bridge.rs`): `tool_bridge.rs` writes a
//! queued `fetch.request` and settles a fetch from its `fetch.result` with
//! these, so neither bridge needs the other's module for them.

use std::cell::Cell;

use base64::Engine;
use rquickjs::{ArrayBuffer, Ctx, Object, Value};
use serde_json::{json, Map, Value as Json};

use crate::canonical_json;
use crate::execute::PROTOCOL_VERSION;

/// How many fetches this execution may make, and how many it made.
pub struct FetchCount {
    pub(crate) max_requests: u64,
    pub(crate) accepted: Cell<u64>,
}

impl FetchCount {
    pub fn new(max_requests: u64) -> Self {
        FetchCount {
            max_requests,
            accepted: Cell::new(0),
        }
    }
}

/// Why a `fetch.result` cannot settle its fetch.
pub enum BadFetchReply {
    /// The frame breaks the contract: the protocol latch is set.
    Malformed,
    /// QuickJS failed building the value (out of memory): rejects the fetch.
    Js(rquickjs::Error),
}

/// A `fetch.request` frame.
pub fn request_frame(id: u64, request: &Json) -> Json {
    json!({"id": id, "request": request, "type": "fetch.request", "version": PROTOCOL_VERSION})
}

/// The value a fetch's native promise resolves with: `{ok:true, response}`
/// with `response.body` an `ArrayBuffer`, or `{ok:false, error}` (fetch.js
/// turns it into the `TypeError`).
pub fn reply_value<'js>(
    ctx: &Ctx<'js>,
    reply: &Map<String, Json>,
) -> Result<Value<'js>, BadFetchReply> {
    let js = BadFetchReply::Js;
    let out = Object::new(ctx.clone()).map_err(js)?;
    if reply.get("ok") != Some(&Json::Bool(true)) {
        let error = match reply.get("error") {
            Some(error @ Json::Object(_)) => error.clone(),
            _ => json!({"message": "unknown error"}),
        };
        out.set("ok", false).map_err(js)?;
        let error = ctx.json_parse(canonical_json::encode(&error)).map_err(js)?;
        out.set("error", error).map_err(js)?;
        return Ok(out.into_value());
    }
    let Some(Json::Object(response)) = reply.get("response") else {
        return Err(BadFetchReply::Malformed);
    };
    let mut fields = response.clone();
    let body = match fields.remove("body") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::String(text)) => base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|_| BadFetchReply::Malformed)?,
        Some(_) => return Err(BadFetchReply::Malformed),
    };
    let response = ctx
        .json_parse(canonical_json::encode(&Json::Object(fields)))
        .map_err(js)?;
    let Some(object) = response.as_object() else {
        return Err(BadFetchReply::Malformed);
    };
    object
        .set("body", ArrayBuffer::new(ctx.clone(), body).map_err(js)?)
        .map_err(js)?;
    out.set("ok", true).map_err(js)?;
    out.set("response", response).map_err(js)?;
    Ok(out.into_value())
}
