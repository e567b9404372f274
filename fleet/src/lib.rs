//! annal-fleet: one history across many hosts, on a NATS JetStream stream.
//!
//! A [`Fleet`] is a connection to the servers and the stream. [`publish`] sends a store's
//! committed records to it, [`follow`] applies the fleet's records to a store, verifying each
//! session's chain, and a [`SharedSession`] appends through it with the position checked by
//! the server. Each host signs what it publishes with a key of its own, and a follower that
//! trusts keys applies only what they signed. What a store knows of a fleet is kept as cursors
//! beside its journal.
//! docs/replication.md gives the wire form, the guarantees and how to run a cluster.

mod apply;
mod client;
mod connect;
mod error;
mod follow;
mod objects;
mod options;
mod pattern;
mod publish;
mod shared;
mod sign;
mod state;
mod status;
mod trust;
mod wire;

pub use crate::client::Fleet;
pub use crate::error::FleetError;
pub use crate::follow::{follow, FollowOptions, FollowReport};
pub use crate::options::{prefix_for, Credentials, FleetOptions, PREFIX_DEFAULT, STREAM_DEFAULT};
pub use crate::publish::{publish, PublishOptions, PublishReport};
pub use crate::shared::SharedSession;
pub use crate::status::{status, SessionStatus};
pub use crate::trust::{check_signatures, host_key, trust_add, trust_remove, trusted};
pub use crate::wire::{session_of_subject, subject, WIRE_VERSION};
