use std::fmt;

/// Why merge, align or order failed.
#[derive(Debug)]
pub enum Error {
    /// A trace could not be read (its own message names the file and byte or line).
    Format(spoor_format::Error),
    /// The input is readable but wrong: a dangling id, a location fed by two inputs,
    /// a cycle in happened-before. The message names the file and the event.
    Input { file: String, message: String },
    /// The operating system failed on a file (spooling standard input, a directory).
    Io { file: String, err: std::io::Error },
    /// Writing the output failed (a closed pipe surfaces here as `BrokenPipe`).
    Write(std::io::Error),
    /// The options do not fit the inputs (an application named in `--compare` that
    /// none of them has, an unknown reference location).
    Usage(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn input(file: &str, message: impl Into<String>) -> Self {
        Error::Input { file: file.to_owned(), message: message.into() }
    }

    /// True when writing failed because the reader of a pipe went away.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Write(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Format(e) => write!(f, "{e}"),
            Error::Input { file, message } => write!(f, "{file}: {message}"),
            Error::Io { file, err } => write!(f, "{file}: {err}"),
            Error::Write(e) => write!(f, "writing the output: {e}"),
            Error::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl From<spoor_format::Error> for Error {
    fn from(e: spoor_format::Error) -> Self {
        Error::Format(e)
    }
}
