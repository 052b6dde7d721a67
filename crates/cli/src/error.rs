//! The binary's failures and the exit code each maps to (the table of docs/commands.md: 1 failed, 2 usage
//! or invalid input, 4 nothing found), how an error is said on one line, and the hints a
//! library error gets here: the libraries say what is wrong, and this binary adds what to do
//! with its own options (`--path`, `--allow-volatile`), which they do not know.

/// An outcome other than success, with the exit code it maps to.
#[derive(Debug)]
pub enum Failure {
    /// 1: an I/O error, the lock not obtained in time, the index refused.
    Failed(anyhow::Error),
    /// 2: a usage error or invalid input; nothing was written.
    Usage(anyhow::Error),
    /// 4: nothing found: no such surface, or no resumable session.
    NotFound(String),
}

impl Failure {
    /// The exit code of docs/commands.md's table.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Failed(_) => 1,
            Failure::Usage(_) => 2,
            Failure::NotFound(_) => 4,
        }
    }
}

impl Failure {
    /// The failure as an error, for code that only logs it (the hook).
    pub fn into_error(self) -> anyhow::Error {
        match self {
            Failure::Failed(error) | Failure::Usage(error) => error,
            Failure::NotFound(message) => anyhow::anyhow!(message),
        }
    }
}

impl From<index_store::StoreError> for Failure {
    fn from(error: index_store::StoreError) -> Self {
        Failure::Failed(store_error(error))
    }
}

impl From<resume_plan::LocationError> for Failure {
    fn from(error: resume_plan::LocationError) -> Self {
        use resume_plan::{LocationError, Placed};
        match error {
            LocationError::EmptyIndexPath => Failure::Usage(anyhow::anyhow!(
                "{error}; give a file path with --path or CRASH_RESUME_INDEX_PATH"
            )),
            // Only the index has a path option.
            LocationError::NoHome {
                what: Placed::Index,
                ..
            } => Failure::Failed(anyhow::anyhow!("{error} or --path")),
            other => Failure::Failed(other.into()),
        }
    }
}

/// A store error as people read it: its words, then what to do about the index path through
/// this binary's options.
pub fn store_error(error: index_store::StoreError) -> anyhow::Error {
    use index_store::StoreError;
    let hint = match &error {
        StoreError::Volatile { .. } => {
            "; choose a durable path with --path or CRASH_RESUME_INDEX_PATH, or pass \
             --allow-volatile to accept that"
        }
        StoreError::NoHome => "; set HOME, XDG_STATE_HOME or --path",
        StoreError::Write { .. } => {
            ": make the directory writable, free some disk space, or choose another path with \
             --path"
        }
        StoreError::UnsafeOwnership { .. } => ", or choose another path with --path",
        StoreError::NotAnIndex { .. } => {
            ". Check --path and CRASH_RESUME_INDEX_PATH; if it is an index that was damaged, \
             move it aside and run again (a new index is started)"
        }
        _ => return error.into(),
    };
    // The message carries the cause already (`Write`'s I/O error); the others have none.
    anyhow::anyhow!("{error}{hint}")
}

impl From<index_core::InvalidId> for Failure {
    fn from(error: index_core::InvalidId) -> Self {
        Failure::Usage(error.into())
    }
}

/// An error and its causes on one line, each cause stated once: a cause whose text the message
/// already carries (a library error that names its cause in its own message) is not repeated.
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.is_empty() {
            text = cause;
        } else if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
