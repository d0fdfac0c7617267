//! `Intl.NumberFormat.prototype.format` (and `Number`/`BigInt`
//! `toLocaleString`): the value as an exact decimal (`fixed_decimal`),
//! rounded as ECMA-402 says (half-expand), then the locale's digits,
//! separators, signs and patterns from ICU4X: plain, percent, compact,
//! currency (symbol, narrow symbol, code, name; standard or compact), and
//! units (`units.rs`).

use fixed_decimal::{Decimal, Sign, SignDisplay};
use icu_decimal::options::{DecimalFormatterOptions, GroupingStrategy};
use icu_decimal::{AbstractFormatter, DecimalFormatter};
use icu_experimental::dimension::currency::formatter::CurrencyFormatter;
use icu_experimental::dimension::currency::options::{CurrencyFormatterOptions, CurrencyUsage};
use icu_experimental::dimension::currency::CurrencyType;
use icu_experimental::dimension::percent::formatter::PercentFormatter;
use icu_locale::Locale;
use icu_provider::buf::AsDeserializingBufferProvider;
use rquickjs::Ctx;
use writeable::Writeable;

use super::number_options::{half_expand, load_error, Resolved};
use super::{compact, units, unsupported};

/// `[-]digits[.digits][e[-]exponent]`, exactly.
pub(super) fn parse_exact(text: &str) -> Option<Decimal> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (
            &text[..at],
            text[at + 1..].trim_start_matches('+').parse::<i16>().ok()?,
        ),
        None => (text, 0),
    };
    let mantissa = mantissa.strip_prefix('+').unwrap_or(mantissa);
    let mut decimal = Decimal::try_from_str(mantissa).ok()?;
    decimal.multiply_pow10(exponent);
    Some(decimal)
}

/// ECMA-402 rounding: significant digits when given, else fraction digits.
pub(super) fn round(decimal: &mut Decimal, o: &Resolved) {
    if let Some((min, max)) = o.significant {
        let start = decimal.absolute.nonzero_magnitude_start();
        half_expand(decimal, start - max + 1);
        decimal.absolute.trim_end();
        let start = decimal.absolute.nonzero_magnitude_start();
        decimal.absolute.pad_end(start - min + 1);
    } else if let Some((min, max)) = o.fraction {
        half_expand(decimal, -max);
        decimal.absolute.trim_end();
        decimal.absolute.pad_end(-min);
    }
    decimal.absolute.pad_start(o.minimum_integer_digits);
}

pub(super) fn sign_display(ctx: &Ctx<'_>, name: &str) -> rquickjs::Result<SignDisplay> {
    Ok(match name {
        "auto" => SignDisplay::Auto,
        "never" => SignDisplay::Never,
        "always" => SignDisplay::Always,
        "exceptZero" => SignDisplay::ExceptZero,
        "negative" => SignDisplay::Negative,
        other => {
            return Err(unsupported(
                ctx,
                &format!("Intl.NumberFormat: signDisplay \"{other}\" is not supported"),
            ))
        }
    })
}

pub(super) fn grouping(ctx: &Ctx<'_>, name: &str) -> rquickjs::Result<GroupingStrategy> {
    Ok(match name {
        "auto" => GroupingStrategy::Auto,
        "always" => GroupingStrategy::Always,
        "min2" => GroupingStrategy::Min2,
        "false" => GroupingStrategy::Never,
        other => {
            return Err(unsupported(
                ctx,
                &format!("Intl.NumberFormat: useGrouping \"{other}\" is not supported"),
            ))
        }
    })
}

pub(super) fn plain(ctx: &Ctx<'_>, locale: &Locale, decimal: Decimal) -> rquickjs::Result<String> {
    let formatter = DecimalFormatter::try_new_with_buffer_provider(
        super::data::provider(),
        locale.into(),
        DecimalFormatterOptions::default(),
    )
    .map_err(|e| load_error(ctx, "decimal", e))?;
    Ok(formatter.format(&decimal).write_to_string().into_owned())
}

