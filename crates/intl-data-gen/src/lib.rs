//! The runner's ICU4X data as one postcard blob (docs/code-mode.md, Intl,
//! "Cost").
//!
//! ICU4X's compiled data is tables of pointers that a position-independent
//! runner relocates, and so dirties, at every start; the same data as a
//! postcard blob in `.rodata` holds none. The blob is written from the
//! compiled data crates themselves (each table iterable through its
//! `impl_*!(_, ITER)` macro) for the markers the runner loads and every
//! locale they hold, deduplicated against the locale fallback the runner
//! applies when it reads the blob: what the runner reads is what the
//! compiled data gave it.
//!
//! `cargo run --release -p cordon-intl-data-gen` rewrites the blob;
//! `cargo test -p cordon-intl-data-gen` fails when the committed one is not
//! what this crate writes.

extern crate alloc;

use icu_provider::export::{DataExporter, ExportableProvider};
use icu_provider::prelude::*;
use icu_provider_export::blob_exporter::BlobExporter;
use icu_provider_export::prelude::*;

/// Where the runner includes the blob from.
pub const BLOB_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../runner/src/intl/icu_data.postcard"
);

/// The compiled data, iterable, for the markers below.
pub struct CompiledData;

/// Each marker the runner loads: the data crate's macro that implements it
/// on [`CompiledData`], and the marker. The list is the one
/// `icu::markers_for_bin` finds in the runner binary (`--check-bin`), plus
/// the locale fallback's parents, which it misses (loaded through a generic
/// call whose marker id the compiler does not keep whole).
macro_rules! markers {
    ($($krate:ident :: $implement:ident : $marker:ty),+ $(,)?) => {
        const _: () = {
            // The `ITER` arms name their crate's other macros unqualified.
            $(#[allow(unused_imports)] use $krate::*;)+
            // The `ITER` arm of ICU4X 2.4's singleton tables names
            // `std::collections::BtreeSet` (sic); this `std` adds the alias
            // and is otherwise the real one.
            #[allow(unused_imports)]
            mod std {
                pub use ::std::*;
                pub mod collections {
                    pub use ::std::collections::*;
                    pub type BtreeSet<T> = ::std::collections::BTreeSet<T>;
                }
            }
            icu_list_data::make_provider!(CompiledData);
            $($krate::$implement!(CompiledData, ITER);)+
        };
        icu_provider::export::make_exportable_provider!(CompiledData, [$($marker),+,]);
        /// The markers the blob holds.
        pub const MARKERS: &[DataMarkerInfo] = &[$(<$marker>::INFO),+];
    };
}

markers!(
    icu_collator_data::impl_collation_diacritics_v1: icu::collator::provider::CollationDiacriticsV1,
    icu_collator_data::impl_collation_jamo_v1: icu::collator::provider::CollationJamoV1,
    icu_collator_data::impl_collation_metadata_v1: icu::collator::provider::CollationMetadataV1,
    icu_collator_data::impl_collation_reordering_v1: icu::collator::provider::CollationReorderingV1,
    icu_collator_data::impl_collation_root_v1: icu::collator::provider::CollationRootV1,
    icu_collator_data::impl_collation_special_primaries_v1: icu::collator::provider::CollationSpecialPrimariesV1,
    icu_collator_data::impl_collation_tailoring_v1: icu::collator::provider::CollationTailoringV1,
    icu_datetime_data::impl_datetime_names_dayperiod_v1: icu::datetime::provider::names::DatetimeNamesDayperiodV1,
    icu_datetime_data::impl_datetime_names_month_gregorian_v1: icu::datetime::provider::names::DatetimeNamesMonthGregorianV1,
    icu_datetime_data::impl_datetime_names_weekday_v1: icu::datetime::provider::names::DatetimeNamesWeekdayV1,
    icu_datetime_data::impl_datetime_names_year_gregorian_v1: icu::datetime::provider::names::DatetimeNamesYearGregorianV1,
    icu_datetime_data::impl_datetime_patterns_date_gregorian_v1: icu::datetime::provider::semantic_skeletons::DatetimePatternsDateGregorianV1,
    icu_datetime_data::impl_datetime_patterns_glue_v1: icu::datetime::provider::semantic_skeletons::DatetimePatternsGlueV1,
    icu_datetime_data::impl_datetime_patterns_time_v1: icu::datetime::provider::semantic_skeletons::DatetimePatternsTimeV1,
    icu_datetime_data::impl_timezone_names_cities_override_v1: icu::datetime::provider::time_zones::TimezoneNamesCitiesOverrideV1,
    icu_datetime_data::impl_timezone_names_cities_root_v1: icu::datetime::provider::time_zones::TimezoneNamesCitiesRootV1,
    icu_datetime_data::impl_timezone_names_essentials_v1: icu::datetime::provider::time_zones::TimezoneNamesEssentialsV1,
    icu_datetime_data::impl_timezone_names_generic_long_v1: icu::datetime::provider::time_zones::TimezoneNamesGenericLongV1,
    icu_datetime_data::impl_timezone_names_generic_short_v1: icu::datetime::provider::time_zones::TimezoneNamesGenericShortV1,
    icu_datetime_data::impl_timezone_names_locations_override_v1: icu::datetime::provider::time_zones::TimezoneNamesLocationsOverrideV1,
    icu_datetime_data::impl_timezone_names_locations_root_v1: icu::datetime::provider::time_zones::TimezoneNamesLocationsRootV1,
    icu_datetime_data::impl_timezone_names_specific_long_v1: icu::datetime::provider::time_zones::TimezoneNamesSpecificLongV1,
    icu_datetime_data::impl_timezone_names_specific_short_v1: icu::datetime::provider::time_zones::TimezoneNamesSpecificShortV1,
    icu_datetime_data::impl_timezone_names_standard_long_v1: icu::datetime::provider::time_zones::TimezoneNamesStandardLongV1,
    icu_decimal_data::impl_decimal_compact_long_v1: icu::decimal::provider::DecimalCompactLongV1,
    icu_decimal_data::impl_decimal_compact_short_v1: icu::decimal::provider::DecimalCompactShortV1,
    icu_decimal_data::impl_decimal_digits_v1: icu::decimal::provider::DecimalDigitsV1,
    icu_decimal_data::impl_decimal_symbols_v1: icu::decimal::provider::DecimalSymbolsV1,
    icu_experimental_data::impl_currency_decimal_symbols_v1: icu::experimental::dimension::provider::currency::symbols::CurrencyDecimalSymbolsV1,
    icu_experimental_data::impl_currency_essentials_v1: icu::experimental::dimension::provider::currency::essentials::CurrencyEssentialsV1,
    icu_experimental_data::impl_currency_extended_data_v1: icu::experimental::dimension::provider::currency::extended::CurrencyExtendedDataV1,
    icu_experimental_data::impl_currency_fractions_v1: icu::experimental::dimension::provider::currency::fractions::CurrencyFractionsV1,
    icu_experimental_data::impl_currency_patterns_data_v1: icu::experimental::dimension::provider::currency::patterns::CurrencyPatternsDataV1,
    icu_experimental_data::impl_currency_patterns_no_currency_v1: icu::experimental::dimension::provider::currency::no_currency::CurrencyPatternsNoCurrencyV1,
    icu_experimental_data::impl_currency_symbols_v1: icu::experimental::dimension::provider::currency::symbols::CurrencySymbolsV1,
    icu_experimental_data::impl_datetime_relative_day_long_v1: icu::experimental::relativetime::provider::DatetimeRelativeDayLongV1,
    icu_experimental_data::impl_datetime_relative_day_narrow_v1: icu::experimental::relativetime::provider::DatetimeRelativeDayNarrowV1,
    icu_experimental_data::impl_datetime_relative_day_short_v1: icu::experimental::relativetime::provider::DatetimeRelativeDayShortV1,
    icu_experimental_data::impl_datetime_relative_hour_long_v1: icu::experimental::relativetime::provider::DatetimeRelativeHourLongV1,
    icu_experimental_data::impl_datetime_relative_hour_narrow_v1: icu::experimental::relativetime::provider::DatetimeRelativeHourNarrowV1,
    icu_experimental_data::impl_datetime_relative_hour_short_v1: icu::experimental::relativetime::provider::DatetimeRelativeHourShortV1,
    icu_experimental_data::impl_datetime_relative_minute_long_v1: icu::experimental::relativetime::provider::DatetimeRelativeMinuteLongV1,
    icu_experimental_data::impl_datetime_relative_minute_narrow_v1: icu::experimental::relativetime::provider::DatetimeRelativeMinuteNarrowV1,
    icu_experimental_data::impl_datetime_relative_minute_short_v1: icu::experimental::relativetime::provider::DatetimeRelativeMinuteShortV1,
    icu_experimental_data::impl_datetime_relative_month_long_v1: icu::experimental::relativetime::provider::DatetimeRelativeMonthLongV1,
    icu_experimental_data::impl_datetime_relative_month_narrow_v1: icu::experimental::relativetime::provider::DatetimeRelativeMonthNarrowV1,
    icu_experimental_data::impl_datetime_relative_month_short_v1: icu::experimental::relativetime::provider::DatetimeRelativeMonthShortV1,
    icu_experimental_data::impl_datetime_relative_quarter_long_v1: icu::experimental::relativetime::provider::DatetimeRelativeQuarterLongV1,
    icu_experimental_data::impl_datetime_relative_quarter_narrow_v1: icu::experimental::relativetime::provider::DatetimeRelativeQuarterNarrowV1,
    icu_experimental_data::impl_datetime_relative_quarter_short_v1: icu::experimental::relativetime::provider::DatetimeRelativeQuarterShortV1,
    icu_experimental_data::impl_datetime_relative_second_long_v1: icu::experimental::relativetime::provider::DatetimeRelativeSecondLongV1,
    icu_experimental_data::impl_datetime_relative_second_narrow_v1: icu::experimental::relativetime::provider::DatetimeRelativeSecondNarrowV1,
    icu_experimental_data::impl_datetime_relative_second_short_v1: icu::experimental::relativetime::provider::DatetimeRelativeSecondShortV1,
    icu_experimental_data::impl_datetime_relative_week_long_v1: icu::experimental::relativetime::provider::DatetimeRelativeWeekLongV1,
    icu_experimental_data::impl_datetime_relative_week_narrow_v1: icu::experimental::relativetime::provider::DatetimeRelativeWeekNarrowV1,
    icu_experimental_data::impl_datetime_relative_week_short_v1: icu::experimental::relativetime::provider::DatetimeRelativeWeekShortV1,
    icu_experimental_data::impl_datetime_relative_year_long_v1: icu::experimental::relativetime::provider::DatetimeRelativeYearLongV1,
    icu_experimental_data::impl_datetime_relative_year_narrow_v1: icu::experimental::relativetime::provider::DatetimeRelativeYearNarrowV1,
    icu_experimental_data::impl_datetime_relative_year_short_v1: icu::experimental::relativetime::provider::DatetimeRelativeYearShortV1,
    icu_experimental_data::impl_decimal_percent_v1: icu::experimental::dimension::provider::percent::DecimalPercentV1,
    icu_list_data::impl_list_and_v1: icu::list::provider::ListAndV1,
    icu_list_data::impl_list_or_v1: icu::list::provider::ListOrV1,
    icu_list_data::impl_list_unit_v1: icu::list::provider::ListUnitV1,
    icu_locale_data::impl_locale_likely_subtags_script_region_v1: icu::locale::provider::LocaleLikelySubtagsScriptRegionV1,
    icu_locale_fallback_data::impl_locale_likely_subtags_language_v1: icu::locale::fallback::provider::LocaleLikelySubtagsLanguageV1,
    icu_locale_fallback_data::impl_locale_parents_v1: icu::locale::fallback::provider::LocaleParentsV1,
    icu_normalizer_data::impl_normalizer_nfd_data_v1: icu::normalizer::provider::NormalizerNfdDataV1,
    icu_normalizer_data::impl_normalizer_nfd_tables_v1: icu::normalizer::provider::NormalizerNfdTablesV1,
    icu_plurals_data::impl_plurals_cardinal_v1: icu::plurals::provider::PluralsCardinalV1,
    icu_plurals_data::impl_plurals_ordinal_v1: icu::plurals::provider::PluralsOrdinalV1,
    icu_time_data::impl_timezone_identifiers_iana_core_v1: icu::time::provider::iana::TimezoneIdentifiersIanaCoreV1,
    icu_time_data::impl_timezone_periods_v1: icu::time::provider::TimezonePeriodsV1,
);

/// The blob's bytes: every marker of [`MARKERS`], every locale the compiled
/// data has, deduplicated by the same fallback the runner applies.
pub fn generate() -> Result<Vec<u8>, DataError> {
    let mut blob = Vec::new();
    export(
        &CompiledData,
        BlobExporter::new_with_sink(Box::new(&mut blob)),
    )?;
    Ok(blob)
}

fn export(provider: &impl ExportableProvider, sink: impl DataExporter) -> Result<(), DataError> {
    ExportDriver::new(
        [DataLocaleFamily::FULL],
        DeduplicationStrategy::Maximal.into(),
        // The compiled fallback data, the same the blob carries for the runner.
        LocaleFallbacker::new().static_to_owned(),
    )
    .with_markers(MARKERS.iter().copied())
    // Every collation the compiled data has (the exporter drops `search*`
    // tables by default; ICU4X's compiled data has none, so this keeps the
    // blob a copy whatever a later data version holds).
    .with_marker_attributes_filter("collator", |_| true)
    .export(provider, sink)?;
    Ok(())
}

/// Markers the binary `bytes` references that the blob does not hold.
pub fn missing_from_blob(bytes: &[u8]) -> Result<Vec<DataMarkerInfo>, DataError> {
    Ok(icu::markers_for_bin(bytes)?
        .into_iter()
        .filter(|marker| !MARKERS.contains(marker))
        .collect())
}
