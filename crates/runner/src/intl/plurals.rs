//! `Intl.PluralRules`: CLDR plural rules (cardinal and ordinal) applied to
//! the number as `Intl.NumberFormat` would round it.

use icu_plurals::PluralRules;
use rquickjs::{Ctx, Object};

use super::number_options::read;
use super::numbers::{parse_exact, round};
use super::{parse_locale, plural_name, unsupported};

fn rules(ctx: &Ctx<'_>, locale: &str, kind: &str) -> rquickjs::Result<PluralRules> {
    let prefs = (&parse_locale(ctx, locale)?).into();
    let rules = match kind {
        "cardinal" => {
            PluralRules::try_new_cardinal_with_buffer_provider(super::data::provider(), prefs)
        }
        "ordinal" => {
            PluralRules::try_new_ordinal_with_buffer_provider(super::data::provider(), prefs)
        }
        other => {
            return Err(unsupported(
                ctx,
                &format!("Intl.PluralRules: type \"{other}\" is not supported"),
            ))
        }
    };
    rules.map_err(|e| unsupported(ctx, &format!("Intl.PluralRules: no data for {locale}: {e}")))
}

/// The category of `value` (a finite number's text), rounded by `options`.
pub fn select(
    ctx: Ctx<'_>,
    locale: String,
    kind: String,
    options: Object<'_>,
    value: String,
) -> rquickjs::Result<String> {
    let rules = rules(&ctx, &locale, &kind)?;
    let Some(mut decimal) = parse_exact(&value) else {
        return Ok("other".to_owned());
    };
    round(&mut decimal, &read(&options)?);
    Ok(plural_name(rules.category_for(&decimal)).to_owned())
}

/// The categories the locale's rules use, `other` last.
pub fn categories(ctx: Ctx<'_>, locale: String, kind: String) -> rquickjs::Result<Vec<String>> {
    let rules = rules(&ctx, &locale, &kind)?;
    Ok(rules
        .categories()
        .map(|c| plural_name(c).to_owned())
        .collect())
}
