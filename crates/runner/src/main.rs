//! `cordon-runner`: one code-bridge-v1 execution in a fresh QuickJS context.
//!
//! Steps: parse the command line (exit 2 on error) → install the
//! SIGINT/SIGTERM handler → run the session on a stack that fits
//! `--stack-bytes` (the main thread's when its limit allows, else a sized
//! thread) → exit with the session's code.

mod canonical_json;
mod cli;
mod console;
mod duplicate_keys;
mod evaluation;
mod execute;
mod execute_rule;
mod extensions;
mod fetch_bridge;
mod fetch_frames;
mod frame_reader;
mod frame_writer;
#[cfg(test)]
mod fuzz_tests;
mod intl;
mod js_errors;
mod js_world;
mod latches;
mod limits;
mod mailbox;
mod model_errors;
mod outcome;
mod promised_calls;
mod readable_wait;
mod reader_thread;
mod session;
mod signals;
mod timers;
mod tool_bridge;
mod web_globals;

use std::process::ExitCode;
use std::sync::Arc;

use nix::sys::resource::{getrlimit, Resource};

use cli::Command;
use session::{Exit, Shared};

/// Stack beyond `--stack-bytes` for the JavaScript thread: Rust frames
/// (JSON encoding, the tool bridge) run on it too, outside QuickJS's count.
const JS_THREAD_STACK_SLACK_BYTES: u64 = 1 << 20;

/// Whether the main thread's stack may grow to `bytes` (its soft
/// RLIMIT_STACK, often 8 MiB or unlimited).
fn main_stack_fits(bytes: u64) -> bool {
    match getrlimit(Resource::RLIMIT_STACK) {
        Ok((soft, _)) => soft == libc::RLIM_INFINITY || bytes <= soft,
        Err(_) => false,
    }
}

fn run_on_sized_thread(config: cli::Config, shared: Shared, stack_bytes: u64) -> Exit {
    let session = std::thread::Builder::new()
        .name("javascript".into())
        .stack_size(usize::try_from(stack_bytes).unwrap_or(usize::MAX))
        .spawn(move || session::run(&config, &shared));
    match session.map(|thread| thread.join()) {
        Ok(Ok(exit)) => exit,
        Ok(Err(_)) => Exit::Failed,
        Err(error) => {
            eprintln!("cordon-runner: cannot start the JavaScript thread: {error}");
            Exit::Failed
        }
    }
}

fn main() -> ExitCode {
    // SAFETY: mallopt only tunes glibc's allocator; called before any thread.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
    let config = match cli::parse(std::env::args_os().skip(1)) {
        Ok(Command::Run(config)) => config,
        Ok(Command::Help) => {
            print!("{}", cli::HELP);
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("{}", session::RUNNER_VERSION);
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("cordon-runner: {error}");
            return ExitCode::from(Exit::Unreadable as u8);
        }
    };
    let shared = Shared {
        latches: Arc::default(),
        mailbox: Arc::default(),
    };
    if let Err(error) = signals::install() {
        eprintln!("cordon-runner: cannot watch SIGINT/SIGTERM: {error}");
        return ExitCode::from(Exit::Failed as u8);
    }
    let stack_bytes = config
        .stack_bytes
        .saturating_add(JS_THREAD_STACK_SLACK_BYTES);
    let exit = if main_stack_fits(stack_bytes) {
        // Saves a thread start: the main thread's stack may grow that far.
        // A panic (a bug) ends as exit 1, as it does on the sized thread.
        std::panic::catch_unwind(|| session::run(&config, &shared)).unwrap_or(Exit::Failed)
    } else {
        run_on_sized_thread(config, shared, stack_bytes)
    };
    ExitCode::from(exit as u8)
}
