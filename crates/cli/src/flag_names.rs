//! The launcher's messages name the JavaScript options document
//! (`options.bwrapPath`, `options.stop.graceMs`); someone who typed `cordon
//! run --bwrap …` should read the flag. Pure text substitution, most
//! specific name first.

/// Option path → what the CLI user typed.
const FLAGS: &[(&str, &str)] = &[
    ("options.stop.graceMs", "--grace-ms"),
    ("options.stop.forceMs", "--force-ms"),
    ("options.stop", "--grace-ms/--force-ms"),
    ("options.bwrapPath", "--bwrap"),
    ("options.workspace", "--workspace"),
    ("options.deadlineMs", "--deadline-ms"),
    ("options.env.", "--env "),
    ("options.env", "--env"),
    (
        "options.networkRelayPath",
        "cordon-egress-relay (beside the cordon executable)",
    ),
    ("options.command", "the program"),
    ("policy.network.allow", "--allow"),
];

/// `message` with every JS option path replaced by its flag.
pub fn in_flags(message: &str) -> String {
    FLAGS
        .iter()
        .fold(message.to_string(), |text, (option, flag)| {
            text.replace(option, flag)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_option_names_become_the_flags_a_cli_user_typed() {
        assert_eq!(
            in_flags("options.bwrapPath must be an absolute path"),
            "--bwrap must be an absolute path"
        );
        assert_eq!(
            in_flags("options.stop.graceMs: must be at most 600000"),
            "--grace-ms: must be at most 600000"
        );
        assert_eq!(
            in_flags("options.env.A: not allowed"),
            "--env A: not allowed"
        );
        assert_eq!(in_flags("nothing to change"), "nothing to change");
    }
}
