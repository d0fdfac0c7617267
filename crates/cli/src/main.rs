//! `cordon`: the sandbox for providers that are not Node.js.
//! - `cordon run … -- /abs/program args…` (run.rs)
//! - `cordon doctor [--json]` (doctor.rs)
//! - `cordon host --config FILE` (host/)
//!
//! Exit statuses are listed in exit_status.rs and docs/cli.md.

mod doctor;
mod exit_status;
mod flag_names;
mod host;
mod lexical_path;
mod policy_arg;
mod receipt_file;
mod relay;
mod run;
mod run_args;
mod signals;
mod suggest;

use std::io::Write;

const DOCTOR_SYNOPSIS: &str = "cordon doctor [--json] [--bwrap PATH] [--runner PATH]";
const COMMANDS: &str = "       cordon --version

  run      run a program in a Bubblewrap sandbox; our stdin/stdout are its fd 3,
           its stdout+stderr come out on our stderr; exits with its status
           (128+N when killed by signal N; 125 cordon error, 126 launch
           failed, 127 invalid program); SIGTERM/SIGINT/SIGHUP stop it gracefully
  host     serve sandboxes to remote providers (docs/remote.md) over a Unix
           socket; exits 0 after SIGTERM/SIGINT (its sandboxes stopped; SIGHUP
           reopens its log file),
           2 on a usage error, 125 on an invalid configuration or listener
  doctor   check that this host can run cordon sandboxes; prints each check
           and the exact fix for each failure; exit status 1 if a required
           check fails
";

fn usage() -> String {
    format!(
        "usage: {DOCTOR_SYNOPSIS}\n       {}       {}{COMMANDS}",
        run::SYNOPSIS,
        host::SYNOPSIS
    )
}

fn dispatch(args: &[String]) -> i32 {
    let Some((name, rest)) = args.split_first() else {
        eprint!("{}", usage());
        return exit_status::USAGE;
    };
    match name.as_str() {
        "run" => run::main(rest),
        "host" => host::main(rest),
        "doctor" => doctor::main(rest).unwrap_or_else(|e| {
            eprint!("cordon doctor: {e}\n{}", usage());
            exit_status::USAGE
        }),
        "--version" | "-V" => {
            println!("cordon {}", env!("CARGO_PKG_VERSION"));
            0
        }
        "--help" | "-h" | "help" => {
            print!("{}", usage());
            0
        }
        other => {
            let hint =
                suggest::did_you_mean(other, &["run", "doctor", "host", "--version", "--help"]);
            eprint!("cordon: unknown command {other:?}{hint}\n{}", usage());
            exit_status::USAGE
        }
    }
}

fn main() {
    let args: Option<Vec<String>> = std::env::args_os()
        .skip(1)
        .map(|a| a.into_string().ok())
        .collect();
    let status = match args {
        Some(args) => dispatch(&args),
        None => {
            eprintln!("cordon: arguments must be valid UTF-8");
            exit_status::USAGE
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(status);
}
