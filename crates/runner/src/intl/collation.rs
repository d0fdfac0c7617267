//! `Intl.Collator.prototype.compare` and `String.prototype.localeCompare`:
//! the Unicode Collation Algorithm with the locale's CLDR tailoring.
//!
//! A sort calls `compare` n·log n times with the same options, so the
//! collator is built once per distinct (locale, sensitivity,
//! ignorePunctuation) and named by a small integer the script keeps; a
//! comparison then costs the two strings and the comparison itself.

use std::cell::RefCell;

use icu_collator::options::{AlternateHandling, CaseLevel, CollatorOptions, Strength};
use icu_collator::{Collator, CollatorPreferences};
use rquickjs::Ctx;

use super::{parse_locale, unsupported};

/// Distinct collators one run may build (each is a few hundred bytes of
/// Rust memory outside the QuickJS heap ceiling, so they are bounded).
const MAX_COLLATORS: usize = 256;

thread_local! {
    static COLLATORS: RefCell<Vec<(String, Collator)>> = const { RefCell::new(Vec::new()) };
}

/// The handle of the collator for these options, built on first use.
/// `locale` carries `-u-kn`/`-u-kf` for `numeric`/`caseFirst`;
/// `sensitivity` is ECMA-402's (`base`, `accent`, `case`, `variant`).
pub fn collator(
    ctx: Ctx<'_>,
    locale: String,
    sensitivity: String,
    ignore_punctuation: bool,
) -> rquickjs::Result<u32> {
    let key = format!("{locale}|{sensitivity}|{ignore_punctuation}");
    COLLATORS.with(|collators| {
        let mut collators = collators.borrow_mut();
        if let Some(at) = collators.iter().position(|(k, _)| *k == key) {
            return Ok(at as u32);
        }
        if collators.len() >= MAX_COLLATORS {
            return Err(unsupported(
                &ctx,
                &format!("Intl.Collator: more than {MAX_COLLATORS} distinct collators in one run"),
            ));
        }
        let built = build(&ctx, &locale, &sensitivity, ignore_punctuation)?;
        collators.push((key, built));
        Ok((collators.len() - 1) as u32)
    })
}

/// -1, 0 or 1: `left` against `right` by the collator `handle`.
pub fn compare(ctx: Ctx<'_>, handle: u32, left: String, right: String) -> rquickjs::Result<i32> {
    COLLATORS.with(|collators| match collators.borrow().get(handle as usize) {
        Some((_, collator)) => Ok(collator.as_borrowed().compare(&left, &right) as i32),
        None => Err(unsupported(&ctx, "Intl.Collator: unknown collator")),
    })
}

fn build(
    ctx: &Ctx<'_>,
    locale: &str,
    sensitivity: &str,
    ignore_punctuation: bool,
) -> rquickjs::Result<Collator> {
    let mut options = CollatorOptions::default();
    let (strength, case_level) = match sensitivity {
        "base" => (Strength::Primary, CaseLevel::Off),
        "accent" => (Strength::Secondary, CaseLevel::Off),
        "case" => (Strength::Primary, CaseLevel::On),
        "variant" => (Strength::Tertiary, CaseLevel::Off),
        other => {
            return Err(unsupported(
                ctx,
                &format!("Intl.Collator: sensitivity \"{other}\" is not supported"),
            ))
        }
    };
    options.strength = Some(strength);
    options.case_level = Some(case_level);
    if ignore_punctuation {
        options.alternate_handling = Some(AlternateHandling::Shifted);
    }
    let prefs = CollatorPreferences::from(&parse_locale(ctx, locale)?);
    Collator::try_new_with_buffer_provider(super::data::provider(), prefs, options).map_err(
        |error| {
            unsupported(
                ctx,
                &format!("Intl.Collator: no collation data for {locale}: {error}"),
            )
        },
    )
}
