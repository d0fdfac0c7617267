//! The runner's committed ICU4X blob is generated, never edited: it must be
//! byte for byte what this crate writes from the compiled data crates.
#![allow(clippy::expect_used)]

use cordon_intl_data_gen::{generate, BLOB_PATH};

#[test]
fn the_committed_blob_is_what_the_generator_writes() {
    let committed = std::fs::read(BLOB_PATH).expect("the runner's blob is committed");
    let generated = generate().expect("the compiled data exports");
    assert!(
        committed == generated,
        "{BLOB_PATH} ({} bytes) differs from a fresh export ({} bytes): \
         run `cargo run --release -p cordon-intl-data-gen` and commit the result",
        committed.len(),
        generated.len()
    );
}

/// The runner builds its fallback from the blob (crates/runner/src/intl/data.rs);
/// its parents table is the marker `--check-bin` cannot see in the binary.
#[test]
fn the_blob_holds_the_locale_fallback_data() {
    let provider = icu_provider_blob::BlobDataProvider::try_new_from_static_blob(Box::leak(
        generate()
            .expect("the compiled data exports")
            .into_boxed_slice(),
    ))
    .expect("a valid blob");
    // The fallback data the runner's provider is built from (data.rs).
    icu_locale_fallback::LocaleFallbacker::try_new_with_buffer_provider(&provider)
        .expect("the fallback data is in the blob");
}
