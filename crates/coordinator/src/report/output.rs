//! Where a report goes: stdout, or the file given with `-o`, which is written whole or not at
//! all.
//!
//! The file is written under a temporary name in its own directory (so that the rename stays on
//! one file system), synced, then renamed over FILE: a reader (the next CI step, a web server)
//! never sees half a report, and a report that fails leaves the FILE there was as it was. The
//! temporary file is removed whenever the report does not finish.

use std::fs::Permissions;
use std::io::{self, BufWriter, Stdout, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::Error;

/// A report's destination.
pub enum Output {
    Stdout(BufWriter<Stdout>),
    File {
        temp: BufWriter<NamedTempFile>,
        /// Where the report goes once it is complete.
        path: PathBuf,
    },
}

impl Output {
    /// Stdout, or (with `path`) a temporary file beside `path`, created now: a path that cannot
    /// be written fails before the database is asked anything.
    pub fn open(path: Option<&Path>) -> Result<Output, Error> {
        let Some(path) = path else {
            return Ok(Output::Stdout(BufWriter::new(io::stdout())));
        };
        let failed = |source| Error::Output {
            path: path.display().to_string(),
            source,
        };
        if path.is_dir() {
            return Err(failed(io::Error::from(io::ErrorKind::IsADirectory)));
        }
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            // As any new file: the umask decides, not tempfile's private 0600.
            .permissions(Permissions::from_mode(0o666))
            .tempfile_in(dir)
            .map_err(failed)?;
        Ok(Output::File {
            temp: BufWriter::new(temp),
            path: path.to_owned(),
        })
    }

    /// Puts the complete report in place: flushes stdout, or syncs the file and renames it over
    /// its path.
    pub fn finish(self) -> Result<(), Error> {
        let (temp, path) = match self {
            Output::Stdout(mut out) => return Ok(out.flush()?),
            Output::File { temp, path } => (temp, path),
        };
        let failed = |source| Error::Output {
            path: path.display().to_string(),
            source,
        };
        let temp = temp.into_inner().map_err(|e| failed(e.into_error()))?;
        temp.as_file().sync_all().map_err(failed)?;
        temp.persist(&path).map_err(|e| failed(e.error))?;
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(out) => out.write(buf),
            Output::File { temp, .. } => temp.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(out) => out.flush(),
            Output::File { temp, .. } => temp.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    /// A directory holding `dead.csv`, a report from before; and a new report to replace it,
    /// one line written.
    fn replacing_an_old_report() -> (tempfile::TempDir, PathBuf, Output) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dead.csv");
        std::fs::write(&path, "old\n").unwrap();
        let mut out = Output::open(Some(&path)).unwrap();
        writeln!(out, "new").unwrap();
        out.flush().unwrap();
        (dir, path, out)
    }

    #[test]
    fn the_file_appears_only_once_the_report_is_finished() {
        let (dir, path, out) = replacing_an_old_report();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        assert_eq!(
            names(dir.path()).len(),
            2,
            "the report and its temporary file"
        );
        out.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        assert_eq!(names(dir.path()), ["dead.csv"]);
    }

    #[test]
    fn a_report_that_does_not_finish_leaves_the_old_file_and_no_other() {
        let (dir, path, out) = replacing_an_old_report();
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        assert_eq!(names(dir.path()), ["dead.csv"]);
    }

    #[test]
    fn a_path_that_cannot_be_written_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        for path in [file.join("report.csv"), dir.path().to_owned()] {
            let Err(error) = Output::open(Some(&path)) else {
                panic!("{} opened", path.display());
            };
            let message = crate::error::chain(&error);
            assert!(
                message.starts_with(&format!("cannot write the report to {}: ", path.display())),
                "{message}"
            );
        }
    }
}
