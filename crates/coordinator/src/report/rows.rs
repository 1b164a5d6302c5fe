//! What the streamed reports share: a row in each format, and the framing around the rows
//! (CSV's header, JSON's brackets and commas, the text header).

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;

use super::fail_on::FailOn;
use super::format::Format;
use super::github::{self, Finding};
use super::sarif;
use crate::error::Error;

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
    /// Whether Markdown shows these rows as a table (under [`Row::markdown_header`]); the
    /// summary is a list instead, written whole by [`Row::write_markdown`].
    fn markdown_table() -> bool {
        true
    }
    /// The Markdown table's column names: the CSV columns unless a row says otherwise.
    fn markdown_header() -> Vec<String> {
        Self::csv_header().split(',').map(str::to_owned).collect()
    }
    /// The row in Markdown, without its line break: a table row of its CSV fields unless it
    /// says otherwise.
    fn write_markdown(&self, out: &mut impl Write) -> std::io::Result<()> {
        table_row(out, &self.csv_fields())
    }
    /// The row as a JUnit test case, for the reports that are lists of sites.
    fn junit(&self) -> Option<Case<'_>> {
        None
    }
    /// The row as a link for the annotation formats (GitHub, SARIF), for the lists of sites.
    fn finding(&self) -> Option<Finding<'_>> {
        None
    }
}

/// A JUnit `<testcase>`: a site, named by its URL and classed by its host.
pub(super) struct Case<'a> {
    pub classname: &'a str,
    pub name: &'a str,
    /// Seconds the check took.
    pub time: Option<f64>,
    pub failure: Option<Failure>,
    /// Why it was not run, when it was not (an excluded site): `<skipped message="…"/>`.
    pub skipped: Option<&'static str>,
}

/// Why a test case failed: `type` the verdict, `message` one line, the body the details.
pub(super) struct Failure {
    pub kind: String,
    pub message: String,
    pub body: String,
}

/// How many test cases a JUnit report holds, and how many fail: its `<testsuite>`'s attributes,
/// known before the first row is read.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tally {
    pub tests: u64,
    pub failures: u64,
    pub skipped: u64,
}

/// A report being written: rows in one format, framed.
pub(super) struct Rows<'o, O: Write> {
    out: &'o mut O,
    format: Format,
    written: u64,
    /// What `--fail-on` counts: errors in the annotation formats, other failures warnings.
    fail_on: Vec<FailOn>,
    /// SARIF results written (a row may be several, or none).
    results: u64,
}

impl<'o, O: Write> Rows<'o, O> {
    /// Starts a report of `R` rows: the CSV header, JSON's `[`, the text header, the Markdown
    /// table's header, or JUnit's opening (a suite without counts).
    pub fn start<R: Row>(out: &'o mut O, format: Format) -> Result<Self, Error> {
        Self::start_tallied::<R>(out, format, None)
    }

    /// [`Rows::start`], with the counts a JUnit suite states up front.
    pub fn start_tallied<R: Row>(
        out: &'o mut O,
        format: Format,
        tally: Option<Tally>,
    ) -> Result<Self, Error> {
        match (format, R::text_header()) {
            (Format::Csv, _) => writeln!(out, "{}", R::csv_header())?,
            (Format::Json, _) => write!(out, "[")?,
            (Format::Text, Some(header)) => writeln!(out, "{header}")?,
            (Format::Markdown, _) if R::markdown_table() => {
                let header = R::markdown_header();
                table_row(out, &header)?;
                writeln!(out)?;
                table_row(out, &vec!["---"; header.len()])?;
                writeln!(out)?;
            }
            (Format::Sarif, _) => sarif::start(out)?,
            (Format::Junit, _) => {
                let counts = tally.map_or(String::new(), |t| {
                    let skipped = match t.skipped {
                        0 => String::new(),
                        n => format!(r#" skipped="{n}""#),
                    };
                    format!(r#" tests="{}" failures="{}"{skipped}"#, t.tests, t.failures)
                });
                writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
                writeln!(out, r#"<testsuites name="crawler"{counts}>"#)?;
                writeln!(out, r#"<testsuite name="crawler-report"{counts}>"#)?;
            }
            _ => {}
        }
        Ok(Rows {
            out,
            format,
            written: 0,
            fail_on: Vec::new(),
            results: 0,
        })
    }

    /// The annotations of what `fail_on` counts are errors, the others warnings.
    pub fn failing_on(mut self, fail_on: &[FailOn]) -> Self {
        self.fail_on = fail_on.to_vec();
        self
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
            Format::Markdown => {
                row.write_markdown(out)?;
                writeln!(out)?;
            }
            Format::Junit => {
                if let Some(case) = row.junit() {
                    write_case(out, &case)?;
                }
            }
            Format::Github => {
                if let Some(finding) = row.finding() {
                    github::write(out, &finding, &self.fail_on)?;
                }
            }
            Format::Sarif => {
                if let Some(finding) = row.finding() {
                    self.results += sarif::write(out, &finding, &self.fail_on, self.results)?;
                }
            }
        }
        self.written += 1;
        Ok(())
    }

    /// Ends the report (JSON's `]`), flushes it, and returns how many rows it holds.
    pub fn finish(self) -> Result<u64, Error> {
        match self.format {
            Format::Json => writeln!(self.out, "]")?,
            Format::Junit => writeln!(self.out, "</testsuite>\n</testsuites>")?,
            Format::Sarif => sarif::finish(self.out)?,
            _ => {}
        }
        self.out.flush()?;
        Ok(self.written)
    }
}

/// A Markdown table row of `cells`, escaped ([`markdown_cell`]), without its line break.
pub(super) fn table_row(out: &mut impl Write, cells: &[impl AsRef<str>]) -> std::io::Result<()> {
    write!(out, "|")?;
    for cell in cells {
        write!(out, " {} |", markdown_cell(cell.as_ref()))?;
    }
    Ok(())
}

/// Text made safe in a Markdown table cell: a `|` would end the cell, a line break the row,
/// `<` and `>` would be HTML, `[`, `]` and `` ` `` would make links and code of a URL.
pub(super) fn markdown_cell(text: &str) -> Cow<'_, str> {
    if !text.contains(['|', '\\', '\n', '\r', '<', '>', '[', ']', '`']) {
        return text.into();
    }
    let mut cell = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '|' | '\\' | '[' | ']' | '`' => {
                cell.push('\\');
                cell.push(c);
            }
            '\n' | '\r' => cell.push(' '),
            '<' => cell.push_str("&lt;"),
            '>' => cell.push_str("&gt;"),
            c => cell.push(c),
        }
    }
    cell.into()
}

