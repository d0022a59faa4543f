use std::fmt;

/// Why building or analysing a PAG failed.
#[derive(Debug)]
pub enum Error {
    /// A trace or PAG file could not be read (its message names the file and byte or line).
    Format(spoor_format::Error),
    /// The input is readable but not what the analysis needs: not ordered, a receive
    /// before its send, a cycle. The message names the file and the events.
    Input {
        /// The input's name.
        file: String,
        /// What is wrong, naming the events.
        message: String,
    },
    /// The options do not fit the input (an unknown application, phase or procedure).
    Usage(String),
    /// Writing the output failed.
    Write(std::io::Error),
    /// The graph's file in the spill directory could not grow (the disk full); the
    /// message names the directory.
    Spill(std::io::Error),
}

/// A result with the graph's `Error`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The input is not what the analysis needs, said of `file`.
    pub fn input(file: &str, message: impl Into<String>) -> Self {
        Error::Input { file: file.to_owned(), message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The inner error follows as this one's source.
            Error::Format(_) => f.write_str("reading the input"),
            Error::Input { file, message } => write!(f, "{file}: {message}"),
            Error::Usage(m) => f.write_str(m),
            Error::Write(_) => f.write_str("writing the output"),
            Error::Spill(_) => f.write_str("keeping the graph on disk"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Format(e) => Some(e),
            Error::Write(e) | Error::Spill(e) => Some(e),
            _ => None,
        }
    }
}

impl From<spoor_format::Error> for Error {
    fn from(e: spoor_format::Error) -> Self {
        Error::Format(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Write(e)
    }
}
