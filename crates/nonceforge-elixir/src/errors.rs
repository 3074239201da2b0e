//! The exceptions the NIF raises: the package's own structs, and the
//! Elixir ones (`ArgumentError`, `RuntimeError`) with NoNoncense's words.

use rustler::{Error, NifException};

#[derive(NifException)]
#[module = "Nonceforge.Errors.UninitializedError"]
pub(crate) struct UninitializedError {
    pub(crate) message: String,
}

#[derive(NifException)]
#[module = "Nonceforge.Errors.DisabledError"]
pub(crate) struct DisabledError {
    pub(crate) message: String,
}

#[derive(NifException)]
#[module = "RuntimeError"]
struct RuntimeError {
    pub(crate) message: String,
}

#[derive(NifException)]
#[module = "ArgumentError"]
pub(crate) struct ArgumentError {
    pub(crate) message: String,
}

/// `ArgumentError` with `message`.
pub(crate) fn arg_error(message: impl Into<String>) -> Error {
    Error::RaiseTerm(Box::new(ArgumentError {
        message: message.into(),
    }))
}

/// A core error as the exception Elixir code expects.
pub(crate) fn core_error(e: nonceforge::Error) -> Error {
    match e {
        // NoNoncense's module and words, ours after them.
        nonceforge::Error::NoKey => Error::RaiseTerm(Box::new(RuntimeError {
            message: "no key set at NoNoncense initialization: pass base_key (32 bytes or more) to Nonceforge.init/1".into(),
        })),
        nonceforge::Error::Disabled => Error::RaiseTerm(Box::new(DisabledError {
            message: "this Nonceforge instance is disabled: its lease lapsed or was lost, or it was disabled (ConflictGuard)".into(),
        })),
        other => arg_error(other.to_string()),
    }
}
