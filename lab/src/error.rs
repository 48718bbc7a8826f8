//! How a `lab` command ends badly: one error type whose kind carries the exit code.
//!
//! * [`Error::Usage`]: bad input (an option, a combination a plan rejects, an unknown
//!   experiment or variant, an unreadable or foreign `results.json` named on the command
//!   line, an `--out` that cannot be written before measuring starts) → exit 2.
//! * [`Error::Failed`]: something went wrong during or after measuring (a row that did not
//!   pass, a report file not written) → exit 1.
//! * [`Error::Interrupted`]: Ctrl-C or SIGTERM; what finished is written → exit 130.
//!
//! There is no conversion from `String`: every site that turns a message into an `Error`
//! names its kind. [`crate::cli::main`] prints `lab: {error}` (one line on stderr) and
//! exits with [`Error::exit_code`]. A `lab compare` that finds a change exits 1 too, but
//! that is its answer, not an error.

use std::fmt;

/// Exit code of a command that did what was asked.
pub const SUCCESS: i32 = 0;

/// A `lab` command's error; its kind decides the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Bad input, named in one line with the valid choices: exit 2.
    Usage(String),
    /// A failure during or after measuring: exit 1.
    Failed(String),
    /// Interrupted (Ctrl-C, SIGTERM); what finished is written: exit 130.
    Interrupted,
}

impl Error {
    /// The process's exit code for this kind.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Failed(_) => 1,
            Error::Interrupted => 130,
        }
    }

    /// One error of each kind (for tests and docs that list the codes).
    pub fn every_kind() -> [Error; 3] {
        let all = [Error::Usage(String::new()), Error::Failed(String::new()), Error::Interrupted];
        // A new kind stops this match compiling: add it to `all` too.
        for e in &all {
            match e {
                Error::Usage(_) | Error::Failed(_) | Error::Interrupted => {}
            }
        }
        all
    }
}

impl fmt::Display for Error {
    /// The one line printed on stderr after `lab: `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) | Error::Failed(msg) => f.write_str(msg),
            Error::Interrupted => f.write_str("interrupted; what finished is written"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_exit_code() {
        assert_eq!(Error::Usage("bad".into()).exit_code(), 2);
        assert_eq!(Error::Failed("lost".into()).exit_code(), 1);
        assert_eq!(Error::Interrupted.exit_code(), 130);
        let codes: Vec<i32> = Error::every_kind().iter().map(Error::exit_code).collect();
        assert_eq!(codes, [2, 1, 130]);
        assert!(!codes.contains(&SUCCESS), "no error exits 0");
    }

    #[test]
    fn display_is_the_message_on_one_line() {
        assert_eq!(Error::Usage("unknown variant 'x'".into()).to_string(), "unknown variant 'x'");
        assert_eq!(Error::Failed("cannot write a".into()).to_string(), "cannot write a");
        assert_eq!(Error::Interrupted.to_string(), "interrupted; what finished is written");
        for e in Error::every_kind() {
            assert!(!e.to_string().contains('\n'), "{e:?}");
        }
    }
}
