//! `Intl.NumberFormat.prototype.formatToParts`: the string `format` returns,
//! cut into ECMA-402's parts. The number itself (integer, group, decimal,
//! fraction) comes from ICU4X's parts for the same rounded digits; the text
//! around it is split as ICU4C fields it: whitespace at either edge a
//! `literal`, a sign at either edge `minusSign`/`plusSign`, accounting
//! parentheses `literal`, and what is left the style's own part
//! (`percentSign`, `currency`, `unit`). Joined, the parts are always the
//! `format` string; a string whose number cannot be found in it is a
//! `RangeError` rather than parts that would not join up.

use fixed_decimal::{Decimal, Sign, SignDisplay};
use icu_decimal::options::DecimalFormatterOptions;
use icu_decimal::{parts as decimal_parts, DecimalFormatter};
use rquickjs::{Ctx, Object};

use super::non_finite::NonFinite;
use super::number_format;
use super::number_options::read;
use super::numbers::{grouping, parse_exact, round};
use super::parts::{Collector, Parts};
use super::{parse_locale, unsupported};

/// `[[type, value], …]` for `value` (as `number_format::format` takes it).
pub fn format_to_parts(
    ctx: Ctx<'_>,
    locale: String,
    options: Object<'_>,
    value: String,
) -> rquickjs::Result<Vec<Vec<String>>> {
    let text = number_format::format(ctx.clone(), locale.clone(), options.clone(), value.clone())?;
    let o = read(&options)?;
    let refuse = |what: &str| {
        unsupported(
            &ctx,
            &format!(
                "Intl: NumberFormat.formatToParts {what} in locale \"{locale}\" is not supported in Code Mode"
            ),
        )
    };
    if o.notation == "compact" {
        return Err(refuse("with notation \"compact\""));
    }
    let parsed = parse_locale(&ctx, &locale)?;
    let mut options = DecimalFormatterOptions::default();
    options.grouping_strategy = Some(grouping(&ctx, &o.use_grouping)?);
    let formatter = DecimalFormatter::try_new_with_buffer_provider(
        super::data::provider(),
        (&parsed).into(),
        options,
    )
    .map_err(|e| refuse(&format!("(no decimal data: {e})")))?;
    let core = match NonFinite::of(&value) {
        Some(NonFinite::NaN) => single("nan", NonFinite::NaN.symbol(&parsed)),
        Some(NonFinite::Infinity) => single("infinity", NonFinite::Infinity.symbol(&parsed)),
        None => {
            let mut decimal = parse_exact(&value).ok_or_else(|| refuse("of this value"))?;
            if o.style == "percent" {
                decimal.multiply_pow10(2);
            }
            round(&mut decimal, &o);
            digits(&formatter, &Decimal::new(Sign::None, decimal.absolute))
        }
    };
    let number = core.joined();
    let signs = signs(&formatter);
    let kind = match o.style.as_str() {
        "percent" => "percentSign",
        "currency" => "currency",
        "unit" => "unit",
        _ => "literal",
    };
    let mut parts = Parts::default();
    let Some(at) = text.find(&number) else {
        // A unit pattern without a number (da `mil pr. gallon` for 1
        // mile-per-gallon, long): all of it is the unit, as in ICU4C.
        if o.style != "unit" {
            return Err(refuse(&format!(
                "of {value} (the digits are not in \"{text}\")"
            )));
        }
        affix(&mut parts, &text, kind, &signs);
        return Ok(parts.into_pairs());
    };
    affix(&mut parts, &text[..at], kind, &signs);
    parts.0.extend(core.0);
    affix(&mut parts, &text[at + number.len()..], kind, &signs);
    Ok(parts.into_pairs())
}

fn single(kind: &str, text: &str) -> Parts {
    let mut parts = Parts::default();
    parts.push(kind, text);
    parts
}

/// An unsigned number's integer, group, decimal and fraction parts.
fn digits(formatter: &DecimalFormatter, decimal: &Decimal) -> Parts {
    let mut parts = Parts::default();
    for run in Collector::runs(&formatter.format(decimal)) {
        let kind = match run.parts.last() {
            Some(&p) if p == decimal_parts::GROUP => "group",
            Some(&p) if p == decimal_parts::DECIMAL => "decimal",
            Some(&p) if p == decimal_parts::FRACTION => "fraction",
            Some(&p) if p == decimal_parts::INTEGER => "integer",
            _ => "literal",
        };
        parts.push(kind, &run.text);
    }
    parts
}

