//! `Intl.DateTimeFormat` (and `Date.prototype.toLocale*String`): the
//! instant moved into an IANA time zone by `jiff` (the tz database is
//! compiled in: a sandbox has no /usr/share/zoneinfo), then formatted by
//! ICU4X in the Gregorian calendar from the ECMA-402 options: `dateStyle`/
//! `timeStyle`, or the component options through ICU4X's ECMA-402 field bag;
//! dates with a numeric month patterned as Node does ([`super::numeric_dates`]).

use icu_calendar::{AnyCalendarKind, Date, Gregorian};
use icu_datetime::fieldsets::enums::CompositeFieldSet;
use icu_datetime::parts as date_parts;
use icu_datetime::pattern::{DateTimePattern, FixedCalendarDateTimeNames};
use icu_datetime::FixedCalendarDateTimeFormatter;
use icu_locale::Locale;
use icu_provider::buf::AsDeserializingBufferProvider;
use icu_time::zone::{IanaParser, UtcOffset};
use icu_time::{DateTime, Time, ZonedDateTime};
use rquickjs::{Ctx, Object};
use writeable::{Part, Writeable};

use super::date_fields::{components, field_set, text};
use super::numeric_dates::{self, Skeleton};
use super::parts::{Collector, Parts, Run};
use super::{parse_locale, unsupported};

type Zoned = ZonedDateTime<Gregorian, icu_time::TimeZoneInfo<icu_time::zone::models::AtTime>>;

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
    let runs = runs(&ctx, &locale, &options, &zone, epoch_ms)?;
    Ok(runs.iter().map(|run| run.text.as_str()).collect())
}

/// `formatToParts`: `format`'s string cut into ECMA-402's parts (the field
/// each run of ICU4X's output was written for; text between fields a
/// `literal`).
pub fn format_to_parts(
    ctx: Ctx<'_>,
    locale: String,
    options: Object<'_>,
    zone: String,
    epoch_ms: f64,
) -> rquickjs::Result<Vec<Vec<String>>> {
    let mut parts = Parts::default();
    for run in runs(&ctx, &locale, &options, &zone, epoch_ms)? {
        let kind = run.parts.first().map_or("literal", |&part| part_type(part));
        parts.push(kind, &run.text);
    }
    Ok(parts.into_pairs())
}

fn part_type(part: Part) -> &'static str {
    const TYPES: [(Part, &str); 12] = [
        (date_parts::ERA, "era"),
        (date_parts::YEAR, "year"),
        (date_parts::RELATED_YEAR, "relatedYear"),
        (date_parts::YEAR_NAME, "yearName"),
        (date_parts::MONTH, "month"),
        (date_parts::DAY, "day"),
        (date_parts::WEEKDAY, "weekday"),
        (date_parts::DAY_PERIOD, "dayPeriod"),
        (date_parts::HOUR, "hour"),
        (date_parts::MINUTE, "minute"),
        (date_parts::SECOND, "second"),
        (date_parts::TIME_ZONE_NAME, "timeZoneName"),
    ];
    TYPES
        .iter()
        .find(|(known, _)| *known == part)
        .map_or("literal", |(_, kind)| kind)
}

/// The runs of text of the formatted instant, each with its ICU4X parts.
fn runs(
    ctx: &Ctx<'_>,
    locale: &str,
    options: &Object<'_>,
    zone: &str,
    epoch_ms: f64,
) -> rquickjs::Result<Vec<Run>> {
    let ctx = ctx.clone();
    let options = options.clone();
    let locale = parse_locale(&ctx, locale)?;
    require_gregorian(&ctx, &locale)?;
    let input = zoned(&ctx, zone, epoch_ms)?;
    let runs = match numeric_date(&ctx, &locale, &options, &input)? {
        Some(pattern) => format_pattern(&ctx, &locale, &pattern, &input)?,
        None => {
            let (runs, pattern) = format_fields(&ctx, &locale, field_set(&ctx, &options)?, &input)?;
            match hour_width(&options)? {
                Some(width) if numeric_dates::with_hour_width(&pattern, width) != pattern => {
                    let pattern = numeric_dates::with_hour_width(&pattern, width);
                    format_pattern(&ctx, &locale, &pattern, &input)?
                }
                _ => runs,
            }
        }
    };
    // As V8 does since Chrome 110 (web compatibility): CLDR's narrow
    // no-break space before AM/PM becomes a space.
    Ok(runs
        .into_iter()
        .map(|run| Run {
            text: run.text.replace('\u{202f}', " "),
            ..run
        })
        .collect())
}

/// The width a requested `hour` component is given: none when hour,
/// minute and second are all `numeric` (the CLDR pattern's hour stands:
/// en-GB `09:30`), else 1 for a numeric hour, 2 for a two-digit one
/// (en-GB `{ hour: "numeric", minute: "2-digit" }` is `9:30` in Node).
fn hour_width(options: &Object<'_>) -> rquickjs::Result<Option<usize>> {
    let mut two_digit = false;
    for key in ["hour", "minute", "second"] {
        two_digit |= text(options, key)?.as_deref() == Some("2-digit");
    }
    Ok(match text(options, "hour")?.as_deref() {
        Some("numeric") if two_digit => Some(1),
        Some("2-digit") => Some(2),
        _ => None,
    })
}

