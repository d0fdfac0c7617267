//! `Intl.Collator.prototype.compare` and `String.prototype.localeCompare`:
//! the Unicode Collation Algorithm with the locale's CLDR tailoring.

use std::cell::RefCell;

use icu_collator::options::{AlternateHandling, CaseLevel, CollatorOptions, Strength};
use icu_collator::{Collator, CollatorBorrowed, CollatorPreferences};
use rquickjs::Ctx;

use super::{parse_locale, unsupported};

thread_local! {
    /// The last collator built, by (locale, sensitivity, ignorePunctuation):
    /// a sort calls `compare` n·log n times with the same options.
    static LAST: RefCell<Option<(String, CollatorBorrowed<'static>)>> = const { RefCell::new(None) };
}

/// -1, 0 or 1. `locale` carries `-u-kn`/`-u-kf` for `numeric`/`caseFirst`;
/// `sensitivity` is ECMA-402's (`base`, `accent`, `case`, `variant`).
pub fn compare(
    ctx: Ctx<'_>,
    locale: String,
    sensitivity: String,
    ignore_punctuation: bool,
    left: String,
    right: String,
) -> rquickjs::Result<i32> {
    let key = format!("{locale}|{sensitivity}|{ignore_punctuation}");
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        let cached = matches!(&*last, Some((k, _)) if *k == key);
        if !cached {
            let collator = build(&ctx, &locale, &sensitivity, ignore_punctuation)?;
            *last = Some((key, collator));
        }
        match &*last {
            Some((_, collator)) => Ok(collator.compare(&left, &right) as i32),
            None => Err(unsupported(&ctx, "Intl.Collator: no collator")),
        }
    })
}

fn build(
    ctx: &Ctx<'_>,
    locale: &str,
    sensitivity: &str,
    ignore_punctuation: bool,
) -> rquickjs::Result<CollatorBorrowed<'static>> {
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
    Collator::try_new(prefs, options).map_err(|error| {
        unsupported(
            ctx,
            &format!("Intl.Collator: no collation data for {locale}: {error}"),
        )
    })
}
