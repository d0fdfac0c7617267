//! NaN and ±∞ in `Intl.NumberFormat`, as ICU4C prints them: the locale's
//! symbol (fi `epäluku`, ru `не число`, dz `གྲངས་མེད`) where the style's
//! pattern puts the number. ICU4X's decimal symbols have neither symbol,
//! so they come from `number_symbols.txt` (`scripts/intl-number-symbols.js`
//! writes it from CLDR's JSON), in the locale's default numbering system,
//! the one ICU4X formats its digits in.

use fixed_decimal::Decimal;
use icu_locale::Locale;
use rquickjs::Ctx;

use super::cldr_table::Table;
use super::number_options::Resolved;
use super::numbers::{currency_name, format_decimal, plain, sign_display};
use super::{units, unsupported};

/// Formats NaN or ±∞ with `o`: the style's text for ±1 without digit
/// options, the digit replaced by the symbol. What ICU4C does differently
/// for a value with no digits:
/// - NaN has no sign under `exceptZero` (it is not a number above zero);
/// - the currency spacing (a no-break space between an alphabetic
///   currency such as `USD` and a digit) is not there, since the symbol
///   is not a digit (en `USDNaN`, `-USD∞`);
/// - a unit's pattern is that of `other` (`∞ meters`).
pub(super) fn format(
    ctx: &Ctx<'_>,
    locale: &Locale,
    o: &Resolved,
    value: SignedNonFinite,
) -> rquickjs::Result<String> {
    let patterns = o.unit_patterns();
    let style = if patterns.is_some() {
        "decimal"
    } else {
        o.style.as_str()
    };
    let mut bare = o.without_digits(style);
    if value.non_finite == NonFinite::NaN && bare.sign_display == "exceptZero" {
        "auto".clone_into(&mut bare.sign_display);
    }
    if bare.currency_by_name() {
        return by_currency_name(ctx, locale, &bare, value);
    }
    let one = Decimal::from(if value.negative { -1 } else { 1 });
    let mut text = format_decimal(ctx, locale, &bare, one.clone())?;
    let digit = plain(ctx, locale, Decimal::from(1))?;
    if style == "currency" {
        let standard = format_decimal(ctx, locale, &bare.with_narrow_euro(), one)?;
        text = without_currency_spacing(&text, &standard, &digit);
    }
    let number = text.replacen(&digit, value.non_finite.symbol(locale), 1);
    Ok(match patterns {
        Some(patterns) => units::wrap(patterns, "other", &number),
        None => number,
    })
}

/// Amounts one of which is `other` in every CLDR plural rule set, once
/// written with a currency's fraction digits (ceb: `5.00` is `one`, but
/// `0.04` is `other`); the fractional ones need two fraction digits.
const OTHER_PROBES: [(i32, i16); 9] = [
    (5, 0),
    (0, 0),
    (2, 0),
    (10, 0),
    (20, 0),
    (100, 0),
    (4, 2),
    (6, 2),
    (9, 2),
];

/// With the currency's name, NaN and ∞ take the name of the plural form
/// `other` (cs `NaN eur`, not `eura`; ceb `euros NaN`, where `other` puts
/// the name first): the text of an amount of that form, the amount
/// replaced by the symbol.
fn by_currency_name(
    ctx: &Ctx<'_>,
    locale: &Locale,
    o: &Resolved,
    value: SignedNonFinite,
) -> rquickjs::Result<String> {
    // ICU4X writes the currency's fraction digits, and picks the plural
    // form of the amount written so.
    let mut found = None;
    for (units_of, scale) in OTHER_PROBES {
        if scale > o.currency_digits() {
            continue;
        }
        let mut candidate = Decimal::from(units_of);
        candidate.multiply_pow10(-scale);
        candidate.absolute.pad_end(-o.currency_digits());
        if units::category(ctx, locale, &candidate)? == "other" {
            found = Some(candidate);
            break;
        }
    }
    // cs, sk, ro, sl: an amount with fraction digits is never `other`.
    let Some(mut amount) = found else {
        return Err(unsupported(
            ctx,
            &format!("Intl: NumberFormat of {} with currencyDisplay \"name\" in locale \"{locale}\" (no amount with the currency's digits takes the plural form Node uses) is not supported in Code Mode", value.non_finite.name()),
        ));
    };
    let digits = plain(ctx, locale, amount.clone())?;
    if value.negative {
        amount.set_sign(fixed_decimal::Sign::Negative);
    }
    amount.apply_sign_display(sign_display(ctx, &o.sign_display)?);
    let text = currency_name(ctx, locale, o, &amount)?;
    Ok(text.replacen(&digits, value.non_finite.symbol(locale), 1))
}

