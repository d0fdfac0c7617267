//! The ECMA-402 component options of `Intl.DateTimeFormat` (validated by
//! `intl.js`) as ICU4X field sets: `dateStyle`/`timeStyle` as CLDR lengths,
//! the components through ICU4X's ECMA-402 field bag.

use icu_datetime::fieldbag::field;
use icu_datetime::fieldbag::DateTimeFieldBag;
use icu_datetime::fieldsets::builder::{DateFields, FieldSetBuilder, ZoneStyle};
use icu_datetime::fieldsets::enums::CompositeFieldSet;
use icu_datetime::options::{Length, TimePrecision};
use rquickjs::{Ctx, Object};

use super::unsupported;

pub fn text(options: &Object<'_>, key: &str) -> rquickjs::Result<Option<String>> {
    options.get::<_, Option<String>>(key)
}

pub fn field_set(ctx: &Ctx<'_>, options: &Object<'_>) -> rquickjs::Result<CompositeFieldSet> {
    let date_style = text(options, "dateStyle")?;
    let time_style = text(options, "timeStyle")?;
    let builder = if date_style.is_some() || time_style.is_some() {
        styles(date_style.as_deref(), time_style.as_deref())
    } else {
        components(ctx, options)?.to_field_set_builder()
    };
    builder.build_composite().map_err(|e| {
        unsupported(
            ctx,
            &format!("Intl.DateTimeFormat: this combination of options is not supported ({e})"),
        )
    })
}

/// `dateStyle`/`timeStyle` as CLDR's date and time lengths.
fn styles(date_style: Option<&str>, time_style: Option<&str>) -> FieldSetBuilder {
    let mut builder = FieldSetBuilder::new();
    builder.length = Some(match date_style {
        Some("full" | "long") => Length::Long,
        Some("short") => Length::Short,
        _ => Length::Medium,
    });
    builder.date_fields = date_style.map(|style| match style {
        "full" => DateFields::YMDE,
        _ => DateFields::YMD,
    });
    builder.time_precision = time_style.map(|style| match style {
        "short" => TimePrecision::Minute,
        _ => TimePrecision::Second,
    });
    builder.zone_style = match time_style {
        Some("full") => Some(ZoneStyle::SpecificLong),
        Some("long") => Some(ZoneStyle::SpecificShort),
        _ => None,
    };
    builder
}

/// A `numeric`/`2-digit` option as its field-bag value.
fn two_digit<T>(
    ctx: &Ctx<'_>,
    key: &str,
    value: Option<String>,
    numeric: T,
    two_digit: T,
) -> rquickjs::Result<Option<T>> {
    match value.as_deref() {
        None => Ok(None),
        Some("numeric") => Ok(Some(numeric)),
        Some("2-digit") => Ok(Some(two_digit)),
        Some(other) => Err(unsupported(
            ctx,
            &format!("Intl.DateTimeFormat: {key} \"{other}\" is not supported"),
        )),
    }
}

/// The component options (validated by `intl.js`) as ICU4X's field bag.
pub fn components(ctx: &Ctx<'_>, options: &Object<'_>) -> rquickjs::Result<DateTimeFieldBag> {
    let mut bag = DateTimeFieldBag::default();
    let get = |key: &str| text(options, key);
    let bad = |key: &str, value: &str| {
        unsupported(
            ctx,
            &format!("Intl.DateTimeFormat: {key} \"{value}\" is not supported"),
        )
    };
    bag.year = two_digit(
        ctx,
        "year",
        get("year")?,
        field::Year::Numeric,
        field::Year::TwoDigit,
    )?;
    bag.day = two_digit(
        ctx,
        "day",
        get("day")?,
        field::Day::Numeric,
        field::Day::TwoDigit,
    )?;
    bag.hour = two_digit(
        ctx,
        "hour",
        get("hour")?,
        field::Hour::Numeric,
        field::Hour::TwoDigit,
    )?;
    bag.minute = two_digit(
        ctx,
        "minute",
        get("minute")?,
        field::Minute::Numeric,
        field::Minute::TwoDigit,
    )?;
    bag.second = two_digit(
        ctx,
        "second",
        get("second")?,
        field::Second::Numeric,
        field::Second::TwoDigit,
    )?;
    bag.month = match get("month")?.as_deref() {
        None => None,
        Some("numeric") => Some(field::Month::Numeric),
        Some("2-digit") => Some(field::Month::TwoDigit),
        Some("short") => Some(field::Month::Short),
        Some("long") => Some(field::Month::Long),
        Some("narrow") => Some(field::Month::Narrow),
        Some(other) => return Err(bad("month", other)),
    };
    bag.weekday = match get("weekday")?.as_deref() {
        None => None,
        Some("short") => Some(field::Weekday::Short),
        Some("long") => Some(field::Weekday::Long),
        Some("narrow") => Some(field::Weekday::Narrow),
        Some(other) => return Err(bad("weekday", other)),
    };
    bag.time_zone_name = match get("timeZoneName")?.as_deref() {
        None => None,
        Some("short") => Some(field::TimeZoneName::ShortSpecific),
        Some("long") => Some(field::TimeZoneName::LongSpecific),
        Some("shortOffset") => Some(field::TimeZoneName::ShortOffset),
        Some("longOffset") => Some(field::TimeZoneName::LongOffset),
        Some("shortGeneric") => Some(field::TimeZoneName::ShortGeneric),
        Some("longGeneric") => Some(field::TimeZoneName::LongGeneric),
        Some(other) => return Err(bad("timeZoneName", other)),
    };
    Ok(bag)
}
