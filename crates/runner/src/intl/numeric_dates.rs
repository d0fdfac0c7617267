//! Dates with a numeric month (`{ year, month: "numeric", day }`, the
//! default of `toLocaleDateString`, with or without a weekday or a time),
//! patterned as Node's ICU4C pattern generator does it: the locale's CLDR
//! `availableFormats` entry closest to the requested skeleton, its field
//! widths adjusted where the request differs from the entry, joined to a
//! time part by the locale's short date-time glue.
//!
//! ICU4X's compiled data has no skeleton table and patterns these dates
//! with the locale's short or medium date format, which is not what Node
//! prints (de `05.03.2024`, Node `5.3.2024`; cs `05.03.24`, Node `5. 3.
//! 2024`). `numeric_dates.txt` holds the CLDR entries
//! (`scripts/intl-numeric-dates.js` writes it from CLDR's JSON); ICU4X
//! still supplies every name, number and time pattern.

use icu_locale::Locale;

use super::cldr_table::Table;

/// `locale<TAB>skeleton=pattern<TAB>…` lines (`cldr_table.rs`).
static TABLE: Table = Table::new(include_str!("numeric_dates.txt"));

/// A requested field width: 0 absent; 1 numeric (or a short weekday);
/// 2 two-digit; 4 a long weekday.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Skeleton {
    pub year: usize,
    pub month: usize,
    pub weekday: usize,
    pub day: usize,
}

impl Skeleton {
    /// A CLDR skeleton of y, M, E and d only (`yMMdd`, `MEd`), or `None`.
    fn parse(text: &str) -> Option<Skeleton> {
        let count = |c: char| text.chars().filter(|&x| x == c).count();
        let skeleton = Skeleton {
            year: count('y'),
            month: count('M'),
            weekday: count('E'),
            day: count('d'),
        };
        let known = skeleton.year + skeleton.month + skeleton.weekday + skeleton.day;
        let numeric = skeleton.month <= 2 && skeleton.weekday <= 1;
        (known == text.len() && known > 0 && numeric).then_some(skeleton)
    }

    fn widths(&self) -> [usize; 4] {
        [self.year, self.month, self.weekday, self.day]
    }

    /// How far an entry is from the request (∞ for other fields).
    fn distance(&self, entry: &Skeleton) -> Option<usize> {
        let mut total = 0;
        for (want, have) in self.widths().into_iter().zip(entry.widths()) {
            if (want == 0) != (have == 0) {
                return None;
            }
            total += want.abs_diff(have);
        }
        Some(total)
    }
}

/// The date pattern for `request` in `locale`, and the locale's short
/// date-time glue (`{1}, {0}`), or `None` when CLDR has no entry for it.
pub fn pattern(locale: &Locale, request: &Skeleton) -> Option<(String, String)> {
    let id = TABLE.cldr_id(locale)?;
    let entries = TABLE.entries(&id);
    let (entry, pattern) = entries
        .iter()
        .filter_map(|(key, pattern)| {
            let entry = Skeleton::parse(key)?;
            Some((request.distance(&entry)?, entry, *pattern))
        })
        .min_by_key(|(distance, _, _)| *distance)
        .map(|(_, entry, pattern)| (entry, pattern))?;
    let glue = entries
        .iter()
        .find(|(key, _)| *key == "glue:short")
        .map(|(_, glue)| (*glue).to_owned())?;
    Some((adjust(pattern, &entry, request), glue))
}

/// ICU4C's `adjustFieldTypes`: a field whose requested width differs from
/// the entry's takes the requested width; the others stay as CLDR wrote them.
fn adjust(pattern: &str, entry: &Skeleton, request: &Skeleton) -> String {
    rewrite(pattern, |c| match c {
        'y' if entry.year != request.year => Some(request.year),
        'M' | 'L' if entry.month != request.month => Some(request.month),
        'd' if entry.day != request.day => Some(request.day),
        'E' | 'c' if entry.weekday != request.weekday => Some(match request.weekday {
            4 => 4,
            _ => 3,
        }),
        _ => None,
    })
}

/// The hour of `pattern` `width` digits wide, as V8 asks ICU4C for it
/// (`UDATPG_MATCH_HOUR_FIELD_LENGTH`): `hour: "numeric"` is `9:05` in en-GB,
/// where CLDR (and ICU4X) write `HH:mm`.
pub fn with_hour_width(pattern: &str, width: usize) -> String {
    rewrite(pattern, |c| {
        matches!(c, 'h' | 'H' | 'k' | 'K').then_some(width)
    })
}

/// `pattern` with each unquoted run of a field letter `width(letter)` long
/// (`None`: as written).
fn rewrite(pattern: &str, width: impl Fn(char) -> Option<usize>) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut quoted = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
            out.push(c);
            continue;
        }
        let mut run = 1;
        while !quoted && chars.peek() == Some(&c) && c.is_ascii_alphabetic() {
            chars.next();
            run += 1;
        }
        let wanted = if quoted { None } else { width(c) };
        for _ in 0..wanted.unwrap_or(run) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skeleton(text: &str) -> Skeleton {
        Skeleton::parse(text).expect("a skeleton")
    }

    fn date(tag: &str, request: &str) -> String {
        let locale = Locale::try_from_str(tag).expect("locale");
        pattern(&locale, &skeleton(request)).expect("a pattern").0
    }

    #[test]
    fn the_nearest_entry_is_taken_and_only_differing_widths_change() {
        assert_eq!(date("de-DE", "yMd"), "d.M.y");
        assert_eq!(date("de-AT", "yMMdd"), "dd.MM.y");
        assert_eq!(date("de", "yyMMdd"), "dd.MM.yy");
        assert_eq!(date("en-GB", "yMd"), "dd/MM/y");
        assert_eq!(date("en-US", "yMMdd"), "MM/dd/y");
        let long_weekday = Skeleton {
            weekday: 4,
            ..skeleton("yMd")
        };
        let en = Locale::try_from_str("en").expect("locale");
        let (pattern, glue) = pattern(&en, &long_weekday).expect("a pattern");
        assert_eq!(
            (pattern.as_str(), glue.as_str()),
            ("EEEE, M/d/y", "{1}, {0}")
        );
    }

    #[test]
    fn a_region_or_script_finds_its_cldr_locale() {
        assert_eq!(date("zh-TW", "yMd"), date("zh-Hant", "yMd"));
        assert_ne!(date("zh-TW", "yMd"), date("zh-CN", "yMEd"));
        assert_eq!(date("cs-CZ", "yMd"), "d. M. y");
    }

    #[test]
    fn quoted_text_is_kept() {
        assert_eq!(
            adjust("d 'de' MM", &skeleton("Md"), &skeleton("MMdd")),
            "dd 'de' MM"
        );
        assert_eq!(with_hour_width("HH:mm 'HH'", 1), "H:mm 'HH'");
        assert_eq!(with_hour_width("h:mm a", 2), "hh:mm a");
    }
}
