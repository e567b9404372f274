//! What a failed call rejects with: each failure (`annal_bindings::Failure`: the error class of
//! its kind, the one line the command line prints for the same failure, a conflict's positions)
//! as a Node-API error whose message is one JSON object, which `lib/errors.ts` turns into an
//! instance of the class.

use annal_bindings::Failure;
use serde_json::json;

/// What begins the message of every error the addon raises, so the TypeScript side tells its
/// own apart from Node's.
pub(crate) const MARK: &str = "annal-error:";

/// The Node-API error carrying `failure`.
pub(crate) fn to_napi(failure: Failure) -> napi::Error {
    let mut body = json!({"class": failure.class(), "message": failure.message});
    if let Some((expected, actual)) = failure.conflict {
        body["expected"] = json!(expected);
        body["actual"] = json!(actual);
    }
    napi::Error::new(napi::Status::GenericFailure, format!("{MARK}{body}"))
}
