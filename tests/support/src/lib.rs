//! annal-support: what the integration tests, the CLI tests, the benchmarks and the fuzz targets
//! share, written once: a seeded RNG, session generators, a simulated disk that can crash and
//! fail, a reference model of the journal, and the properties every projection must have.
//!
//! Dev-only (`publish = false`); nothing in the product crates depends on it.

pub mod agent_schemas;
pub mod calendar;
pub mod corpus;
pub mod disk;
pub mod http;
pub mod identifiers;
pub mod indexed;
pub mod model;
pub mod nats;
pub mod process;
pub mod projection_checks;
pub mod proxy;
pub mod records;
pub mod rng;
pub mod sessions;
pub mod workload;
