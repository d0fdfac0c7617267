//! `Intl` and the `toLocale*` methods from ICU4X and its CLDR data (a blob
//! compiled in, data.rs; docs/code-mode.md, "Intl"); time zones from the
//! IANA database compiled into `jiff`.
//!
//! The ECMA-402 surface (constructors, option reading and validation,
//! `resolvedOptions`) is JavaScript (`intl.js`), run once with the native
//! helpers of this module; each helper takes a locale already accepted by
//! `intl.js` from [`locales::supported`] and options already validated, and formats with
//! ICU4X. An option or locale no helper can honour is a `RangeError`
//! naming it, never a different result.

mod cldr_table;
mod collation;
mod compact;
mod data;
mod date_fields;
mod date_refusals;
mod dates;
mod lists;
mod locales;
mod non_finite;
mod number_format;
mod number_options;
mod number_parts;
mod numbers;
mod numeric_dates;
mod parts;
mod plurals;
mod relative;
mod units;

use icu_plurals::PluralCategory;
use rquickjs::{Ctx, Exception, Function, Object};

pub(crate) const SCRIPT: &str = include_str!("intl.js");
/// `Intl.DateTimeFormat`'s half of `intl.js`: a factory it calls.
pub(crate) const DATE_TIME_FORMAT_SCRIPT: &str = include_str!("datetime_format.js");

/// The native helpers `intl.js` receives; bound to no global.
pub fn natives<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let native = Object::new(ctx.clone())?;
    native.prop(
        "canonicalLocale",
        Function::new(ctx.clone(), locales::canonical)?,
    )?;
    native.prop(
        "localeSupported",
        Function::new(ctx.clone(), locales::supported)?,
    )?;
    native.prop("collator", Function::new(ctx.clone(), collation::collator)?)?;
    native.prop("compare", Function::new(ctx.clone(), collation::compare)?)?;
    native.prop(
        "formatNumber",
        Function::new(ctx.clone(), number_format::format)?,
    )?;
    native.prop(
        "formatNumberToParts",
        Function::new(ctx.clone(), number_parts::format_to_parts)?,
    )?;
    native.prop("unitPatterns", Function::new(ctx.clone(), units::patterns)?)?;
    native.prop("pluralSelect", Function::new(ctx.clone(), plurals::select)?)?;
    native.prop(
        "pluralCategories",
        Function::new(ctx.clone(), plurals::categories)?,
    )?;
    native.prop("formatList", Function::new(ctx.clone(), lists::format)?)?;
    native.prop(
        "formatRelative",
        Function::new(ctx.clone(), relative::format)?,
    )?;
    native.prop("formatDate", Function::new(ctx.clone(), dates::format)?)?;
    native.prop(
        "formatDateToParts",
        Function::new(ctx.clone(), dates::format_to_parts)?,
    )?;
    native.prop(
        "dateShapeRefused",
        Function::new(ctx.clone(), date_refusals::refused)?,
    )?;
    native.prop(
        "resolveTimeZone",
        Function::new(ctx.clone(), dates::resolve_time_zone)?,
    )?;
    Ok(native)
}

/// A `RangeError` naming what is not supported.
fn unsupported(ctx: &Ctx<'_>, what: &str) -> rquickjs::Error {
    Exception::throw_range(ctx, what)
}

/// A locale tag `locales::resolve` accepted, parsed again.
fn parse_locale(ctx: &Ctx<'_>, tag: &str) -> rquickjs::Result<icu_locale::Locale> {
    icu_locale::Locale::try_from_str(tag).map_err(|_| {
        unsupported(
            ctx,
            &format!("Incorrect locale information provided: {tag}"),
        )
    })
}

/// A CLDR plural category's ECMA-402 name.
fn plural_name(category: PluralCategory) -> &'static str {
    match category {
        PluralCategory::Zero => "zero",
        PluralCategory::One => "one",
        PluralCategory::Two => "two",
        PluralCategory::Few => "few",
        PluralCategory::Many => "many",
        PluralCategory::Other => "other",
    }
}
