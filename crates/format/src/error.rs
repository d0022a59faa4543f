use std::fmt;

/// Why a trace could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The operating system failed (file missing, permission, disk).
    Io,
    /// The bytes or text are not what the format says (truncated, corrupt, hostile).
    Corrupt,
    /// A major version this build does not read.
    Version,
}

/// An error naming the file, where in it (byte offset or line), and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What went wrong, for the exit code and for tests.
    pub kind: ErrorKind,
    /// The file (or stream) being read.
    pub file: String,
    /// Byte offset of the problem, where it has one.
    pub offset: Option<u64>,
    /// Line of the problem in the text form (1-based).
    pub line: Option<u64>,
    /// What was expected and what was found.
    pub message: String,
}

impl Error {
    /// Bytes that are not what the format says, at `offset`.
    pub fn corrupt(file: &str, offset: u64, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Corrupt,
            file: file.into(),
            offset: Some(offset),
            line: None,
            message: message.into(),
        }
    }

    /// Text that is not what the format says, at `line`.
    pub fn at_line(file: &str, line: u64, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Corrupt,
            file: file.into(),
            offset: None,
            line: Some(line),
            message: message.into(),
        }
    }

    /// An operating-system failure on `file`.
    pub fn io(file: &str, err: &std::io::Error) -> Self {
        Error { kind: ErrorKind::Io, file: file.into(), offset: None, line: None, message: err.to_string() }
    }

    /// A version this build does not read (named at the header's version bytes).
    pub fn version(file: &str, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Version,
            file: file.into(),
            offset: Some(8),
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ": line {l}")?;
        }
        if let Some(o) = self.offset {
            write!(f, ": byte {o}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for Error {}

/// The largest small text file [`read_text`] takes.
pub const MAX_TEXT_FILE: u64 = 64 << 20;

/// A small text file read whole (a placement, a scenario, a cost table): bytes that are
/// not UTF-8 are an error naming the line and the byte offset in the file, and a file
/// longer than `MAX_TEXT_FILE` (or a device that never ends) is refused once that much
/// has been read.
pub fn read_text(path: &str) -> Result<String, Error> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_FILE + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, &e))?;
    if bytes.len() as u64 > MAX_TEXT_FILE {
        return Err(Error::corrupt(path, MAX_TEXT_FILE, "expected a small text file, not more than 64 MiB"));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        Error { offset: Some(at as u64), ..Error::at_line(path, line, "not valid UTF-8 text") }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_text_refuses_what_never_ends_and_what_is_not_utf8() {
        let e = read_text("/dev/zero").unwrap_err();
        assert_eq!(e.offset, Some(MAX_TEXT_FILE));
        assert!(e.to_string().contains("/dev/zero") && e.to_string().contains("64 MiB"), "{e}");
        let d = std::env::temp_dir().join(format!("spoor-read-text-{}", std::process::id()));
        std::fs::write(&d, b"ok\nbad \xff here\n").unwrap();
        let e = read_text(d.to_str().unwrap()).unwrap_err();
        assert_eq!((e.line, e.offset), (Some(2), Some(7)), "{e}");
        std::fs::remove_file(&d).unwrap();
    }
}
