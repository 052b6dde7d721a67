//! The binary's failures and the exit code each maps to (the README's table: 1 failed, 2 usage
//! or invalid input, 4 nothing found), and how an error is said on one line.

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
    /// The exit code of the README's table.
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
        Failure::Failed(error.into())
    }
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
