//! ICU4X's CLDR data: one postcard blob compiled into the binary.
//!
//! ICU4X's compiled data (the `icu_*_data` crates) is tables of pointers,
//! and in a position-independent executable the dynamic loader rewrites
//! every one at start: 0.7 MB of `.data.rel.ro` dirtied in every runner,
//! idle or not. The same data as a postcard blob holds no pointers: it is a
//! `static` byte array in `.rodata` (clean, file-backed, shared between
//! runners, not read until `Intl` is used), read through each component's
//! `*_with_buffer_provider` constructor (docs/code-mode.md, Intl, "Cost").
//!
//! `icu_data.postcard` is written by `crates/intl-data-gen` from the
//! compiled data crates themselves (the markers this runner loads, every
//! locale); never edit it by hand: `cargo test -p cordon-intl-data-gen`
//! regenerates it and fails if it differs.

use std::sync::OnceLock;

use icu_locale::{LocaleExpander, LocaleFallbacker};
use icu_provider::buf::BufferMarker;
use icu_provider::{DataError, DataMarkerInfo, DataRequest, DataResponse, DynamicDataProvider};
use icu_provider_adapters::fallback::LocaleFallbackProvider;
use icu_provider_blob::BlobDataProvider;

/// The blob; `include_bytes!` keeps it in `.rodata`, free of relocations.
static BLOB: &[u8] = include_bytes!("icu_data.postcard");

/// The blob with locale fallback, or why it cannot be read. A blob that
/// cannot be read (a build defect: the tests read every component through
/// it) makes every constructor fail with the reason, which each caller
/// turns into a `RangeError`; nothing is formatted without data.
pub(super) struct Data(Result<LocaleFallbackProvider<BlobDataProvider>, DataError>);

impl DynamicDataProvider<BufferMarker> for Data {
    fn load_data(
        &self,
        marker: DataMarkerInfo,
        request: DataRequest,
    ) -> Result<DataResponse<BufferMarker>, DataError> {
        match &self.0 {
            Ok(provider) => provider.load_data(marker, request),
            Err(error) => Err(*error),
        }
    }
}

/// The provider every constructor reads, built on first use. A locale
/// missing from the blob falls back (`de-AT` → `de` → root) as the compiled
/// data did: the blob is deduplicated against that same fallback, and the
/// fallback's own data (likely subtags, parents) is in the blob too.
pub(super) fn provider() -> &'static Data {
    static PROVIDER: OnceLock<Data> = OnceLock::new();
    PROVIDER.get_or_init(|| {
        Data(
            BlobDataProvider::try_new_from_static_blob(BLOB).and_then(|blob| {
                let fallbacker = LocaleFallbacker::try_new_with_buffer_provider(&blob)?;
                Ok(LocaleFallbackProvider::new(blob, fallbacker))
            }),
        )
    })
}

/// Likely subtags (`zh-TW` → `zh-Hant-TW`) from the same blob, built once.
pub(super) fn expander() -> Result<&'static LocaleExpander, DataError> {
    static EXPANDER: OnceLock<Result<LocaleExpander, DataError>> = OnceLock::new();
    EXPANDER
        .get_or_init(|| LocaleExpander::try_new_common_with_buffer_provider(provider()))
        .as_ref()
        .map_err(|error| *error)
}
