//! The command line of `cordon-runner` (code-bridge-v1 §2).
//!
//! Every value is a decimal integer ≥ 1: no sign, no junk, no overflow. A
//! missing value, a bad value, an unknown option or an out-of-range value is a
//! [`CliError`]; `main` prints it on one line to stderr and exits 2.

use std::ffi::OsString;
use std::fmt;

use crate::extensions::MAX_REQUESTS_CEILING;

/// Largest value accepted by the byte, count and millisecond options: hosts
/// hold these numbers in signed 64-bit arithmetic, so 2^64−1 is refused.
const VALUE_MAX: u64 = i64::MAX as u64;
/// Largest `--fd`: descriptors are C `int`s.
const FD_MAX: u64 = i32::MAX as u64;
/// Largest `--stack-bytes` (16 MiB): rquickjs silently turns a larger
/// QuickJS stack ceiling into "no ceiling", which would let deep recursion
/// crash the process instead of throwing.
pub const STACK_BYTES_MAX: u64 = 1 << 24;

/// The settings of one run, after defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub fd: i32,
    pub memory_bytes: u64,
    pub stack_bytes: u64,
    pub timeout_ms: u64,
    pub max_calls: u64,
    pub max_frame_bytes: u64,
    pub max_result_bytes: u64,
    pub max_log_bytes: u64,
    /// `--max-requests`: the fetch extension's ceiling. Given, the host is
    /// expected to ask for fetch, so `fetch.js` is compiled before `execute`.
    pub max_requests: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            fd: 3,
            memory_bytes: 64 << 20,
            stack_bytes: 2 << 20,
            timeout_ms: 5000,
            max_calls: 64,
            max_frame_bytes: 1 << 20,
            max_result_bytes: 512 << 10,
            max_log_bytes: 64 << 10,
            max_requests: None,
        }
    }
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Run(Config),
    Help,
    Version,
}

/// Why the command line was refused (exit 2).
#[derive(Debug, PartialEq, Eq)]
pub enum CliError {
    MissingValue {
        option: &'static str,
    },
    InvalidValue {
        option: &'static str,
        value: String,
    },
    OutOfRange {
        option: &'static str,
        value: String,
        max: u64,
    },
    UnknownOption {
        argument: String,
    },
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::MissingValue { option } => write!(f, "{option}: missing value"),
            CliError::InvalidValue { option, value } => write!(
                f,
                "{option}: invalid value '{value}' (expected a decimal integer >= 1)"
            ),
            CliError::OutOfRange { option, value, max } => {
                write!(
                    f,
                    "{option}: out-of-range value '{value}' (allowed 1..={max})"
                )
            }
            CliError::UnknownOption { argument } => write!(f, "unknown option '{argument}'"),
        }
    }
}

/// One numeric option: its name, its ceiling and where it lands in [`Config`].
struct NumericOption {
    name: &'static str,
    max: u64,
    store: fn(&mut Config, u64),
}

const OPTIONS: [NumericOption; 9] = [
    NumericOption {
        name: "--fd",
        max: FD_MAX,
        store: |c, v| c.fd = v as i32,
    },
    NumericOption {
        name: "--memory-bytes",
        max: VALUE_MAX,
        store: |c, v| c.memory_bytes = v,
    },
    NumericOption {
        name: "--stack-bytes",
        max: STACK_BYTES_MAX,
        store: |c, v| c.stack_bytes = v,
    },
    NumericOption {
        name: "--timeout-ms",
        max: VALUE_MAX,
        store: |c, v| c.timeout_ms = v,
    },
    NumericOption {
        name: "--max-calls",
        max: VALUE_MAX,
        store: |c, v| c.max_calls = v,
    },
    NumericOption {
        name: "--max-frame-bytes",
        max: VALUE_MAX,
        store: |c, v| c.max_frame_bytes = v,
    },
    NumericOption {
        name: "--max-result-bytes",
        max: VALUE_MAX,
        store: |c, v| c.max_result_bytes = v,
    },
    NumericOption {
        name: "--max-log-bytes",
        max: VALUE_MAX,
        store: |c, v| c.max_log_bytes = v,
    },
    NumericOption {
        name: "--max-requests",
        max: MAX_REQUESTS_CEILING,
        store: |c, v| c.max_requests = Some(v),
    },
];

/// Parses the arguments after the program name, left to right. `--help` and
/// `--version` answer as soon as they are met; a later option wins over an
/// earlier one of the same name.
pub fn parse(arguments: impl IntoIterator<Item = OsString>) -> Result<Command, CliError> {
    let mut config = Config::default();
    let mut arguments = arguments.into_iter();
    while let Some(argument) = arguments.next() {
        let text = argument.to_string_lossy();
        match text.as_ref() {
            "--help" => return Ok(Command::Help),
            "--version" => return Ok(Command::Version),
            _ => {}
        }
        let Some(option) = OPTIONS.iter().find(|option| option.name == text) else {
            return Err(CliError::UnknownOption {
                argument: text.into_owned(),
            });
        };
        let value = arguments.next().ok_or(CliError::MissingValue {
            option: option.name,
        })?;
        let number = parse_value(option, &value.to_string_lossy())?;
        (option.store)(&mut config, number);
    }
    Ok(Command::Run(config))
}

