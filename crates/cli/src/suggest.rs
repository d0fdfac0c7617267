//! "did you mean": the known word closest to a mistyped one (`cordon
//! frobnicat`, `--polcy`), by edit distance. Pure.

/// Most edits a word may be from a known one to be suggested.
const MAX_EDITS: usize = 2;

/// Levenshtein distance between `a` and `b` (bytes: flags and commands are ASCII).
fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// The known word nearest `typed`, when it is within [`MAX_EDITS`] (and
/// closer than the word's own length, so `-x` suggests nothing).
pub fn closest<'a>(typed: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|word| (distance(typed, word), *word))
        .filter(|(edits, _)| *edits <= MAX_EDITS && *edits < typed.len())
        .min_by_key(|(edits, _)| *edits)
        .map(|(_, word)| word)
}

/// ` (did you mean X?)`, or nothing.
pub fn did_you_mean(typed: &str, known: &[&str]) -> String {
    closest(typed, known).map_or_else(String::new, |word| format!("; did you mean {word}?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_suggests_the_nearest_known_word_and_nonsense_suggests_nothing() {
        let flags = ["--policy", "--workspace", "--receipt"];
        assert_eq!(closest("--polcy", &flags), Some("--policy"));
        assert_eq!(closest("--worksapce", &flags), Some("--workspace"));
        assert_eq!(closest("--frobnicate", &flags), None);
        assert_eq!(closest("rn", &["run", "doctor"]), Some("run"));
        assert_eq!(
            did_you_mean("doctr", &["run", "doctor"]),
            "; did you mean doctor?"
        );
        assert_eq!(did_you_mean("zzz", &["run", "doctor"]), "");
    }
}