/// Bidi marks are `literal` parts of their own in ICU4C (he `‎-1`: a
/// literal LRM, then the minus sign).
fn is_bidi_mark(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// The locale's minus and plus signs as its decimal formatter writes them,
/// without their bidi marks (`he` `‎-` is a mark and `-`).
fn signs(formatter: &DecimalFormatter) -> [(&'static str, String); 2] {
    let sign_of = |display, wanted| {
        let mut one = Decimal::from(if wanted == decimal_parts::MINUS_SIGN {
            -1
        } else {
            1
        });
        one.apply_sign_display(display);
        Collector::runs(&formatter.format(&one))
            .into_iter()
            .find(|run| run.parts.last() == Some(&wanted))
            .map(|run| run.text.replace(is_bidi_mark, ""))
            .unwrap_or_default()
    };
    [
        (
            "minusSign",
            sign_of(SignDisplay::Auto, decimal_parts::MINUS_SIGN),
        ),
        (
            "plusSign",
            sign_of(SignDisplay::Always, decimal_parts::PLUS_SIGN),
        ),
    ]
}

/// Text before or after the number: edge whitespace, signs and
/// parentheses peeled off both ends, the rest `kind`.
fn affix(parts: &mut Parts, text: &str, kind: &str, signs: &[(&'static str, String)]) {
    let peel = |rest: &str, front: bool| -> Option<(&'static str, usize)> {
        let edge = if front {
            rest.chars().next()
        } else {
            rest.chars().next_back()
        }?;
        if edge.is_whitespace() || is_bidi_mark(edge) || edge == '(' || edge == ')' {
            return Some(("literal", edge.len_utf8()));
        }
        signs.iter().find_map(|(name, sign)| {
            let found = !sign.is_empty()
                && if front {
                    rest.starts_with(sign.as_str())
                } else {
                    rest.ends_with(sign.as_str())
                };
            found.then_some((*name, sign.len()))
        })
    };
    let mut rest = text;
    while let Some((name, len)) = peel(rest, true) {
        parts.push(name, &rest[..len]);
        rest = &rest[len..];
    }
    let mut tail = Vec::new();
    while let Some((name, len)) = peel(rest, false) {
        tail.push((name, &rest[rest.len() - len..]));
        rest = &rest[..rest.len() - len];
    }
    parts.push(kind, rest);
    for (name, piece) in tail.into_iter().rev() {
        parts.push(name, piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use icu_locale::Locale;

    #[test]
    fn the_text_around_a_number_splits_into_literals_signs_and_the_style_part() {
        let signs = [("minusSign", "-".to_owned()), ("plusSign", "+".to_owned())];
        let mut parts = Parts::default();
        affix(&mut parts, "-US$\u{a0}", "currency", &signs);
        let kinds: Vec<_> = parts.0.iter().map(|(k, t)| format!("{k}:{t}")).collect();
        assert_eq!(kinds, ["minusSign:-", "currency:US$", "literal:\u{a0}"]);
        let mut parts = Parts::default();
        affix(&mut parts, " kilometers per hour)", "unit", &signs);
        let kinds: Vec<_> = parts.0.iter().map(|(k, t)| format!("{k}:{t}")).collect();
        assert_eq!(
            kinds,
            ["literal: ", "unit:kilometers per hour", "literal:)"]
        );
    }

    #[test]
    fn parts_join_to_the_formatted_number() {
        let locale = Locale::try_from_str("de").expect("locale");
        let formatter = DecimalFormatter::try_new_with_buffer_provider(
            crate::intl::data::provider(),
            (&locale).into(),
            Default::default(),
        )
        .expect("data");
        let decimal = Decimal::try_from_str("1234567.5").expect("decimal");
        let parts = digits(&formatter, &decimal);
        assert_eq!(parts.joined(), "1.234.567,5");
        assert_eq!(parts.0[1], ("group".to_owned(), ".".to_owned()));
    }
}
