//! One store call as a napi-rs `AsyncTask`: its work runs on libuv's thread pool, so a read,
//! a search or an append's fsync never blocks the JavaScript thread; the promise resolves with
//! the JSON text (or plain text) the call made.

use napi::bindgen_prelude::{AsyncTask, Env, Task};

use annal_bindings::Failure;

use crate::errors::to_napi;

/// The work of one call, run once on a pool thread.
pub type Work = Box<dyn FnOnce() -> Result<String, Failure> + Send>;

/// A call waiting for, or running on, a pool thread.
pub struct Job {
    work: Option<Work>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("done", &self.work.is_none()).finish()
    }
}

/// The promise of `work`'s text.
pub(crate) fn spawn(work: impl FnOnce() -> Result<String, Failure> + Send + 'static) -> AsyncTask<Job> {
    AsyncTask::new(Job { work: Some(Box::new(work)) })
}

/// The promise of a failure found before any work: rejected as the work would have been.
pub(crate) fn failed(failure: Failure) -> AsyncTask<Job> {
    let mut failure = Some(failure);
    spawn(move || Err(failure.take().unwrap_or_else(|| Failure::bad_input("failed twice"))))
}

impl Task for Job {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        let work = self.work.take().ok_or_else(|| to_napi(Failure::bad_input("a task ran twice")))?;
        work().map_err(to_napi)
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}
