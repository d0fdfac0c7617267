//! The options of `Intl.NumberFormat` as `intl.js` resolved them, and the
//! rounding and error helpers every number module shares (plain numbers,
//! compact, non-finite values, parts, plurals): a module of its own so
//! that none of those imports another's formatting (no import cycle).

use fixed_decimal::{Decimal, SignedRoundingMode, UnsignedRoundingMode};
use rquickjs::{Ctx, Object};

use super::{units, unsupported};

/// The options `intl.js` resolved (ECMA-402 names; digit counts are -1
/// when the rounding they belong to is not in use).
#[derive(Clone)]
pub(super) struct Resolved {
    pub(super) style: String,
    pub(super) unit_patterns: Vec<String>,
    /// `unit: "percent"` or `percent-per-…`, short or narrow, not compact:
    /// ICU4C formats it with the locale's percent pattern (de `5 %` with a
    /// no-break space), unscaled, the per unit dropped (`intl.js`).
    pub(super) unit_percent: bool,
    pub(super) currency: Option<String>,
    pub(super) currency_display: String,
    pub(super) currency_sign: String,
    pub(super) notation: String,
    pub(super) compact_display: String,
    pub(super) sign_display: String,
    pub(super) use_grouping: String,
    pub(super) minimum_integer_digits: i16,
    pub(super) currency_digits: i16,
    pub(super) fraction: Option<(i16, i16)>,
    pub(super) significant: Option<(i16, i16)>,
}

impl Resolved {
    /// These options for a value with no digits of its own (NaN, ∞): one
    /// integer digit, no fraction, standard notation, in `style`.
    pub(super) fn without_digits(&self, style: &str) -> Resolved {
        Resolved {
            style: style.to_owned(),
            fraction: Some((0, 0)),
            significant: None,
            minimum_integer_digits: 1,
            notation: "standard".to_owned(),
            ..self.clone()
        }
    }

    /// Whether the style is `unit` with the unit's own patterns (not the
    /// percent pattern), and those patterns.
    pub(super) fn currency_digits(&self) -> i16 {
        self.currency_digits
    }

    pub(super) fn currency_by_name(&self) -> bool {
        self.style == "currency" && self.currency_display == "name"
    }

    pub(super) fn unit_patterns(&self) -> Option<&[String]> {
        (self.style == "unit" && !self.unit_percent).then_some(self.unit_patterns.as_slice())
    }

    /// The same currency options for the euro shown as `€` (narrow): a
    /// symbol, so ICU4X never puts the currency spacing beside the number.
    pub(super) fn with_narrow_euro(&self) -> Resolved {
        Resolved {
            currency: Some("EUR".to_owned()),
            currency_display: "narrowSymbol".to_owned(),
            // The euro's own digits, so `1` prints as `1` (not `1.00`).
            currency_digits: 2,
            ..self.clone()
        }
    }
}

fn digits(options: &Object<'_>, key: &str) -> rquickjs::Result<i16> {
    Ok(options.get::<_, Option<i32>>(key)?.map_or(-1, |n| n as i16))
}

pub(super) fn read(options: &Object<'_>) -> rquickjs::Result<Resolved> {
    let text = |key: &str| -> rquickjs::Result<String> {
        Ok(options.get::<_, Option<String>>(key)?.unwrap_or_default())
    };
    let pair = |min: &str, max: &str| -> rquickjs::Result<Option<(i16, i16)>> {
        let (min, max) = (digits(options, min)?, digits(options, max)?);
        Ok((min >= 0 && max >= 0).then_some((min, max)))
    };
    Ok(Resolved {
        style: text("style")?,
        unit_patterns: units::read_patterns(options)?,
        unit_percent: options
            .get::<_, Option<bool>>("unitPercent")?
            .unwrap_or(false),
        currency: options.get::<_, Option<String>>("currency")?,
        currency_display: text("currencyDisplay")?,
        currency_sign: text("currencySign")?,
        notation: text("notation")?,
        compact_display: text("compactDisplay")?,
        sign_display: text("signDisplay")?,
        use_grouping: text("useGrouping")?,
        minimum_integer_digits: digits(options, "minimumIntegerDigits")?.max(1),
        currency_digits: digits(options, "currencyDigits")?.max(0),
        fraction: pair("minimumFractionDigits", "maximumFractionDigits")?,
        significant: pair("minimumSignificantDigits", "maximumSignificantDigits")?,
    })
}

pub(super) fn half_expand(decimal: &mut Decimal, position: i16) {
    decimal.round_with_mode(
        position,
        SignedRoundingMode::Unsigned(UnsignedRoundingMode::HalfExpand),
    );
}

pub(super) fn load_error(
    ctx: &Ctx<'_>,
    what: &str,
    error: impl std::fmt::Display,
) -> rquickjs::Error {
    unsupported(
        ctx,
        &format!("Intl.NumberFormat: no data for {what}: {error}"),
    )
}