fn parse_value(option: &NumericOption, value: &str) -> Result<u64, CliError> {
    let invalid = || CliError::InvalidValue {
        option: option.name,
        value: value.to_owned(),
    };
    let out_of_range = || CliError::OutOfRange {
        option: option.name,
        value: value.to_owned(),
        max: option.max,
    };
    if value.is_empty() || !value.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(invalid());
    }
    // Only digits remain, so the sole parse failure is overflow.
    let number: u64 = value.parse().map_err(|_| out_of_range())?;
    if number == 0 || number > option.max {
        return Err(out_of_range());
    }
    Ok(number)
}

/// The `--help` text: every flag, its default and its meaning.
pub const HELP: &str = "\
cordon-runner: runs one code-bridge-v1 execution in a fresh QuickJS context

USAGE:
    cordon-runner [OPTIONS]

The bridge is a connected SOCK_STREAM socket carrying JSON Lines. The host
sends one `execute` frame; the runner answers `ready`, any `tool.call`
frames, and one terminal `execution.result`. stdout and stderr are never
part of the protocol; console.* output goes to stderr.

OPTIONS (every value is a decimal integer >= 1):
    --fd N                  bridge descriptor                 [default: 3]
    --memory-bytes N        QuickJS heap ceiling              [default: 67108864]
    --stack-bytes N         QuickJS stack ceiling, at most 16777216
                                                              [default: 2097152]
    --timeout-ms N          wall-clock ceiling from `ready`   [default: 5000]
    --max-calls N           tool-call ceiling                 [default: 64]
    --max-frame-bytes N     frame size ceiling, both ways     [default: 1048576]
    --max-result-bytes N    final result ceiling              [default: 524288]
    --max-log-bytes N       console budget on stderr; past it lines are
                            dropped and one final line counts them
                                                              [default: 65536]
    --max-requests N        fetch extension's maxRequests ceiling, at most
                            100000; given, fetch.js is compiled before
                            `execute` (for hosts that will ask for fetch)
                                                              [default: none]
    --version               print the bare version and exit 0
    --help                  print this help and exit 0

EXIT CODES:
    0  --help, --version, or a terminal frame was sent (ok:false included)
    1  invalid execute frame (nothing sent), peer gone, or setup failure
    2  command-line error, or the first frame could not be read or parsed
";

#[cfg(test)]
mod tests {
    use super::*;

    fn run(arguments: &[&str]) -> Result<Command, CliError> {
        parse(arguments.iter().map(OsString::from))
    }

    #[test]
    fn no_arguments_give_the_documented_defaults() {
        let expected = Config {
            fd: 3,
            memory_bytes: 67_108_864,
            stack_bytes: 2_097_152,
            timeout_ms: 5000,
            max_calls: 64,
            max_frame_bytes: 1_048_576,
            max_result_bytes: 524_288,
            max_log_bytes: 65_536,
            max_requests: None,
        };
        assert_eq!(run(&[]), Ok(Command::Run(expected)));
    }

    #[test]
    fn zero_overflow_and_values_past_the_ceiling_are_out_of_range() {
        for arguments in [
            ["--fd", "0"],
            ["--fd", "2147483648"],
            ["--max-frame-bytes", "18446744073709551615"],
            ["--timeout-ms", "99999999999999999999999"],
            ["--stack-bytes", "16777217"],
            ["--max-requests", "100001"],
            ["--max-requests", "0"],
        ] {
            let error = run(&arguments).expect_err("must be refused");
            assert!(error.to_string().contains("out-of-range"), "{error}");
        }
    }

    #[test]
    fn signs_junk_and_empty_values_are_invalid_and_name_the_option() {
        for value in ["-1", "+1", "1x", "", " 1", "0x10", "1.0"] {
            let error = run(&["--max-calls", value]).expect_err("must be refused");
            assert!(
                matches!(error, CliError::InvalidValue { .. }),
                "{value}: {error}"
            );
            assert!(error.to_string().contains("--max-calls"));
        }
    }

    #[test]
    fn a_missing_value_and_an_unknown_option_are_refused() {
        assert_eq!(
            run(&["--fd"]),
            Err(CliError::MissingValue { option: "--fd" })
        );
        assert!(matches!(
            run(&["--bogus"]),
            Err(CliError::UnknownOption { .. })
        ));
        assert!(matches!(
            run(&["extra"]),
            Err(CliError::UnknownOption { .. })
        ));
    }

    #[test]
    fn help_lists_every_option() {
        for option in OPTIONS
            .iter()
            .map(|option| option.name)
            .chain(["--version", "--help"])
        {
            assert!(HELP.contains(option), "{option} missing from --help");
        }
    }
}
