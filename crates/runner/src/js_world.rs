//! The JavaScript world of one execution (§6): one fresh QuickJS runtime and
//! context with the heap and stack ceilings, the standard ECMAScript library
//! and nothing ambient — no std/os/fs/fetch/process/require, no module
//! loader, no timers, no WebAssembly. The only added globals are `tools` and
//! `console`.
//!
//! Steps: runtime → ceilings → context (chosen intrinsics) → console → tools
//! → interrupt handler (armed last, so that a cancel arriving during setup
//! cannot break the bootstrap; it still wins at the first interrupt check).

use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::context::intrinsic;
use rquickjs::{Context, Runtime};

use crate::console::Console;
use crate::latches::Latches;
use crate::tool_bridge::ToolBridge;

/// ECMAScript intrinsics only: `performance` and the other host objects of
/// `Context::full` are left out.
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
    InstallGlobals(rquickjs::Error),
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
            WorldError::InstallGlobals(error) => write!(f, "cannot install tools/console: {error}"),
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
    runtime: Runtime,
    context: Context,
}

impl JsWorld {
    pub fn build(
        ceilings: Ceilings,
        tool_names: &[String],
        bridge: &Rc<ToolBridge>,
        console: &Rc<Console>,
    ) -> Result<Self, WorldError> {
        let runtime = Runtime::new().map_err(WorldError::CreateRuntime)?;
        runtime.set_memory_limit(usize::try_from(ceilings.memory_bytes).unwrap_or(usize::MAX));
        runtime.set_max_stack_size(usize::try_from(ceilings.stack_bytes).unwrap_or(usize::MAX));
        let context = Context::custom::<Intrinsics>(&runtime).map_err(WorldError::CreateContext)?;
        context
            .with(|ctx| {
                console.install(&ctx)?;
                bridge.install(&ctx, tool_names)
            })
            .map_err(WorldError::InstallGlobals)?;
        Ok(JsWorld { runtime, context })
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
