//! annal for Python: the `annal._annal` extension module behind the `annal` package. It holds
//! `Store` (`store.rs`) over the `annal` facade, with values crossing as the JSON shapes the command
//! line prints; the Python side (`annal/`) adds the exceptions, type stubs and the Agents SDK
//! session.

mod convert;
mod errors;
mod fleet;
mod guard;
mod imports;
mod store;

use pyo3::prelude::*;

/// The annal session holding `generation` of the Agents SDK session `id`: `id` itself, then
/// `<id>~pop<N>`.
#[pyfunction]
fn generation_name(id: &str, generation: u64) -> String {
    annal_bindings::generation_name(id, generation)
}

/// The extension module: `Store`, the version it was built as, the names an Agents SDK
/// session's generations and seals use (defined once, here in Rust, which reads them), and the
/// exception class of each kind of failure.
#[pymodule]
fn _annal(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<store::Store>()?;
    module.add_class::<fleet::Fleet>()?;
    module.add_function(wrap_pyfunction!(generation_name, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("GENERATION_MARK", annal_bindings::GENERATION_MARK)?;
    module.add("SEAL_KEY", annal::responses::RESPONSES_SEAL_KEY)?;
    // Each kind of failure and the class raised for it, so the Python side can check it has
    // every class and tests can check each one against the command line.
    let kinds: Vec<(&str, &str)> = annal::error::ErrorKind::ALL
        .iter()
        .map(|&kind| (kind.as_str(), annal_bindings::class_of(kind)))
        .collect();
    module.add("ERROR_KINDS", kinds)?;
    Ok(())
}