/// One JUnit `<testcase>`, with its `<failure>` if it has one.
fn write_case(out: &mut impl Write, case: &Case<'_>) -> std::io::Result<()> {
    write!(
        out,
        r#"<testcase classname="{}" name="{}""#,
        xml(case.classname),
        xml(case.name)
    )?;
    if let Some(time) = case.time {
        write!(out, r#" time="{time:.3}""#)?;
    }
    match (&case.failure, case.skipped) {
        (None, None) => writeln!(out, "/>"),
        (None, Some(why)) => writeln!(out, r#"><skipped message="{}"/></testcase>"#, xml(why)),
        (Some(f), _) => writeln!(
            out,
            r#"><failure type="{}" message="{}">{}</failure></testcase>"#,
            xml(&f.kind),
            xml(&f.message),
            xml(&f.body)
        ),
    }
}

/// Text escaped for XML, in an attribute or between tags; characters XML 1.0 cannot hold (most
/// control characters) become U+FFFD.
pub(super) fn xml(text: &str) -> Cow<'_, str> {
    let plain = |c: char| {
        !matches!(c, '&' | '<' | '>' | '"' | '\'') && (c >= ' ' || matches!(c, '\t' | '\n' | '\r'))
    };
    if text.chars().all(plain) {
        return text.into();
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            c if plain(c) => escaped.push(c),
            _ => escaped.push('\u{FFFD}'),
        }
    }
    escaped.into()
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
        assert_eq!(
            written(Format::Markdown, &pairs),
            "| name | n |\n| --- | --- |\n| x,y | 1 |\n| z | 2 |\n"
        );
        assert_eq!(
            written(Format::Junit, &pairs),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"crawler\">\n\
             <testsuite name=\"crawler-report\">\n</testsuite>\n</testsuites>\n",
            "rows that are no test cases are left out"
        );
    }

    #[test]
    fn markdown_cells_cannot_break_the_table_or_make_html() {
        assert_eq!(
            markdown_cell("a|b\nc <script> [x](y) `z` \\"),
            "a\\|b c &lt;script&gt; \\[x\\](y) \\`z\\` \\\\"
        );
        assert_eq!(
            markdown_cell("https://a.example/x?y=1&z=2"),
            "https://a.example/x?y=1&z=2"
        );
    }

    #[test]
    fn xml_escapes_markup_and_replaces_what_xml_cannot_hold() {
        assert_eq!(
            xml("a<b>&\"c'\u{1}\td"),
            "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}\td"
        );
        assert_eq!(xml("plain"), "plain");
    }

    #[test]
    fn a_junit_case_fails_with_its_details() {
        let mut out = Vec::new();
        write_case(
            &mut out,
            &Case {
                classname: "a.example",
                name: "https://a.example/x?a=1&b=2",
                time: Some(0.035),
                failure: Some(Failure {
                    kind: "dead".into(),
                    message: "404 dead".into(),
                    body: "status: 404 <Not Found>".into(),
                }),
                skipped: None,
            },
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "<testcase classname=\"a.example\" name=\"https://a.example/x?a=1&amp;b=2\" \
             time=\"0.035\"><failure type=\"dead\" message=\"404 dead\">status: 404 \
             &lt;Not Found&gt;</failure></testcase>\n"
        );
    }

    #[test]
    fn a_skipped_junit_case_says_why() {
        let mut out = Vec::new();
        let case = Case {
            classname: "a.example",
            name: "https://a.example/private",
            time: None,
            failure: None,
            skipped: Some("excluded: not checked"),
        };
        write_case(&mut out, &case).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "<testcase classname=\"a.example\" name=\"https://a.example/private\">\
             <skipped message=\"excluded: not checked\"/></testcase>\n"
        );
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
