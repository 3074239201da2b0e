//! The exceptions the NIF raises: the package's own structs, and the
//! Elixir ones (`ArgumentError`, `RuntimeError`, `FunctionClauseError`) with
//! NoNoncense's words, so that a NoNoncense user's `assert_raise` holds.

use rustler::types::atom::Atom;
use rustler::{Encoder, Env, Error, NifException, Term};

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

/// `FunctionClauseError` for `Nonceforge.<function>/<arity>`: what
/// NoNoncense raises where no clause of its functions matches (a bit size
/// other than 64, 96 or 128, an unknown base type, a nonce of another size
/// for `encrypt`/`decrypt`, a padded 96-bit nonce whose tail is not zero).
pub(crate) fn no_clause(function: &'static str, arity: usize) -> Error {
    Error::RaiseTerm(Box::new(NoClause { function, arity }))
}

struct NoClause {
    function: &'static str,
    arity: usize,
}

impl Encoder for NoClause {
    fn encode<'a>(&self, env: Env<'a>) -> Term<'a> {
        let atom = |s: &str| Atom::from_str(env, s).expect("a valid atom").encode(env);
        let nil = rustler::types::atom::nil().encode(env);
        let fields = [
            ("__struct__", atom("Elixir.FunctionClauseError")),
            ("__exception__", true.encode(env)),
            ("module", atom("Elixir.Nonceforge")),
            ("function", atom(self.function)),
            ("arity", self.arity.encode(env)),
            ("kind", nil),
            ("args", nil),
            ("clauses", nil),
        ];
        let mut map = Term::map_new(env);
        for (key, value) in fields {
            map = map.map_put(atom(key), value).expect("a map");
        }
        map
    }
}

/// A core error as the exception Elixir code expects.
pub(crate) fn core_error(e: nonceforge::Error) -> Error {
    match e {
        // NoNoncense's exception and words (Nonceforge's README says what to pass).
        nonceforge::Error::NoKey => Error::RaiseTerm(Box::new(RuntimeError {
            message: "no key set at NoNoncense initialization".into(),
        })),
        nonceforge::Error::Disabled => Error::RaiseTerm(Box::new(DisabledError {
            message: "instance is disabled".into(),
        })),
        other => arg_error(other.to_string()),
    }
}
