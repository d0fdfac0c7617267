//! The standard, side-effect-free web globals (docs/runner.md, "Globals"):
//! `structuredClone`, `TextEncoder`/`TextDecoder`, `atob`/`btoa`, `URL`/
//! `URLSearchParams`, `crypto.getRandomValues`/`randomUUID`, `DOMException`,
//! `Intl` and the `toLocale*` methods (ICU4X, [`crate::intl`]) — and, in extension mode only,
//! `performance.now` (a v1 world has no `performance`).
//!
//! Most of it is JavaScript (`web_globals.js`, and `intl/intl.js` for
//! `Intl`). Building it costs about as much as the rest of the world, so
//! the world only announces the names (accessors defined here, [`install`])
//! and a script is compiled and run on the first read of any of its names;
//! it replaces each of its announced accessors by its value. An assignment before that defines the name as the code
//! wants (and the script leaves it so).
//! What JavaScript cannot do safely or quickly comes from here, through
//! native helpers handed to that script and never bound to a global: UTF-8
//! transcoding, the OS random number generator (`getrandom`), and WHATWG
//! URL parsing (the `url` crate; its IDNA back end is the no-Unicode stub,
//! so non-ASCII host names are refused).

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use rquickjs::context::EvalOptions;
use rquickjs::function::{Opt, This};
use rquickjs::object::{Accessor, Property};
use rquickjs::{Ctx, Exception, Function, Object, TypedArray, Value};
use url::{quirks, Url};

const SCRIPT: &str = include_str!("web_globals.js");
/// `publish` and `define`, shared by both scripts.
const PUBLISH: &str = include_str!("publish.js");

/// The global names `web_globals.js` defines.
const GLOBAL_NAMES: [&str; 9] = [
    "DOMException",
    "TextEncoder",
    "TextDecoder",
    "atob",
    "btoa",
    "crypto",
    "structuredClone",
    "URLSearchParams",
    "URL",
];
/// Prototype methods `intl.js` replaces (they format through `Intl`); it
/// also defines the global `Intl`.
const PROTOTYPE_METHODS: [(&str, &str); 7] = [
    ("String", "localeCompare"),
    ("Number", "toLocaleString"),
    ("BigInt", "toLocaleString"),
    ("Array", "toLocaleString"),
    ("Date", "toLocaleString"),
    ("Date", "toLocaleDateString"),
    ("Date", "toLocaleTimeString"),
];

/// Largest `crypto.getRandomValues` request, in bytes (the Web Crypto
/// quota; the script refuses more before asking).
const MAX_RANDOM_BYTES: usize = 65536;

/// Which script builds an announced name: `Intl` is built apart, so that
/// code using only `URL` or `crypto` does not pay for it, and the reverse.
#[derive(Clone, Copy)]
enum Script {
    Web,
    Intl,
}

/// Announces the web globals of every world (not `performance`); they are
/// built on first use. (A script doing the same cost ~0.1 ms per spawn.)
pub fn install(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let web = Rc::new(Cell::new(true));
    let intl = Rc::new(Cell::new(true));
    for name in GLOBAL_NAMES {
        announce(ctx, None, name, (&web, Script::Web))?;
    }
    announce(ctx, None, "Intl", (&intl, Script::Intl))?;
    for (constructor, name) in PROTOTYPE_METHODS {
        announce(ctx, Some(constructor), name, (&intl, Script::Intl))?;
    }
    Ok(())
}

/// The global object, or `constructor.prototype`. Looked up by name on
/// each use rather than held: a handle kept in a closure would keep the
/// runtime from being freed (QuickJS aborts on a runtime dropped with
/// live objects).
fn target<'js>(ctx: &Ctx<'js>, constructor: Option<&str>) -> rquickjs::Result<Object<'js>> {
    match constructor {
        None => Ok(ctx.globals()),
        Some(constructor) => ctx
            .globals()
            .get::<_, Object>(constructor)?
            .get("prototype"),
    }
}

