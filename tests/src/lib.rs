//! Test support shared by the integration tests: a simulated disk that can crash and fail, a
//! reference model of the journal with checks against it, record builders and a seeded RNG.

pub mod disk;
pub mod model;
pub mod process;
pub mod records;
pub mod rng;
pub mod workload;
