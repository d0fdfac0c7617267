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
            $(($s, $u) => RelativeTimeFormatter::$new($prefs, $options),)*
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
        ("long", "second", try_new_long_second),
        ("long", "minute", try_new_long_minute),
        ("long", "hour", try_new_long_hour),
        ("long", "day", try_new_long_day),
        ("long", "week", try_new_long_week),
        ("long", "month", try_new_long_month),
        ("long", "quarter", try_new_long_quarter),
        ("long", "year", try_new_long_year),
        ("short", "second", try_new_short_second),
        ("short", "minute", try_new_short_minute),
        ("short", "hour", try_new_short_hour),
        ("short", "day", try_new_short_day),
        ("short", "week", try_new_short_week),
        ("short", "month", try_new_short_month),
        ("short", "quarter", try_new_short_quarter),
        ("short", "year", try_new_short_year),
        ("narrow", "second", try_new_narrow_second),
        ("narrow", "minute", try_new_narrow_minute),
        ("narrow", "hour", try_new_narrow_hour),
        ("narrow", "day", try_new_narrow_day),
        ("narrow", "week", try_new_narrow_week),
        ("narrow", "month", try_new_narrow_month),
        ("narrow", "quarter", try_new_narrow_quarter),
        ("narrow", "year", try_new_narrow_year),
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