/// Defines the property `name` as a configurable, non-enumerable accessor:
/// its getter runs the script that builds it (once), then reads the value
/// that replaced it; its setter defines a data property, as an assignment
/// would.
fn announce<'js>(
    ctx: &Ctx<'js>,
    constructor: Option<&'static str>,
    name: &'static str,
    (pending, script): (&Rc<Cell<bool>>, Script),
) -> rquickjs::Result<()> {
    let pending = Rc::clone(pending);
    let get = move |ctx: Ctx<'js>| -> rquickjs::Result<Value<'js>> {
        if pending.replace(false) {
            match script {
                Script::Web => build(ctx.clone())?,
                Script::Intl => build_intl(ctx.clone())?,
            }
        }
        let object: Object = ctx.globals().get("Object")?;
        let describe: Function = object.get("getOwnPropertyDescriptor")?;
        let descriptor: Option<Object> = describe.call((target(&ctx, constructor)?, name))?;
        match descriptor {
            // Still an accessor (the build failed part-way): no value.
            Some(descriptor) if !descriptor.contains_key("get")? => descriptor.get("value"),
            _ => Ok(Value::new_undefined(ctx)),
        }
    };
    let set = move |this: This<Value<'js>>, value: Value<'js>| -> rquickjs::Result<()> {
        match this.0.as_object() {
            Some(object) => object.prop(name, Property::from(value).writable().configurable()),
            None => Ok(()),
        }
    };
    target(ctx, constructor)?.prop(name, Accessor::new(get, set).configurable())
}

fn script_options(filename: &str) -> EvalOptions {
    let mut options = EvalOptions::default();
    options.strict = true;
    options.filename = Some(filename.to_owned());
    options
}

/// `[publish, define]` of `publish.js`, for one build.
fn publishers<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<(Function<'js>, Function<'js>)> {
    let helpers: Object = ctx.eval_with_options(PUBLISH, script_options("<publish>"))?;
    Ok((helpers.get("publish")?, helpers.get("define")?))
}

/// Builds every web global but `Intl`: runs `web_globals.js` with its
/// native helpers.
fn build(ctx: Ctx<'_>) -> rquickjs::Result<()> {
    let native = Object::new(ctx.clone())?;
    native.prop("utf8Encode", Function::new(ctx.clone(), utf8_encode)?)?;
    native.prop("utf8Decode", Function::new(ctx.clone(), utf8_decode)?)?;
    native.prop("randomBytes", Function::new(ctx.clone(), random_bytes)?)?;
    native.prop("urlParse", Function::new(ctx.clone(), url_parse)?)?;
    native.prop("urlSet", Function::new(ctx.clone(), url_set)?)?;
    let (publish, define) = publishers(&ctx)?;
    let script: Function = ctx.eval_with_options(SCRIPT, script_options("<web-globals>"))?;
    script.call((native, publish, define))
}

/// Builds `Intl` and the locale methods: runs `intl/intl.js` with the
/// DateTimeFormat factory of `intl/datetime_format.js`.
fn build_intl(ctx: Ctx<'_>) -> rquickjs::Result<()> {
    let (publish, define) = publishers(&ctx)?;
    let dates: Function = ctx.eval_with_options(
        crate::intl::DATE_TIME_FORMAT_SCRIPT,
        script_options("<intl-dates>"),
    )?;
    let script: Function = ctx.eval_with_options(crate::intl::SCRIPT, script_options("<intl>"))?;
    script.call((crate::intl::natives(&ctx)?, publish, define, dates))
}

/// Defines `performance` with `now()`: milliseconds (fractional) since
/// `ready`, from a monotonic clock; 0 until `ready` is sent.
pub fn install_performance(
    ctx: &Ctx<'_>,
    ready_at: Rc<Cell<Option<Instant>>>,
) -> rquickjs::Result<()> {
    let performance = Object::new(ctx.clone())?;
    let now = Function::new(ctx.clone(), move || {
        ready_at
            .get()
            .map_or(0.0, |at| at.elapsed().as_secs_f64() * 1000.0)
    })?
    .with_name("now")?;
    performance.prop("now", Property::from(now).writable().configurable())?;
    ctx.globals().prop(
        "performance",
        Property::from(performance).writable().configurable(),
    )
}

