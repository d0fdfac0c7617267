//! `Intl` and the `toLocale*` methods on ICU4X (docs/code-mode.md, "Intl"):
//! real CLDR collation, number, date, plural, relative-time and list
//! formatting inside the runner, and a `RangeError` naming whatever is not
//! supported instead of a different result. The expected strings are what
//! Node 20 (ICU 78) prints for the same expressions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use support::run;

fn result(code: &str) -> Value {
    let (terminal, _) = run(&[], code, &[]);
    assert_eq!(terminal["ok"], true, "{terminal}");
    terminal["result"].clone()
}

#[test]
fn locale_compare_orders_by_cldr_collation_not_by_code_unit() {
    let got = result(
        "return [
           'a'.localeCompare('B'),
           ['Zoë', 'Émile', 'zebra', 'adam', 'Ängel'].sort((a, b) => a.localeCompare(b)),
           ['ö', 'z', 'å', 'ä', 'a'].sort(new Intl.Collator('sv').compare),
           ['item10', 'item2', 'item1'].sort(new Intl.Collator('en', { numeric: true }).compare),
           'a'.localeCompare('á', 'en', { sensitivity: 'base' }),
           'a'.localeCompare('A', 'en', { sensitivity: 'accent' }),
         ];",
    );
    assert_eq!(
        got,
        json!([
            -1,
            ["adam", "Ängel", "Émile", "zebra", "Zoë"],
            ["a", "z", "å", "ä", "ö"],
            ["item1", "item2", "item10"],
            0,
            0
        ])
    );
}

#[test]
fn numbers_format_exactly_with_locale_symbols_compact_and_sign_display() {
    let got = result(
        "return [
           (2n ** 70n + 1n).toLocaleString('de-DE'),
           new Intl.NumberFormat('en', { maximumFractionDigits: 9 }).format('12345678901234567890.123456789'),
           new Intl.NumberFormat('en', { notation: 'compact' }).format(1234567),
           new Intl.NumberFormat('en', { signDisplay: 'exceptZero' }).format(5),
           new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' }).format(-1234.5),
           new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 }).format(1234.5),
           (0.256).toLocaleString('en', { style: 'percent' }),
           (2.5).toLocaleString('en', { maximumFractionDigits: 0 }),
         ];",
    );
    assert_eq!(
        got,
        json!([
            "1.180.591.620.717.411.303.425",
            "12,345,678,901,234,567,890.123456789",
            "1.2M",
            "+5",
            "-1.234,50\u{a0}€",
            "$1,235",
            "26%",
            "3"
        ])
    );
}

#[test]
fn dates_format_in_iana_time_zones_with_daylight_saving() {
    let got = result(
        "const summer = new Date(Date.UTC(2024, 6, 4, 15, 30, 45));
         const winter = new Date(Date.UTC(2024, 0, 15, 9, 5, 7));
         return [
           summer.toLocaleString('en-US', { timeZone: 'America/New_York' }),
           winter.toLocaleString('en-US', { timeZone: 'America/New_York' }),
           summer.toLocaleString('en-US', { timeZone: 'Asia/Kolkata' }),
           new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeStyle: 'long', timeZone: 'America/Los_Angeles' }).format(winter),
           new Intl.DateTimeFormat('en-US', { timeZone: 'europe/berlin' }).resolvedOptions().timeZone,
           winter.toLocaleDateString(),
         ];",
    );
    assert_eq!(
        got,
        json!([
            "7/4/2024, 11:30:45 AM",
            "1/15/2024, 4:05:07 AM",
            "7/4/2024, 9:00:45 PM",
            "January 15, 2024 at 1:05:07 AM PST",
            "Europe/Berlin",
            "1/15/2024"
        ])
    );
}

