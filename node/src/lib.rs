//! annal for Node.js: the native addon behind the `annal` npm package. It holds `NativeStore`
//! (`store.rs`) over the `annal` facade, each call run on libuv's thread pool (`task.rs`) with
//! values crossing as the JSON texts the command line prints; the TypeScript side (`node/lib`)
//! adds the error classes, the types, the Agents JS session and the LangGraph.js checkpointer.

// napi-rs's derive macros write the Node-API glue as unsafe FFI calls; this crate's own code
// has no unsafe block.
#![allow(unsafe_code)]

pub mod args;
mod errors;
mod items;
pub mod store;
pub mod task;

use napi_derive::napi;

/// The annal session holding `generation` of the Agents session `id`: `id` itself, then
/// `<id>~pop<N>`.
#[napi(js_name = "generationName")]
pub fn generation_name(id: String, generation: u32) -> String {
    annal_bindings::generation_name(&id, u64::from(generation))
}

/// What separates an Agents session's id from the number of a later generation.
#[napi(js_name = "GENERATION_MARK")]
pub const GENERATION_MARK: &str = annal_bindings::GENERATION_MARK;

/// The metadata key of the record that seals an Agents session's generation.
#[napi(js_name = "SEAL_KEY")]
pub const SEAL_KEY: &str = annal::responses::RESPONSES_SEAL_KEY;

/// The version the addon was built as.
#[napi(js_name = "VERSION")]
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Each kind of failure, as the names of the error classes the package throws for it.
#[napi(js_name = "errorKinds")]
pub fn error_kinds() -> Vec<String> {
    annal::error::ErrorKind::ALL.iter().map(|&kind| annal_bindings::class_of(kind).to_owned()).collect()
}
