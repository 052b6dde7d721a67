//! Preflight: will a pane resume its conversation, recover another one, or start fresh?
//!
//! Provider on-disk layouts live here; the verdict and the gate arrive with the preflight issue.

pub mod paths;