fn utf8_encode<'js>(ctx: Ctx<'js>, text: String) -> rquickjs::Result<TypedArray<'js, u8>> {
    TypedArray::new(ctx, text.into_bytes())
}

/// `None` when `fatal` and the bytes are not UTF-8; else the text with
/// U+FFFD for each maximal invalid subpart (as WHATWG decodes).
fn utf8_decode(bytes: TypedArray<'_, u8>, fatal: bool) -> Option<String> {
    // SAFETY: the slice is copied at once; no JavaScript runs (so the
    // buffer cannot be detached or resized) while it is borrowed.
    let bytes = unsafe { bytes.as_bytes() }.unwrap_or_default().to_vec();
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(_) if fatal => None,
        Err(error) => Some(String::from_utf8_lossy(error.as_bytes()).into_owned()),
    }
}

fn random_bytes<'js>(ctx: Ctx<'js>, length: usize) -> rquickjs::Result<TypedArray<'js, u8>> {
    if length > MAX_RANDOM_BYTES {
        return Err(Exception::throw_range(
            &ctx,
            "at most 65536 random bytes per call",
        ));
    }
    let mut bytes = vec![0u8; length];
    getrandom::fill(&mut bytes).map_err(|error| {
        Exception::throw_internal(
            &ctx,
            &format!("the OS random number generator failed: {error}"),
        )
    })?;
    TypedArray::new(ctx, bytes)
}

/// `[href, origin, protocol, username, password, host, hostname, port,
/// pathname, search, hash]`, the order `web_globals.js` reads.
fn parts(url: &Url) -> Vec<String> {
    vec![
        quirks::href(url).to_owned(),
        quirks::origin(url),
        quirks::protocol(url).to_owned(),
        quirks::username(url).to_owned(),
        quirks::password(url).to_owned(),
        quirks::host(url).to_owned(),
        quirks::hostname(url).to_owned(),
        quirks::port(url).to_owned(),
        quirks::pathname(url).to_owned(),
        quirks::search(url).to_owned(),
        quirks::hash(url).to_owned(),
    ]
}

fn invalid_url(ctx: &Ctx<'_>, input: &str) -> rquickjs::Error {
    Exception::throw_type(ctx, &format!("Invalid URL: {input}"))
}

fn url_parse(
    ctx: Ctx<'_>,
    input: String,
    base: Opt<Option<String>>,
) -> rquickjs::Result<Vec<String>> {
    let base = match base.0.flatten() {
        Some(base) => Some(Url::parse(&base).map_err(|_| invalid_url(&ctx, &base))?),
        None => None,
    };
    Url::options()
        .base_url(base.as_ref())
        .parse(&input)
        .map(|url| parts(&url))
        .map_err(|_| invalid_url(&ctx, &input))
}

/// Applies one WHATWG setter to `href`. As in browsers, a value a setter
/// refuses leaves the URL unchanged.
fn url_set(
    ctx: Ctx<'_>,
    href: String,
    part: String,
    value: String,
) -> rquickjs::Result<Vec<String>> {
    let mut url = Url::parse(&href).map_err(|_| invalid_url(&ctx, &href))?;
    let _refused = match part.as_str() {
        "protocol" => quirks::set_protocol(&mut url, &value),
        "username" => quirks::set_username(&mut url, &value),
        "password" => quirks::set_password(&mut url, &value),
        "host" => quirks::set_host(&mut url, &value),
        "hostname" => quirks::set_hostname(&mut url, &value),
        "port" => quirks::set_port(&mut url, &value),
        "pathname" => {
            quirks::set_pathname(&mut url, &value);
            Ok(())
        }
        "search" => {
            quirks::set_search(&mut url, &value);
            Ok(())
        }
        "hash" => {
            quirks::set_hash(&mut url, &value);
            Ok(())
        }
        _ => return Err(Exception::throw_type(&ctx, "unknown URL component")),
    };
    Ok(parts(&url))
}
