//! The engine crate from outside, in one test binary: the basic round trip, claims and guards
//! settled inside the write transaction, named limits, change marks, and the layer order of the
//! crate's own source. The loom models (`loom_*.rs`) stay binaries of their own: they build only
//! with `--cfg loom`.

mod claims;
mod guards;
mod layers;
mod limits;
mod marks;
mod opening;
mod smoke;
