//! annal for Python: the `annal._annal` extension module behind the `annal` package. It holds
//! [`store::Store`] over the `annal` facade, with values crossing as the JSON shapes the command
//! line prints; the Python side (`annal/`) adds the exceptions, type stubs and the Agents SDK
//! session.

mod convert;
mod errors;
mod imports;
mod items;
mod store;

use pyo3::prelude::*;

/// The extension module: `Store`, and the version it was built as.
#[pymodule]
fn _annal(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<store::Store>()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("GENERATION_MARK", items::GENERATION_MARK)?;
    Ok(())
}