pub(super) fn format_decimal(
    ctx: &Ctx<'_>,
    locale: &Locale,
    o: &Resolved,
    mut decimal: Decimal,
) -> rquickjs::Result<String> {
    let compact = o.notation == "compact";
    if !compact {
        round(&mut decimal, o);
    }
    // After rounding: -0.001 rounded to 0 is "-0" under `auto` (ECMA-402).
    decimal.apply_sign_display(sign_display(ctx, &o.sign_display)?);
    let mut decimal_options = DecimalFormatterOptions::default();
    decimal_options.grouping_strategy = Some(grouping(ctx, &o.use_grouping)?);
    match (o.style.as_str(), compact) {
        ("currency", _) => currency(ctx, locale, o, &decimal),
        ("decimal", false) => Ok(DecimalFormatter::try_new_with_buffer_provider(
            super::data::provider(),
            locale.into(),
            decimal_options,
        )
        .map_err(|e| load_error(ctx, "decimal", e))?
        .format(&decimal)
        .write_to_string()
        .into_owned()),
        ("decimal", true) => compact::number(ctx, locale, o, decimal_options, &decimal),
        ("unit", true) => {
            // ICU4C picks the unit's plural form before the compact
            // scaling, on the value rounded as compact notation rounds
            // (ru `1,2 тыс. километра`: 1234 is `few`).
            let category = units::category(ctx, locale, &compact::rounded(&decimal))?;
            let number = compact::number(ctx, locale, o, decimal_options, &decimal)?;
            Ok(units::wrap(&o.unit_patterns, category, &number))
        }
        ("percent", false) | ("unit", false) if o.style == "percent" || o.unit_percent => {
            let numbers = DecimalFormatter::try_new_with_buffer_provider(
                super::data::provider(),
                locale.into(),
                decimal_options,
            )
            .map_err(|e| load_error(ctx, "decimal", e))?;
            let formatter = PercentFormatter::try_new_with_decimal_formatter_unstable(
                &super::data::provider().as_deserializing(),
                locale.into(),
                numbers,
                Default::default(),
            )
            .map_err(|e| load_error(ctx, "percent", e))?;
            Ok(formatter.format(&decimal).write_to_string().into_owned())
        }
        ("unit", false) => {
            let number = DecimalFormatter::try_new_with_buffer_provider(
                super::data::provider(),
                locale.into(),
                decimal_options,
            )
            .map_err(|e| load_error(ctx, "decimal", e))?
            .format(&decimal)
            .write_to_string()
            .into_owned();
            let category = units::category(ctx, locale, &decimal)?;
            Ok(units::wrap(&o.unit_patterns, category, &number))
        }
        (style, _) => Err(unsupported(
            ctx,
            &format!(
                "Intl.NumberFormat: style \"{style}\" with notation \"{}\" is not supported",
                o.notation
            ),
        )),
    }
}

fn currency_type(ctx: &Ctx<'_>, o: &Resolved) -> rquickjs::Result<CurrencyType> {
    let code = o.currency.as_deref().unwrap_or_default();
    CurrencyType::try_from_str(code)
        .map_err(|_| unsupported(ctx, &format!("Invalid currency code : {code}")))
}

/// `decimal` with the currency's long name exactly as ICU4X writes it
/// (with the currency's fraction digits, in the plural form of the amount
/// so written), for NaN and ∞ to take the pattern of (`non_finite.rs`).
pub(super) fn currency_name(
    ctx: &Ctx<'_>,
    locale: &Locale,
    o: &Resolved,
    decimal: &Decimal,
) -> rquickjs::Result<String> {
    let currency = currency_type(ctx, o)?;
    currency_formatted(ctx, locale, o, currency, Default::default(), decimal)
}

