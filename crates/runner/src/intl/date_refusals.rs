//! DateTimeFormat option shapes refused in a locale because Node prints
//! them differently (`date_refusals.txt`, written by
//! `scripts/intl-date-refusals.js` from the comparison that
//! `__test__/code-mode-intl-dates.test.js` repeats at test time).
//!
//! ICU4X 2.4 carries CLDR 49 and its own pattern selection; Node 22 carries
//! ICU4C 78 with CLDR 48. Where they disagree (a comma after a weekday, a
//! `dateStyle: "full"` pattern, `AM` for `am`) the shape is refused in that
//! locale with a `RangeError`, never printed differently. A locale outside
//! the comparison is refused every shape that differed in any compared
//! locale: only shapes that matched everywhere are trusted unseen.

use rquickjs::Ctx;

/// `compared<TAB>locales…`, then `shape<TAB>locales…` lines.
const TABLE: &str = include_str!("date_refusals.txt");

fn locales_of(line: &str) -> Option<(&str, impl Iterator<Item = &str>)> {
    let (key, locales) = line.split_once('\t')?;
    Some((key, locales.split(' ')))
}

/// Whether `shape` (intl.js `shapeOf`) is refused in `locale` (a base tag).
pub fn refused(_ctx: Ctx<'_>, locale: String, shape: String) -> rquickjs::Result<bool> {
    Ok(is_refused(&locale, &shape))
}

fn is_refused(locale: &str, shape: &str) -> bool {
    let mut compared = false;
    for line in TABLE.lines().filter(|line| !line.starts_with('#')) {
        let Some((key, mut locales)) = locales_of(line) else {
            continue;
        };
        if key == "compared" {
            compared = locales.any(|known| known == locale);
        } else if key == shape {
            return !compared || locales.any(|known| known == locale);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_compared_locale_is_listed_and_unlisted_locales_get_the_union() {
        let compared = TABLE
            .lines()
            .find_map(|line| line.strip_prefix("compared\t"))
            .expect("a compared line");
        assert!(compared.split(' ').any(|locale| locale == "en-US"));
        let Some((shape, mut locales)) = TABLE
            .lines()
            .filter(|line| !line.starts_with('#') && !line.starts_with("compared"))
            .find_map(locales_of)
        else {
            return;
        };
        let listed = locales.next().expect("a locale");
        assert!(is_refused(listed, shape));
        assert!(is_refused("xx-unseen", shape));
    }
}
