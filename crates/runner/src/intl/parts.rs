//! `formatToParts`: the runs of text an ICU4X formatter writes, each with
//! the parts (`writeable::Part`) it was written inside, so that a
//! formatter's parts are exactly its string cut up (joined, they are what
//! `format` returns).

use std::fmt;

use writeable::{Part, PartsWrite, TryWriteable, Writeable};

/// One run of text and the parts around it, outermost first.
pub struct Run {
    pub parts: Vec<Part>,
    pub text: String,
}

/// A `PartsWrite` sink collecting runs.
#[derive(Default)]
pub struct Collector {
    open: Vec<Part>,
    runs: Vec<Run>,
}

impl Collector {
    /// The runs `writeable` writes.
    pub fn runs(writeable: &impl Writeable) -> Vec<Run> {
        let mut collector = Collector::default();
        // Writing to memory cannot fail.
        let _ = writeable.write_to_parts(&mut collector);
        collector.runs
    }

    /// The runs `writeable` writes, or its error (a name without data).
    pub fn try_runs<W: TryWriteable>(writeable: &W) -> Result<Vec<Run>, W::Error> {
        let mut collector = Collector::default();
        match writeable.try_write_to_parts(&mut collector) {
            Ok(Err(error)) => Err(error),
            // Writing to memory cannot fail.
            Ok(Ok(())) | Err(_) => Ok(collector.runs),
        }
    }
}

impl fmt::Write for Collector {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        match self.runs.last_mut() {
            Some(run) if run.parts == self.open => run.text.push_str(text),
            _ => self.runs.push(Run {
                parts: self.open.clone(),
                text: text.to_owned(),
            }),
        }
        Ok(())
    }
}

impl PartsWrite for Collector {
    type SubPartsWrite = Collector;

    fn with_part(
        &mut self,
        part: Part,
        mut f: impl FnMut(&mut Self::SubPartsWrite) -> fmt::Result,
    ) -> fmt::Result {
        self.open.push(part);
        let result = f(self);
        self.open.pop();
        result
    }
}

/// `[type, value]` pairs as `formatToParts` returns them, adjacent runs of
/// one type merged.
#[derive(Default)]
pub struct Parts(pub Vec<(String, String)>);

impl Parts {
    pub fn push(&mut self, kind: &str, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.0.last_mut() {
            Some((last, value)) if last == kind && kind == "literal" => value.push_str(text),
            _ => self.0.push((kind.to_owned(), text.to_owned())),
        }
    }

    pub fn joined(&self) -> String {
        self.0.iter().map(|(_, text)| text.as_str()).collect()
    }

    pub fn into_pairs(self) -> Vec<Vec<String>> {
        self.0
            .into_iter()
            .map(|(kind, text)| vec![kind, text])
            .collect()
    }
}
