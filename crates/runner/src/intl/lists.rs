//! `Intl.ListFormat`: CLDR list patterns ("a, b, and c").

use icu_list::options::{ListFormatterOptions, ListLength};
use icu_list::ListFormatter;
use rquickjs::Ctx;

use writeable::Writeable;

use super::{parse_locale, unsupported};

/// `kind`: conjunction, disjunction or unit; `style`: long, short, narrow.
pub fn format(
    ctx: Ctx<'_>,
    locale: String,
    kind: String,
    style: String,
    items: Vec<String>,
) -> rquickjs::Result<String> {
    let length = match style.as_str() {
        "long" => ListLength::Wide,
        "short" => ListLength::Short,
        "narrow" => ListLength::Narrow,
        other => {
            return Err(unsupported(
                &ctx,
                &format!("Intl.ListFormat: style \"{other}\" is not supported"),
            ))
        }
    };
    let prefs = (&parse_locale(&ctx, &locale)?).into();
    let options = ListFormatterOptions::default().with_length(length);
    let formatter = match kind.as_str() {
        "conjunction" => {
            ListFormatter::try_new_and_with_buffer_provider(super::data::provider(), prefs, options)
        }
        "disjunction" => {
            ListFormatter::try_new_or_with_buffer_provider(super::data::provider(), prefs, options)
        }
        "unit" => ListFormatter::try_new_unit_with_buffer_provider(
            super::data::provider(),
            prefs,
            options,
        ),
        other => {
            return Err(unsupported(
                &ctx,
                &format!("Intl.ListFormat: type \"{other}\" is not supported"),
            ))
        }
    }
    .map_err(|e| unsupported(&ctx, &format!("Intl.ListFormat: no data for {locale}: {e}")))?;
    Ok(formatter
        .format(items.iter())
        .write_to_string()
        .into_owned())
}
