//! What the streamed reports share: a row in each format, and the framing around the rows
//! (CSV's header, JSON's brackets and commas, the text header).

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;

use super::Format;
use crate::Error;

/// One row of a streamed report. JSON and NDJSON print it as an object (its serialization: a
/// contract, scripts depend on the keys).
pub(super) trait Row: Serialize {
    /// The CSV header row.
    fn csv_header() -> String;
    /// The line above the rows in text, if there is one.
    fn text_header() -> Option<String> {
        None
    }
    /// The CSV fields, unquoted, in the header's order.
    fn csv_fields(&self) -> Vec<Cow<'_, str>>;
    /// The row in text, without its line break.
    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()>;
}

/// A report being written: rows in one format, framed.
pub(super) struct Rows<'o, O: Write> {
    out: &'o mut O,
    format: Format,
    written: u64,
}

impl<'o, O: Write> Rows<'o, O> {
    /// Starts a report of `R` rows: the CSV header, JSON's `[`, or the text header.
    pub fn start<R: Row>(out: &'o mut O, format: Format) -> Result<Self, Error> {
        match (format, R::text_header()) {
            (Format::Csv, _) => writeln!(out, "{}", R::csv_header())?,
            (Format::Json, _) => write!(out, "[")?,
            (Format::Text, Some(header)) => writeln!(out, "{header}")?,
            _ => {}
        }
        Ok(Rows {
            out,
            format,
            written: 0,
        })
    }

    pub fn write(&mut self, row: &impl Row) -> Result<(), Error> {
        let out = &mut *self.out;
        match self.format {
            Format::Text => {
                row.write_text(out)?;
                writeln!(out)?;
            }
            Format::Json => {
                if self.written > 0 {
                    write!(out, ",")?;
                }
                writeln!(out)?;
                serde_json::to_writer(&mut *out, row)?;
            }
            Format::Ndjson => {
                serde_json::to_writer(&mut *out, row)?;
                writeln!(out)?;
            }
            Format::Csv => {
                let fields = row.csv_fields();
                let line: Vec<_> = fields.iter().map(|f| csv_field(f)).collect();
                writeln!(out, "{}", line.join(","))?;
            }
        }
        self.written += 1;
        Ok(())
    }

    /// Ends the report (JSON's `]`), flushes it, and returns how many rows it holds.
    pub fn finish(self) -> Result<u64, Error> {
        if self.format == Format::Json {
            writeln!(self.out, "]")?;
        }
        self.out.flush()?;
        Ok(self.written)
    }
}

/// Quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(field: &str) -> Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\"")).into()
    } else {
        field.into()
    }
}

/// Asserts that `row`'s JSON object has exactly `keys`, in that order (the contract the CSV
/// header shares).
#[cfg(test)]
pub(super) fn assert_json_keys(row: &impl Row, keys: &[&str]) {
    let json = serde_json::to_string(row).unwrap();
    let mut at = 0;
    for key in keys {
        let key = format!("\"{key}\":");
        let found = json[at..]
            .find(&key)
            .unwrap_or_else(|| panic!("{key} in order in {json}"));
        at += found + key.len();
    }
    let object = serde_json::from_str::<serde_json::Value>(&json).unwrap();
    assert_eq!(object.as_object().unwrap().len(), keys.len(), "{json}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Pair {
        name: &'static str,
        n: i32,
    }

    impl Row for Pair {
        fn csv_header() -> String {
            "name,n".into()
        }

        fn csv_fields(&self) -> Vec<Cow<'_, str>> {
            vec![self.name.into(), self.n.to_string().into()]
        }

        fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
            write!(out, "{} {}", self.name, self.n)
        }
    }

    fn written(format: Format, pairs: &[Pair]) -> String {
        let mut out = Vec::new();
        let mut rows = Rows::start::<Pair>(&mut out, format).unwrap();
        for pair in pairs {
            rows.write(pair).unwrap();
        }
        assert_eq!(rows.finish().unwrap(), pairs.len() as u64);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_format_frames_its_rows() {
        let pairs = [Pair { name: "x,y", n: 1 }, Pair { name: "z", n: 2 }];
        let objects = [r#"{"name":"x,y","n":1}"#, r#"{"name":"z","n":2}"#];
        assert_eq!(written(Format::Json, &[]), "[]\n");
        assert_eq!(
            written(Format::Json, &pairs),
            format!("[\n{},\n{}]\n", objects[0], objects[1])
        );
        assert_eq!(
            written(Format::Ndjson, &pairs),
            format!("{}\n{}\n", objects[0], objects[1])
        );
        assert_eq!(written(Format::Csv, &pairs), "name,n\n\"x,y\",1\nz,2\n");
        assert_eq!(written(Format::Csv, &[]), "name,n\n");
        assert_eq!(written(Format::Text, &pairs), "x,y 1\nz 2\n");
    }

    #[test]
    fn csv_fields_with_commas_and_quotes_are_quoted() {
        assert_eq!(
            csv_field("https://a.example/?x=1,2"),
            "\"https://a.example/?x=1,2\""
        );
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