/// The runs of text and the pattern ICU4X chose for `fields`.
fn format_fields(
    ctx: &Ctx<'_>,
    locale: &Locale,
    fields: CompositeFieldSet,
    input: &Zoned,
) -> rquickjs::Result<(Vec<Run>, String)> {
    let formatter = FixedCalendarDateTimeFormatter::<Gregorian, CompositeFieldSet>::try_new_with_buffer_provider(
        super::data::provider(),
        locale.into(),
        fields,
    )
    .map_err(|e| {
        unsupported(
            ctx,
            &format!("Intl.DateTimeFormat: no data for {locale}: {e}"),
        )
    })?;
    let formatted = formatter.format(input);
    Ok((
        Collector::runs(&formatted),
        formatted.pattern().write_to_string().into_owned(),
    ))
}

/// `pattern` (CLDR syntax) with ICU4X's names and numbers for `locale`.
fn format_pattern(
    ctx: &Ctx<'_>,
    locale: &Locale,
    pattern: &str,
    input: &Zoned,
) -> rquickjs::Result<Vec<Run>> {
    let failed = |e: &dyn std::fmt::Display| {
        unsupported(
            ctx,
            &format!("Intl.DateTimeFormat: pattern \"{pattern}\" for {locale}: {e}"),
        )
    };
    let pattern = DateTimePattern::try_from_pattern_str(pattern).map_err(|e| failed(&e))?;
    let mut names = FixedCalendarDateTimeNames::<Gregorian, CompositeFieldSet>::try_new_unstable(
        &super::data::provider().as_deserializing(),
        locale.into(),
    )
    .map_err(|e| failed(&e))?;
    let formatter = names
        .load_for_pattern(&super::data::provider().as_deserializing(), &pattern)
        .map_err(|e| failed(&e))?;
    let formatted = formatter.format(input);
    Collector::try_runs(&formatted).map_err(|e| failed(&e))
}

/// The whole pattern of a request whose date fields are numeric-month
/// ones (no `dateStyle`/`timeStyle`, no textual month), or `None`.
fn numeric_date(
    ctx: &Ctx<'_>,
    locale: &Locale,
    options: &Object<'_>,
    input: &Zoned,
) -> rquickjs::Result<Option<String>> {
    if text(options, "dateStyle")?.is_some() || text(options, "timeStyle")?.is_some() {
        return Ok(None);
    }
    let width = |key: &str| -> rquickjs::Result<Option<usize>> {
        Ok(match text(options, key)?.as_deref() {
            None => Some(0),
            Some("numeric" | "short") => Some(1),
            Some("2-digit") => Some(2),
            Some("long") => Some(4),
            Some(_) => None,
        })
    };
    let (Some(year), Some(month), Some(weekday), Some(day)) = (
        width("year")?,
        width("month")?,
        width("weekday")?,
        width("day")?,
    ) else {
        return Ok(None);
    };
    let textual_month = matches!(text(options, "month")?.as_deref(), Some("short" | "long"));
    if textual_month || year + month + weekday + day == 0 {
        return Ok(None);
    }
    let request = Skeleton {
        year,
        month,
        weekday,
        day,
    };
    let Some((date, glue)) = numeric_dates::pattern(locale, &request) else {
        return Ok(None);
    };
    Ok(Some(match time_part(ctx, locale, options, input)? {
        None => date,
        Some(time) => glue.replace("{1}", &date).replace("{0}", &time),
    }))
}

/// The pattern of the time and zone fields alone, as ICU4X patterns them;
/// a zone without a time is its symbol alone (Node: `3/5/2024, EST`).
fn time_part(
    ctx: &Ctx<'_>,
    locale: &Locale,
    options: &Object<'_>,
    input: &Zoned,
) -> rquickjs::Result<Option<String>> {
    let mut bag = components(ctx, options)?;
    (bag.year, bag.month, bag.day, bag.weekday) = (None, None, None, None);
    if bag.hour.is_none() && bag.minute.is_none() && bag.second.is_none() {
        let zone = text(options, "timeZoneName")?;
        return Ok(zone.map(|name| {
            match name.as_str() {
                "long" => "zzzz",
                "shortOffset" => "O",
                "longOffset" => "OOOO",
                "shortGeneric" => "v",
                "longGeneric" => "vvvv",
                _ => "z",
            }
            .to_owned()
        }));
    }
    let fields = bag.to_field_set_builder().build_composite().map_err(|e| {
        unsupported(
            ctx,
            &format!("Intl.DateTimeFormat: this combination of options is not supported ({e})"),
        )
    })?;
    let pattern = format_fields(ctx, locale, fields, input)?.1;
    Ok(Some(match hour_width(options)? {
        Some(width) => numeric_dates::with_hour_width(&pattern, width),
        None => pattern,
    }))
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

fn zoned(ctx: &Ctx<'_>, zone: &str, epoch_ms: f64) -> rquickjs::Result<Zoned> {
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
    let parser = IanaParser::try_new_with_buffer_provider(super::data::provider())
        .map_err(|e| unsupported(ctx, &format!("Intl.DateTimeFormat: no time zone data: {e}")))?;
    let id = parser
        .as_borrowed()
        .parse(if zone == "UTC" { "Etc/UTC" } else { zone });
    let info = id
        .with_offset(Some(offset))
        .at_date_time(DateTime { date, time });
    Ok(ZonedDateTime {
        date,
        time,
        zone: info,
    })
}
