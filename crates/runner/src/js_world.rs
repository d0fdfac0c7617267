//! The JavaScript world of one execution (§6): one fresh QuickJS runtime and
//! context with the heap and stack ceilings, the standard ECMAScript library
//! and nothing ambient — no std/os/fs/fetch/process/require, no module
//! loader, no timers, no WebAssembly. The added globals are `tools`,
//! `console` and the side-effect-free web globals of [`web_globals`].
//!
//! Steps: runtime → ceilings → context (chosen intrinsics) → console → web
//! globals (announced, built on first use) → with `--max-requests`, `fetch.js`
//! compiled (not run: [`JsWorld::install_fetch`] runs it when the frame asks
//! for fetch), all in [`JsWorld::build`],
//! before the execute frame is read (nothing there depends on it, so a
//! runner waiting in a pool is already warm) → tools, in
//! [`JsWorld::install_tools`], and `performance` in extension mode
//! ([`JsWorld::install_performance`]), once `execute` is validated → interrupt
//! handler (armed last, so that a cancel arriving during setup cannot break
//! the bootstrap; it still wins at the first interrupt check).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use rquickjs::context::intrinsic;
use rquickjs::{Context, Function, Persistent, Runtime};

use crate::console::Console;
use crate::fetch_bridge;
use crate::latches::Latches;
use crate::timers::Timers;
use crate::tool_bridge::ToolBridge;
use crate::web_globals;

/// ECMAScript intrinsics only: `performance` and the other host objects of
/// `Context::full` are left out (cordon's own `performance` exists in
/// extension mode only).
type Intrinsics = (
    intrinsic::Date,
    intrinsic::Eval,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::MapSet,
    intrinsic::TypedArrays,
    intrinsic::Promise,
    intrinsic::WeakRef,
);

#[derive(Debug)]
pub enum WorldError {
    CreateRuntime(rquickjs::Error),
    CreateContext(rquickjs::Error),
    InstallConsole(rquickjs::Error),
    InstallWebGlobals(rquickjs::Error),
    InstallTools(rquickjs::Error),
    CompileFetch(rquickjs::Error),
}

impl fmt::Display for WorldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorldError::CreateRuntime(error) => {
                write!(f, "cannot create the QuickJS runtime: {error}")
            }
            WorldError::CreateContext(error) => {
                write!(f, "cannot create the QuickJS context: {error}")
            }
            WorldError::InstallConsole(error) => write!(f, "cannot install console: {error}"),
            WorldError::InstallWebGlobals(error) => {
                write!(f, "cannot install the web globals: {error}")
            }
            WorldError::InstallTools(error) => write!(f, "cannot install tools: {error}"),
            WorldError::CompileFetch(error) => {
                write!(f, "cannot compile fetch.js (--max-requests): {error}")
            }
        }
    }
}

/// Heap and stack ceilings, from the command line.
#[derive(Debug, Clone, Copy)]
pub struct Ceilings {
    pub memory_bytes: u64,
    pub stack_bytes: u64,
}

pub struct JsWorld {
    /// `fetch.js` compiled at build (`--max-requests`), taken by
    /// [`JsWorld::install_fetch`]. Declared first so it is dropped first: a
    /// value that outlives its runtime aborts the process when the runtime
    /// is freed.
    fetch_script: RefCell<Option<Persistent<Function<'static>>>>,
    runtime: Runtime,
    context: Context,
    /// When `ready` was sent: the origin of `performance.now()`.
    ready_at: Rc<Cell<Option<Instant>>>,
}

impl JsWorld {
    /// The part of the world that does not depend on the execute frame:
    /// runtime with its ceilings, context, `console`.
    pub fn build(
        ceilings: Ceilings,
        console: &Rc<Console>,
        prepare_fetch: bool,
    ) -> Result<Self, WorldError> {
        let runtime = Runtime::new().map_err(WorldError::CreateRuntime)?;
        runtime.set_memory_limit(usize::try_from(ceilings.memory_bytes).unwrap_or(usize::MAX));
        runtime.set_max_stack_size(usize::try_from(ceilings.stack_bytes).unwrap_or(usize::MAX));
        let context = Context::custom::<Intrinsics>(&runtime).map_err(WorldError::CreateContext)?;
        context
            .with(|ctx| console.install(&ctx))
            .map_err(WorldError::InstallConsole)?;
        context
            .with(|ctx| web_globals::install(&ctx))
            .map_err(WorldError::InstallWebGlobals)?;
        let fetch_script = match prepare_fetch {
            true => Some(
                context
                    .with(|ctx| {
                        fetch_bridge::compile_script(&ctx).map(|f| Persistent::save(&ctx, f))
                    })
                    .map_err(WorldError::CompileFetch)?,
            ),
            false => None,
        };
        Ok(JsWorld {
            fetch_script: RefCell::new(fetch_script),
            runtime,
            context,
            ready_at: Rc::default(),
        })
    }

    /// Defines the global `tools` of the execute frame's catalogue.
    pub fn install_tools(
        &self,
        tool_names: &[String],
        bridge: &Rc<ToolBridge>,
    ) -> Result<(), WorldError> {
        self.context
            .with(|ctx| bridge.install(&ctx, tool_names))
            .map_err(WorldError::InstallTools)
    }

    /// Extension mode: defines `fetch` (and, with the fetch extension,
    /// `Request`, `Response`, `Headers`).
    pub fn install_fetch(&self, bridge: &Rc<ToolBridge>) -> Result<(), WorldError> {
        let compiled = self.fetch_script.borrow_mut().take();
        self.context
            .with(|ctx| {
                let compiled = compiled.map(|script| script.restore(&ctx)).transpose()?;
                bridge.install_fetch(&ctx, compiled)
            })
            .map_err(WorldError::InstallWebGlobals)
    }

    /// Drops `fetch.js` compiled ahead when the execute frame did not ask
    /// for fetch, so that the program's heap does not carry it (its function
    /// object is garbage the next collection frees).
    pub fn discard_fetch_script(&self) {
        drop(self.fetch_script.borrow_mut().take());
    }

    /// Extension mode: defines `performance` (absent from a v1 world).
    pub fn install_performance(&self) -> Result<(), WorldError> {
        self.context
            .with(|ctx| web_globals::install_performance(&ctx, Rc::clone(&self.ready_at)))
            .map_err(WorldError::InstallWebGlobals)
    }

    /// Timers extension: defines the timer, event and abort globals.
    pub fn install_timers(&self, timers: &Rc<Timers>) -> Result<(), WorldError> {
        self.context
            .with(|ctx| timers.install(&ctx))
            .map_err(WorldError::InstallWebGlobals)
    }

    /// `ready` is being sent now: the origin of `performance.now()`.
    pub fn mark_ready(&self, at: Instant) {
        self.ready_at.set(Some(at));
    }

    /// From now on QuickJS stops running code as soon as any latch is set
    /// or the deadline passes (raising an uncatchable error).
    pub fn arm_interrupts(&self, latches: Arc<Latches>) {
        self.runtime
            .set_interrupt_handler(Some(Box::new(move || latches.should_stop())));
    }

    pub fn context(&self) -> &Context {
        &self.context
    }
}