fn currency(
    ctx: &Ctx<'_>,
    locale: &Locale,
    o: &Resolved,
    decimal: &Decimal,
) -> rquickjs::Result<String> {
    let code = o.currency.as_deref().unwrap_or_default();
    let currency = currency_type(ctx, o)?;
    let mut options = CurrencyFormatterOptions::default();
    if o.currency_sign == "accounting" {
        options.usage = CurrencyUsage::Accounting;
    }
    // ICU4X always shows the currency's digits: format the value padded to
    // them, then put the value's own (fewer) digits in their place.
    if o.notation == "compact" {
        return currency_formatted(ctx, locale, o, currency, options, decimal);
    }
    let mut padded = decimal.clone();
    padded.absolute.pad_end(-o.currency_digits);
    let text = currency_formatted(ctx, locale, o, currency, options, &padded)?;
    if padded == *decimal {
        return Ok(text);
    }
    let unsigned = |absolute| Decimal::new(Sign::None, absolute);
    let long = plain(ctx, locale, unsigned(padded.absolute))?;
    let short = plain(ctx, locale, unsigned(decimal.absolute.clone()))?;
    if !text.contains(&long) {
        return Err(unsupported(
            ctx,
            &format!(
                "Intl.NumberFormat: fewer than {} fraction digits for {code} in {locale}",
                o.currency_digits
            ),
        ));
    }
    Ok(text.replacen(&long, &short, 1))
}

fn currency_formatted(
    ctx: &Ctx<'_>,
    locale: &Locale,
    o: &Resolved,
    currency: CurrencyType,
    options: CurrencyFormatterOptions,
    decimal: &Decimal,
) -> rquickjs::Result<String> {
    let code = o.currency.as_deref().unwrap_or_default();
    let prefs = locale.into();
    let display = o.currency_display.as_str();
    let text = if o.notation == "compact" {
        let long = o.compact_display == "long";
        let formatter = match (display, long) {
            ("symbol", false) => CurrencyFormatter::try_new_compact_symbol_with_buffer_provider(
                super::data::provider(),
                prefs,
                currency,
                options,
            ),
            ("narrowSymbol", false) => {
                CurrencyFormatter::try_new_compact_symbol_narrow_with_buffer_provider(
                    super::data::provider(),
                    prefs,
                    currency,
                    options,
                )
            }
            ("code", false) => CurrencyFormatter::try_new_compact_code_with_buffer_provider(
                super::data::provider(),
                prefs,
                currency,
                options,
            ),
            ("symbol", true) => {
                CurrencyFormatter::try_new_compact_long_symbol_with_buffer_provider(
                    super::data::provider(),
                    prefs,
                    currency,
                    options,
                )
            }
            ("narrowSymbol", true) => {
                CurrencyFormatter::try_new_compact_long_symbol_narrow_with_buffer_provider(
                    super::data::provider(),
                    prefs,
                    currency,
                    options,
                )
            }
            ("code", true) => CurrencyFormatter::try_new_compact_long_code_with_buffer_provider(
                super::data::provider(),
                prefs,
                currency,
                options,
            ),
            _ => CurrencyFormatter::try_new_compact_long_name_with_buffer_provider(
                super::data::provider(),
                prefs,
                currency,
            ),
        }
        .map_err(|e| load_error(ctx, code, e))?;
        written(&formatter, decimal)
    } else {
        let formatter = match display {
            "symbol" => CurrencyFormatter::try_new_symbol_with_buffer_provider(
                super::data::provider(),
                prefs,
                currency,
                options,
            ),
            "narrowSymbol" => CurrencyFormatter::try_new_symbol_narrow_with_buffer_provider(
                super::data::provider(),
                prefs,
                currency,
                options,
            ),
            "code" => CurrencyFormatter::try_new_code_with_buffer_provider(
                super::data::provider(),
                prefs,
                currency,
                options,
            ),
            _ => CurrencyFormatter::try_new_name_with_buffer_provider(
                super::data::provider(),
                prefs,
                currency,
            ),
        }
        .map_err(|e| load_error(ctx, code, e))?;
        written(&formatter, decimal)
    };
    Ok(text)
}

fn written<V: AbstractFormatter>(formatter: &CurrencyFormatter<V>, decimal: &Decimal) -> String {
    formatter
        .format_fixed_decimal(decimal)
        .write_to_string()
        .into_owned()
}
