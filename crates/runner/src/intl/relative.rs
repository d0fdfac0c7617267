//! `Intl.RelativeTimeFormat`: CLDR relative-time patterns ("in 3 days",
//! "yesterday" with `numeric: "auto"`), from ICU4X's experimental crate.

use icu_experimental::relativetime::options::Numeric;
use icu_experimental::relativetime::{RelativeTimeFormatter, RelativeTimeFormatterOptions};
use rquickjs::{Ctx, Object};
use writeable::Writeable;

use super::number_options::read;
use super::numbers::{parse_exact, round};
use super::{parse_locale, unsupported};

/// One constructor per (style, unit): ICU4X loads one unit's data at a time.
macro_rules! by_unit {
    ($ctx:expr, $style:expr, $unit:expr, $prefs:expr, $options:expr, $(($s:literal, $u:literal, $new:ident)),* $(,)?) => {
        match ($style, $unit) {
            $(($s, $u) => RelativeTimeFormatter::$new(super::data::provider(), $prefs, $options),)*
            (style, unit) => return Err(unsupported($ctx, &format!(
                "Intl.RelativeTimeFormat: unit \"{unit}\" with style \"{style}\" is not supported"))),
        }
    };
}

/// `value` (a finite number's text, `-0` kept) in `unit` (singular).
pub fn format(
    ctx: Ctx<'_>,
    locale: String,
    style: String,
    numeric: String,
    unit: String,
    options: Object<'_>,
    value: String,
) -> rquickjs::Result<String> {
    let prefs = (&parse_locale(&ctx, &locale)?).into();
    let numeric = if numeric == "auto" {
        Numeric::Auto
    } else {
        Numeric::Always
    };
    let options_icu = RelativeTimeFormatterOptions::default().with_numeric(numeric);
    let formatter = by_unit!(
        &ctx,
        style.as_str(),
        unit.as_str(),
        prefs,
        options_icu,
        ("long", "second", try_new_long_second_with_buffer_provider),
        ("long", "minute", try_new_long_minute_with_buffer_provider),
        ("long", "hour", try_new_long_hour_with_buffer_provider),
        ("long", "day", try_new_long_day_with_buffer_provider),
        ("long", "week", try_new_long_week_with_buffer_provider),
        ("long", "month", try_new_long_month_with_buffer_provider),
        ("long", "quarter", try_new_long_quarter_with_buffer_provider),
        ("long", "year", try_new_long_year_with_buffer_provider),
        ("short", "second", try_new_short_second_with_buffer_provider),
        ("short", "minute", try_new_short_minute_with_buffer_provider),
        ("short", "hour", try_new_short_hour_with_buffer_provider),
        ("short", "day", try_new_short_day_with_buffer_provider),
        ("short", "week", try_new_short_week_with_buffer_provider),
        ("short", "month", try_new_short_month_with_buffer_provider),
        (
            "short",
            "quarter",
            try_new_short_quarter_with_buffer_provider
        ),
        ("short", "year", try_new_short_year_with_buffer_provider),
        (
            "narrow",
            "second",
            try_new_narrow_second_with_buffer_provider
        ),
        (
            "narrow",
            "minute",
            try_new_narrow_minute_with_buffer_provider
        ),
        ("narrow", "hour", try_new_narrow_hour_with_buffer_provider),
        ("narrow", "day", try_new_narrow_day_with_buffer_provider),
        ("narrow", "week", try_new_narrow_week_with_buffer_provider),
        ("narrow", "month", try_new_narrow_month_with_buffer_provider),
        (
            "narrow",
            "quarter",
            try_new_narrow_quarter_with_buffer_provider
        ),
        ("narrow", "year", try_new_narrow_year_with_buffer_provider),
    )
    .map_err(|e| {
        unsupported(
            &ctx,
            &format!("Intl.RelativeTimeFormat: no data for {locale}: {e}"),
        )
    })?;
    let mut decimal = parse_exact(&value).ok_or_else(|| {
        unsupported(
            &ctx,
            &format!("Intl.RelativeTimeFormat: cannot read {value}"),
        )
    })?;
    round(&mut decimal, &read(&options)?);
    Ok(formatter.format(decimal).write_to_string().into_owned())
}
