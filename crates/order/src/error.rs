/// Why merge, align or order failed. No variant names a source: each message is whole,
/// so a command prints it once.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A trace could not be read (its own message names the file and byte or line).
    #[error("{0}")]
    Format(spoor_format::Error),
    /// The input is readable but wrong: a dangling id, a location fed by two inputs,
    /// a cycle in happened-before. The message names the file and the event.
    #[error("{file}: {message}")]
    Input { file: String, message: String },
    /// The operating system failed on a file (spooling standard input, a directory).
    #[error("{file}: {err}")]
    Io { file: String, err: std::io::Error },
    /// Writing the output failed (a closed pipe surfaces here as `BrokenPipe`).
    #[error("writing the output: {0}")]
    Write(std::io::Error),
    /// The consumer the ordered events were handed to stopped with this error.
    #[error("{0}")]
    HandedOn(crate::order::BoxError),
    /// The options do not fit the inputs (an application named in `--compare` that
    /// none of them has, an unknown reference location).
    #[error("{0}")]
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

impl From<spoor_format::Error> for Error {
    fn from(e: spoor_format::Error) -> Self {
        Error::Format(e)
    }
}
