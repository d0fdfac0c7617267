//! A table of CLDR entries per locale, generated from CLDR's JSON by a
//! script under `scripts/` (`numeric_dates.txt`, `units.txt`): one locale a
//! line, `locale<TAB>key=value<TAB>…`, an entry left out when the locale's
//! truncation parent (`zh-Hant-TW` → `zh-Hant` → `zh` → `root`) has the
//! same one, and every CLDR locale present, so a missing line means CLDR
//! has no such locale.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use icu_locale::{LanguageIdentifier, Locale};

pub struct Table {
    text: &'static str,
    /// Locale id → its line, built on the first lookup (a table is not
    /// read at all until a formatter needs it).
    lines: OnceLock<HashMap<&'static str, &'static str>>,
}

impl Table {
    pub const fn new(text: &'static str) -> Table {
        Table {
            text,
            lines: OnceLock::new(),
        }
    }

    /// The line of one CLDR locale id, without the id.
    fn line(&self, id: &str) -> Option<&'static str> {
        let lines = self.lines.get_or_init(|| {
            self.text
                .lines()
                .filter(|line| !line.starts_with('#'))
                .map(|line| line.split_once('\t').unwrap_or((line, "")))
                .collect()
        });
        lines.get(id).copied()
    }

    /// The CLDR locale id whose data `locale` uses: the tag itself, or its
    /// maximised form (`zh-TW` → `zh-Hant-TW`), its language with a script
    /// that is not the language's default (`zh-Hant`), or its language.
    pub fn cldr_id(&self, locale: &Locale) -> Option<String> {
        let id = &locale.id;
        let mut maximal = id.clone();
        // Without likely subtags no CLDR id can be chosen. They are in the
        // blob with the fallback data every constructor needs, so a blob
        // without them has already failed the constructor that led here.
        let expander = super::data::expander().ok()?;
        expander.maximize(&mut maximal);
        let language_only = LanguageIdentifier::from((id.language, None, None));
        let mut default_script = language_only.clone();
        expander.maximize(&mut default_script);
        let mut candidates = vec![id.to_string(), maximal.to_string()];
        if maximal.script != default_script.script {
            let scripted = LanguageIdentifier::from((id.language, maximal.script, None));
            candidates.push(scripted.to_string());
        }
        candidates.push(language_only.to_string());
        candidates
            .into_iter()
            .find(|candidate| self.line(candidate).is_some())
    }

    /// Every entry of `id`, inherited ones included (the nearest wins).
    pub fn entries(&self, id: &str) -> Vec<(&'static str, &'static str)> {
        let mut found: Vec<(&str, &str)> = Vec::new();
        let mut seen = HashSet::new();
        let mut at = Some(id.to_owned());
        while let Some(current) = at {
            for entry in self.line(&current).unwrap_or("").split('\t') {
                if let Some((key, value)) = entry.split_once('=') {
                    if seen.insert(key) {
                        found.push((key, value));
                    }
                }
            }
            at = match current.rfind('-') {
                _ if current == "root" => None,
                Some(cut) => Some(current[..cut].to_owned()),
                None => Some("root".to_owned()),
            };
        }
        found
    }
}
