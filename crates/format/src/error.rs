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
    pub kind: ErrorKind,
    pub file: String,
    pub offset: Option<u64>,
    pub line: Option<u64>,
    pub message: String,
}

impl Error {
    pub fn corrupt(file: &str, offset: u64, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Corrupt,
            file: file.into(),
            offset: Some(offset),
            line: None,
            message: message.into(),
        }
    }

    pub fn at_line(file: &str, line: u64, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Corrupt,
            file: file.into(),
            offset: None,
            line: Some(line),
            message: message.into(),
        }
    }

    pub fn io(file: &str, err: &std::io::Error) -> Self {
        Error { kind: ErrorKind::Io, file: file.into(), offset: None, line: None, message: err.to_string() }
    }

    pub fn version(file: &str, message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Version,
            file: file.into(),
            offset: Some(8),
            line: None,
            message: message.into(),
        }
    }

    /// The exit code design.md assigns: 3 for an unsupported version, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::Version => 3,
            _ => 1,
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

/// A small text file read whole (a placement, a scenario, a cost table): bytes that are
/// not UTF-8 are an error naming the line and the byte offset in the file.
pub fn read_text(path: &str) -> Result<String, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, &e))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        Error { offset: Some(at as u64), ..Error::at_line(path, line, "not valid UTF-8 text") }
    })
}