#[test]
fn plural_rules_relative_time_and_lists_use_the_locale_data() {
    let got = result(
        "return [
           [1, 2, 5, 22].map((n) => new Intl.PluralRules('ru').select(n)),
           [1, 2, 3, 11].map((n) => new Intl.PluralRules('en', { type: 'ordinal' }).select(n)),
           new Intl.RelativeTimeFormat('en', { numeric: 'auto' }).format(-1, 'day'),
           new Intl.RelativeTimeFormat('de').format(3, 'hours'),
           new Intl.ListFormat('en', { type: 'disjunction' }).format(['a', 'b', 'c']),
           new Intl.ListFormat('es').format(['a', 'b', 'c']),
         ];",
    );
    assert_eq!(
        got,
        json!([
            ["one", "few", "many", "few"],
            ["one", "two", "few", "other"],
            "yesterday",
            "in 3 Stunden",
            "a, b, or c",
            "a, b y c"
        ])
    );
}

#[test]
fn an_unsupported_option_or_locale_is_a_range_error_naming_it() {
    let got = result(
        "const attempt = (f) => { try { f(); return 'no error'; } catch (e) { return e.name + ': ' + e.message; } };
         return [
           attempt(() => new Intl.NumberFormat('en', { style: 'percent', notation: 'compact' }).format(5)),
           attempt(() => new Intl.NumberFormat('en', { notation: 'scientific' })),
           attempt(() => new Intl.NumberFormat('xx')),
           attempt(() => (1).toLocaleString('en', { roundingMode: 'floor' })),
           attempt(() => new Intl.DateTimeFormat('en', { calendar: 'islamic' })),
           attempt(() => new Intl.DateTimeFormat('en', { timeZone: 'Mars/Olympus' })),
           attempt(() => new Intl.DateTimeFormat('en', { month: 'narrow' })),
           attempt(() => new Intl.Collator('de-u-co-phonebk')),
           attempt(() => new Intl.NumberFormat('en', { numberingSystem: 'thai' })),
           Intl.NumberFormat.supportedLocalesOf(['en-US', 'xx', 'de']),
         ];",
    );
    let texts: Vec<String> = got
        .as_array()
        .unwrap()
        .iter()
        .take(9)
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    let named = [
        "style \"percent\" with notation \"compact\"",
        "notation \"scientific\"",
        "\"xx\"",
        "roundingMode \"floor\"",
        "calendar \"islamic\"",
        "Mars/Olympus",
        "month \"narrow\"",
        "collation \"phonebk\"",
        "numbering system \"thai\"",
    ];
    for (text, name) in texts.iter().zip(named) {
        assert!(text.starts_with("RangeError: "), "{text}");
        assert!(text.contains(name), "{text} should name {name}");
    }
    assert_eq!(got[9], json!(["en-US", "de"]));
}

#[test]
fn the_108_two_letter_languages_of_the_compiled_data_are_supported_and_others_are_not() {
    let got = result(
        "const codes = [];
         for (let a = 97; a < 123; a++) for (let b = 97; b < 123; b++) codes.push(String.fromCharCode(a, b));
         const supported = Intl.NumberFormat.supportedLocalesOf(codes);
         return [supported.length, ['en', 'de', 'zh', 'ar', 'hi'].every((l) => supported.includes(l)),
                 supported.includes('xx'), Intl.Collator.supportedLocalesOf(['fil', 'es-419', 'tlh'])];",
    );
    assert_eq!(got, json!([108, true, false, ["fil", "es-419"]]));
}

#[test]
fn intl_is_built_apart_from_the_other_web_globals_on_its_first_use() {
    let got = result(
        "const accessor = () => typeof Object.getOwnPropertyDescriptor(globalThis, 'Intl').get;
         new URL('https://example.com');
         const afterUrl = accessor();
         const sorted = ['b', 'a'].sort((x, y) => x.localeCompare(y));
         return [afterUrl, accessor(), sorted, typeof Intl.Collator];",
    );
    assert_eq!(
        got,
        json!(["function", "undefined", ["a", "b"], "function"])
    );
}
