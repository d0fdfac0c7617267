//! `Intl.DateTimeFormat` (and `Date.prototype.toLocale*String`): the
//! instant moved into an IANA time zone by `jiff` (the tz database is
//! compiled in: a sandbox has no /usr/share/zoneinfo), then formatted by
//! ICU4X in the Gregorian calendar from the ECMA-402 options: `dateStyle`/
//! `timeStyle`, or the component options through ICU4X's ECMA-402 field bag.

use icu_calendar::{AnyCalendarKind, Date, Gregorian};
use icu_datetime::fieldbag::field;
use icu_datetime::fieldbag::DateTimeFieldBag;
use icu_datetime::fieldsets::builder::{DateFields, FieldSetBuilder, ZoneStyle};
use icu_datetime::fieldsets::enums::CompositeFieldSet;
use icu_datetime::options::{Length, TimePrecision};
use icu_datetime::FixedCalendarDateTimeFormatter;
use icu_locale::Locale;
use icu_time::zone::{IanaParser, UtcOffset};
use icu_time::{DateTime, Time, ZonedDateTime};
use rquickjs::{Ctx, Object};
use writeable::Writeable;

use super::{parse_locale, unsupported};

/// Names ECMA-402 resolves to "UTC".
const UTC_NAMES: [&str; 6] = ["UTC", "Etc/UTC", "GMT", "Etc/GMT", "Etc/UCT", "UCT"];

/// The IANA name as the tz database spells it ("UTC" for its aliases), or
/// a `RangeError` naming an unknown zone.
pub fn resolve_time_zone(ctx: Ctx<'_>, name: String) -> rquickjs::Result<String> {
    let zone = jiff::tz::TimeZone::get(&name)
        .map_err(|_| unsupported(&ctx, &format!("Invalid time zone specified: {name}")))?;
    let canonical = zone.iana_name().unwrap_or(&name).to_owned();
    if UTC_NAMES
        .iter()
        .any(|utc| utc.eq_ignore_ascii_case(&canonical))
    {
        return Ok("UTC".to_owned());
    }
    Ok(canonical)
}

/// Formats `epoch_ms` in `zone` (a name `resolve_time_zone` returned).
pub fn format(
    ctx: Ctx<'_>,
    locale: String,
    options: Object<'_>,
    zone: String,
    epoch_ms: f64,
) -> rquickjs::Result<String> {
    let locale = parse_locale(&ctx, &locale)?;
    require_gregorian(&ctx, &locale)?;
    let fields = field_set(&ctx, &options)?;
    let input = zoned(&ctx, &zone, epoch_ms)?;
    let formatter = FixedCalendarDateTimeFormatter::<Gregorian, CompositeFieldSet>::try_new(
        (&locale).into(),
        fields,
    )
    .map_err(|e| {
        unsupported(
            &ctx,
            &format!("Intl.DateTimeFormat: no data for {locale}: {e}"),
        )
    })?;
    // As V8 does since Chrome 110 (web compatibility): CLDR's narrow
    // no-break space before AM/PM becomes a space.
    Ok(formatter
        .format(&input)
        .write_to_string()
        .replace('\u{202f}', " "))
}

/// Only the Gregorian calendar is compiled in: a locale whose default is
/// another (th, fa, ar-SA…) or a `-u-ca-` asking for one is refused.
fn require_gregorian(ctx: &Ctx<'_>, locale: &Locale) -> rquickjs::Result<()> {
    #[allow(deprecated)] // `try_new` needs a data provider for the same answer
    let kind = AnyCalendarKind::new(locale.into());
    if kind == AnyCalendarKind::Gregorian {
        return Ok(());
    }
    Err(unsupported(
        ctx,
        &format!(
            "Intl.DateTimeFormat: calendar {kind:?} of {locale} is not supported (Gregorian only)"
        ),
    ))
}

fn zoned(
    ctx: &Ctx<'_>,
    zone: &str,
    epoch_ms: f64,
) -> rquickjs::Result<
    ZonedDateTime<Gregorian, icu_time::TimeZoneInfo<icu_time::zone::models::AtTime>>,
> {
    let invalid = || unsupported(ctx, "Invalid time value");
    let tz = jiff::tz::TimeZone::get(zone)
        .map_err(|_| unsupported(ctx, &format!("Invalid time zone specified: {zone}")))?;
    let at = jiff::Timestamp::from_millisecond(epoch_ms.floor() as i64).map_err(|_| invalid())?;
    let local = at.to_zoned_datetime(tz);
    let civil = local.datetime();
    let date = Date::try_new_gregorian(
        i32::from(civil.year()),
        civil.month() as u8,
        civil.day() as u8,
    )
    .map_err(|_| invalid())?;
    let time = Time::try_new(
        civil.hour() as u8,
        civil.minute() as u8,
        civil.second() as u8,
        civil.subsec_nanosecond() as u32,
    )
    .map_err(|_| invalid())?;
    let offset = UtcOffset::try_from_seconds(local.offset().seconds()).map_err(|_| invalid())?;
    let id = IanaParser::new().parse(if zone == "UTC" { "Etc/UTC" } else { zone });
    let info = id
        .with_offset(Some(offset))
        .at_date_time(DateTime { date, time });
    Ok(ZonedDateTime {
        date,
        time,
        zone: info,
    })
}

fn text(options: &Object<'_>, key: &str) -> rquickjs::Result<Option<String>> {
    options.get::<_, Option<String>>(key)
}

fn field_set(ctx: &Ctx<'_>, options: &Object<'_>) -> rquickjs::Result<CompositeFieldSet> {
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
fn components(ctx: &Ctx<'_>, options: &Object<'_>) -> rquickjs::Result<DateTimeFieldBag> {
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