/// `text` without a no-break space beside `digit` where `standard` (the
/// same pattern with a symbol currency) has none: the space ICU4X's
/// alphaNextToNumber pattern put there.
fn without_currency_spacing(text: &str, standard: &str, digit: &str) -> String {
    const SPACING: char = '\u{a0}';
    let (Some(at), Some(standard_at)) = (text.find(digit), standard.find(digit)) else {
        return text.to_owned();
    };
    let (before, after) = (&text[..at], &text[at + digit.len()..]);
    let (standard_before, standard_after) = (
        &standard[..standard_at],
        &standard[standard_at + digit.len()..],
    );
    let before = match before.strip_suffix(SPACING) {
        Some(trimmed) if !standard_before.ends_with(char::is_whitespace) => trimmed,
        _ => before,
    };
    let after = match after.strip_prefix(SPACING) {
        Some(trimmed) if !standard_after.starts_with(char::is_whitespace) => trimmed,
        _ => after,
    };
    format!("{before}{digit}{after}")
}

/// `locale<TAB>nan=…<TAB>inf=…` (`cldr_table.rs`); `root` has `NaN`, `∞`.
static TABLE: Table = Table::new(include_str!("number_symbols.txt"));

/// A non-finite value to format: which one, and whether it had a minus sign.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SignedNonFinite {
    pub non_finite: NonFinite,
    pub negative: bool,
}

impl SignedNonFinite {
    /// `NaN`/`Infinity` with or without a sign, as `intl.js` sends them.
    pub fn of(value: &str) -> Option<SignedNonFinite> {
        NonFinite::of(value).map(|non_finite| SignedNonFinite {
            non_finite,
            negative: value.starts_with('-'),
        })
    }
}

/// What a non-finite value prints as.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NonFinite {
    NaN,
    Infinity,
}

impl NonFinite {
    /// `NaN`/`Infinity` with or without a sign, as `intl.js` sends them.
    pub fn of(value: &str) -> Option<NonFinite> {
        match value.trim_start_matches(['-', '+']) {
            "NaN" => Some(NonFinite::NaN),
            "Infinity" => Some(NonFinite::Infinity),
            _ => None,
        }
    }

    /// The symbol `locale` prints it as (CLDR root's when the table has
    /// no line for the locale).
    pub fn symbol(self, locale: &Locale) -> &'static str {
        let key = match self {
            NonFinite::NaN => "nan",
            NonFinite::Infinity => "inf",
        };
        let id = TABLE.cldr_id(locale).unwrap_or_else(|| "root".to_owned());
        TABLE
            .entries(&id)
            .into_iter()
            .find(|(known, _)| *known == key)
            .map_or(self.root(), |(_, symbol)| symbol)
    }

    fn name(self) -> &'static str {
        match self {
            NonFinite::NaN => "NaN",
            NonFinite::Infinity => "Infinity",
        }
    }

    fn root(self) -> &'static str {
        match self {
            NonFinite::NaN => "NaN",
            NonFinite::Infinity => "∞",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(tag: &str, value: &str) -> &'static str {
        let locale = Locale::try_from_str(tag).expect("locale");
        NonFinite::of(value).expect("non-finite").symbol(&locale)
    }

    #[test]
    fn nan_is_the_locales_own_symbol_and_nan_where_cldr_has_none() {
        assert_eq!(symbol("fi", "NaN"), "epäluku");
        assert_eq!(symbol("ru-RU", "-NaN"), "не\u{a0}число");
        assert_eq!(symbol("zh-TW", "NaN"), "非數值");
        assert_eq!(symbol("en-US", "NaN"), "NaN");
        assert_eq!(symbol("de", "NaN"), "NaN");
    }

    #[test]
    fn infinity_is_the_infinity_sign_but_where_the_locale_spells_it() {
        assert_eq!(symbol("en", "-Infinity"), "∞");
        assert_eq!(symbol("dz", "Infinity"), "གྲངས་མེད");
    }

    #[test]
    fn the_currency_spacing_goes_where_the_symbol_pattern_has_no_space() {
        assert_eq!(without_currency_spacing("USD\u{a0}1", "€1", "1"), "USD1");
        assert_eq!(without_currency_spacing("-USD\u{a0}1", "-€1", "1"), "-USD1");
        assert_eq!(without_currency_spacing("1\u{a0}JP¥", "1€", "1"), "1JP¥");
        assert_eq!(
            without_currency_spacing("1\u{a0}USD", "1\u{a0}€", "1"),
            "1\u{a0}USD"
        );
    }

    #[test]
    fn finite_values_are_not_non_finite() {
        assert_eq!(NonFinite::of("1.5"), None);
        assert_eq!(NonFinite::of("-0"), None);
        assert_eq!(SignedNonFinite::of("-1.5"), None);
    }

    #[test]
    fn the_sign_is_a_leading_minus() {
        let signed = |value: &str| SignedNonFinite::of(value).map(|s| (s.non_finite, s.negative));
        assert_eq!(signed("-Infinity"), Some((NonFinite::Infinity, true)));
        assert_eq!(signed("+Infinity"), Some((NonFinite::Infinity, false)));
        assert_eq!(signed("NaN"), Some((NonFinite::NaN, false)));
        assert_eq!(signed("-NaN"), Some((NonFinite::NaN, true)));
    }
}
