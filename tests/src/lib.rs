//! Test support shared by the integration tests: a simulated disk that can crash and fail, a
//! reference model of the journal with checks against it, record builders, a seeded RNG and the
//! properties every projection must have (shared with the projection fuzz target), and the
//! real-transcript corpus of the `corpus` tests.

pub mod corpus;
pub mod disk;
pub mod model;
pub mod process;
pub mod projection_checks;
pub mod records;
pub mod rng;
pub mod workload;
