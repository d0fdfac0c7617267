//! Which locales `Intl` accepts, and their canonical tags.
//!
//! Every language ICU4X's compiled data covers ships (all of them are in
//! the blob, data.rs). A language is covered
//! when its list patterns resolve to data of its own rather than the root
//! locale's: every CLDR language has its own word for "and", so that test
//! cannot mistake a deduplicated entry for a missing one. Anything else —
//! `xx`, a private-use tag — is a `RangeError`, not a silent fallback to
//! another language as in an engine that negotiates.

use icu_list::provider::{ListAndV1, ListFormatterPatterns};
use icu_locale::{DataLocale, Locale};
use icu_provider::buf::AsDeserializingBufferProvider;
use icu_provider::{DataIdentifierBorrowed, DataProvider, DataRequest};
use rquickjs::Ctx;

use super::parse_locale;

/// The tag with case and order normalised (extensions kept), or a
/// `RangeError` for a tag that is not a BCP 47 language tag.
pub fn canonical(ctx: Ctx<'_>, tag: String) -> rquickjs::Result<String> {
    Ok(parse_locale(&ctx, &tag)?.to_string())
}

/// Whether the language of `tag` (a canonical tag) has data compiled in.
pub fn supported(ctx: Ctx<'_>, tag: String) -> rquickjs::Result<bool> {
    Ok(has_data(&parse_locale(&ctx, &tag)?))
}

fn has_data(locale: &Locale) -> bool {
    let data_locale = DataLocale::from(locale);
    let request = DataRequest {
        id: DataIdentifierBorrowed::for_marker_attributes_and_locale(
            ListFormatterPatterns::WIDE,
            &data_locale,
        ),
        ..Default::default()
    };
    match DataProvider::<ListAndV1>::load(&super::data::provider().as_deserializing(), request) {
        Ok(response) => !response
            .metadata
            .locale
            .is_some_and(|found| found.is_unknown()),
        Err(_) => false,
    }
}
