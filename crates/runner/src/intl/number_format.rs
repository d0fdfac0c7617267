//! The entry of `Intl.NumberFormat.prototype.format` (and `Number`/`BigInt`
//! `toLocaleString`): NaN and ±Infinity go to `non_finite.rs`, every
//! finite value to `numbers.rs`.

use rquickjs::{Ctx, Object};

use super::non_finite::{self, SignedNonFinite};
use super::number_options::read;
use super::numbers::{format_decimal, parse_exact};
use super::{parse_locale, unsupported};

/// Formats `value`: a JavaScript number's shortest round-trip text, a
/// BigInt's digits, or a decimal string (all exact), or `NaN`/`Infinity`.
pub fn format(
    ctx: Ctx<'_>,
    locale: String,
    options: Object<'_>,
    value: String,
) -> rquickjs::Result<String> {
    let o = read(&options)?;
    let locale = parse_locale(&ctx, &locale)?;
    if let Some(non_finite) = SignedNonFinite::of(&value) {
        return non_finite::format(&ctx, &locale, &o, non_finite);
    }
    let mut decimal = parse_exact(&value).ok_or_else(|| {
        unsupported(
            &ctx,
            &format!("Intl.NumberFormat: cannot read {value} as a number"),
        )
    })?;
    if o.style == "percent" {
        decimal.multiply_pow10(2);
    }
    format_decimal(&ctx, &locale, &o, decimal)
}
