//! `Intl.NumberFormat` `style: "unit"`: the formatted number put into the
//! locale's CLDR pattern for the unit, width and the number's plural
//! category, as ICU4C's LongNameHandler does it (Node's output).
//!
//! ICU4X's compiled unit data covers only area, duration, length, mass and
//! volume (not bytes, temperatures, percent, degrees or `X-per-Y`), so the
//! patterns come from `units.txt` (`scripts/intl-units.js` writes it from
//! CLDR's JSON): for each unit ECMA-402 sanctions, and the `X-per-Y` units
//! CLDR names (`kilometer-per-hour`), a pattern per width and category,
//! the unit's `perUnitPattern` and the width's `per` compound pattern.

use fixed_decimal::Decimal;
use icu_locale::Locale;
use icu_plurals::PluralRules;
use rquickjs::{Ctx, Object};

use super::cldr_table::Table;
use super::{parse_locale, plural_name, unsupported};

/// `locale<TAB><width>.<unit>.<category>=pattern<TAB>…` (`cldr_table.rs`).
static TABLE: Table = Table::new(include_str!("units.txt"));

/// The plural category ICU4C picks a unit pattern by: the cardinal rules
/// applied to the number as formatted (rounded, trailing zeros shown).
/// NaN and ∞ are `other` (the caller's).
pub(super) fn category(
    ctx: &Ctx<'_>,
    locale: &Locale,
    decimal: &Decimal,
) -> rquickjs::Result<&'static str> {
    let rules =
        PluralRules::try_new_cardinal_with_buffer_provider(super::data::provider(), locale.into())
            .map_err(|e| {
                unsupported(
                    ctx,
                    &format!("Intl.NumberFormat: no plural rules for {locale}: {e}"),
                )
            })?;
    Ok(plural_name(rules.category_for(decimal)))
}

/// The patterns of `unit` shown `display` (`long`, `short`, `narrow`) in
/// `locale`, by plural category, for `NumberFormat` to keep: looked up
/// once, when it is constructed. A unit CLDR has no pattern for in the
/// locale is a `RangeError` naming unit, width and locale.
pub fn patterns<'js>(
    ctx: Ctx<'js>,
    locale: String,
    unit: String,
    display: String,
) -> rquickjs::Result<Object<'js>> {
    let parsed = parse_locale(&ctx, &locale)?;
    let entries = TABLE
        .cldr_id(&parsed)
        .map(|id| TABLE.entries(&id))
        .unwrap_or_default();
    let found = Object::new(ctx.clone())?;
    for category in CATEGORIES {
        let pattern = pattern(&entries, &unit, &display, category).ok_or_else(|| {
            unsupported(
                &ctx,
                &format!("Intl: NumberFormat with unit \"{unit}\", unitDisplay \"{display}\" in locale \"{locale}\" (no CLDR pattern) is not supported in Code Mode"),
            )
        })?;
        found.set(category, pattern)?;
    }
    Ok(found)
}

const CATEGORIES: [&str; 6] = ["zero", "one", "two", "few", "many", "other"];

/// `patterns` as `NumberFormat` passed them back, in `CATEGORIES` order.
pub(super) fn read_patterns(options: &Object<'_>) -> rquickjs::Result<Vec<String>> {
    let Some(patterns) = options.get::<_, Option<Object>>("unitPatterns")? else {
        return Ok(Vec::new());
    };
    CATEGORIES
        .iter()
        .map(|category| {
            Ok(patterns
                .get::<_, Option<String>>(*category)?
                .unwrap_or_default())
        })
        .collect()
}

/// `number` (already formatted) put into the pattern of its category.
pub(super) fn wrap(patterns: &[String], category: &str, number: &str) -> String {
    let at = CATEGORIES.iter().position(|c| *c == category).unwrap_or(5);
    patterns.get(at).map_or_else(
        || number.to_owned(),
        |pattern| pattern.replacen("{0}", number, 1),
    )
}

/// The pattern with `{0}` for the number, or `None` when CLDR has none.
fn pattern(entries: &[(&str, &str)], unit: &str, display: &str, category: &str) -> Option<String> {
    let width = match display {
        "long" => "l",
        "narrow" => "n",
        _ => "s",
    };
    let find = |key: String| {
        entries
            .iter()
            .find(|(known, _)| *known == key)
            .map(|(_, pattern)| *pattern)
    };
    // A missing category takes `other`, as ICU4C's getWithPlural does.
    let simple = |unit: &str, category: &str| {
        find(format!("{width}.{unit}.{category}")).or_else(|| find(format!("{width}.{unit}.other")))
    };
    if let Some(pattern) = simple(unit, category) {
        return Some(pattern.to_owned());
    }
    // X-per-Y without a CLDR name: X's pattern inside Y's perUnitPattern,
    // or inside the `per` compound pattern with Y's singular name.
    let (numerator, denominator) = unit.split_once("-per-")?;
    let numerator = simple(numerator, category)?;
    let per = match find(format!("{width}.{denominator}.per")) {
        Some(per) => per.to_owned(),
        None => {
            let name = simple(denominator, "one")?.replace("{0}", "");
            // UnicodeString::trim: the no-break spaces are kept.
            let name = name.trim_matches(|c: char| {
                c.is_whitespace() && !matches!(c, '\u{a0}' | '\u{2007}' | '\u{202f}')
            });
            find(format!("{width}.per"))?.replacen("{1}", name, 1)
        }
    };
    Some(per.replacen("{0}", numerator, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(tag: &str, unit: &str, display: &str, category: &str) -> String {
        let locale = Locale::try_from_str(tag).expect("locale");
        let entries = TABLE.entries(&TABLE.cldr_id(&locale).expect("a CLDR locale"));
        pattern(&entries, unit, display, category).expect("a pattern")
    }

    #[test]
    fn simple_units_take_the_pattern_of_their_width_and_category() {
        assert_eq!(unit("en", "kilometer", "long", "one"), "{0} kilometer");
        assert_eq!(
            unit("en-GB", "kilometer", "long", "other"),
            "{0} kilometres"
        );
        assert_eq!(unit("en", "kilometer", "short", "other"), "{0} km");
        assert_eq!(unit("en", "byte", "narrow", "other"), "{0}B");
        assert_eq!(unit("de-DE", "kilometer", "long", "one"), "{0} Kilometer");
    }

    #[test]
    fn per_units_use_the_cldr_name_or_the_denominators_per_pattern() {
        assert_eq!(
            unit("en", "kilometer-per-hour", "short", "other"),
            "{0} km/h"
        );
        assert_eq!(
            unit("en", "gigabyte-per-second", "long", "one"),
            "{0} gigabyte per second"
        );
        assert_eq!(
            unit("en", "byte-per-kilometer", "short", "other"),
            "{0} byte/km"
        );
    }

    #[test]
    fn a_missing_category_takes_other() {
        assert_eq!(unit("en", "kilometer", "long", "few"), "{0} kilometers");
    }
}
