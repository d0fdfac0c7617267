//! `notation: "compact"` (`1.2K`, `1,2 Tausend`) for `numbers.rs`: the
//! number as ICU4X's compact formatter writes it, and the value rounded as
//! ICU4C rounds compact notation (the plural form of a unit is picked on
//! it).

use fixed_decimal::Decimal;
use icu_decimal::options::{CompactDecimalFormatterOptions, DecimalFormatterOptions};
use icu_decimal::CompactDecimalFormatter;
use icu_locale::Locale;
use rquickjs::Ctx;
use writeable::Writeable;

use super::number_options::{half_expand, load_error, Resolved};

/// `decimal` in compact notation (`1.2K`, `1,2 Tausend`), unrounded:
/// ICU4X rounds it as it scales it.
pub(super) fn number(
    ctx: &Ctx<'_>,
    locale: &Locale,
    o: &Resolved,
    decimal_options: DecimalFormatterOptions,
    decimal: &Decimal,
) -> rquickjs::Result<String> {
    let mut options = CompactDecimalFormatterOptions::default();
    options.grouping_strategy = decimal_options.grouping_strategy;
    let formatter = if o.compact_display == "long" {
        CompactDecimalFormatter::try_new_long_with_buffer_provider(
            super::data::provider(),
            locale.into(),
            options,
        )
    } else {
        CompactDecimalFormatter::try_new_short_with_buffer_provider(
            super::data::provider(),
            locale.into(),
            options,
        )
    };
    Ok(formatter
        .map_err(|e| load_error(ctx, "compact notation", e))?
        .format(decimal)
        .write_to_string()
        .into_owned())
}

/// The unscaled value rounded as ICU4C rounds compact notation
/// (`Precision::integer().withMinDigits(2)`, half-expand): to an integer
/// when it has two integer digits or more (1234 → 1234), else to two
/// significant digits (1.234 → 1.2, 0.256 → 0.26), trailing zeros dropped.
pub(super) fn rounded(decimal: &Decimal) -> Decimal {
    let mut rounded = decimal.clone();
    let start = rounded.absolute.nonzero_magnitude_start();
    half_expand(&mut rounded, (start - 1).min(0));
    rounded.absolute.trim_end();
    rounded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounded_text(text: &str) -> String {
        rounded(&Decimal::try_from_str(text).expect("a decimal")).to_string()
    }

    #[test]
    fn compact_rounding_keeps_integers_from_two_digits_and_two_significant_below() {
        assert_eq!(rounded_text("1234"), "1234");
        assert_eq!(rounded_text("12.5"), "13");
        assert_eq!(rounded_text("1.234"), "1.2");
        assert_eq!(rounded_text("0.256"), "0.26");
        assert_eq!(rounded_text("1.0"), "1");
        assert_eq!(rounded_text("-0.0001"), "-0.0001");
    }
}
