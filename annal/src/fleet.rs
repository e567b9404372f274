//! `annal::fleet`: the fleet's names, and the [`Annal`] calls that publish to, follow and share
//! sessions through it.
pub use annal_fleet::{
    prefix_for, session_of_subject, subject, Credentials, Fleet, FleetError, FleetOptions, FollowOptions,
    FollowReport, PublishOptions, PublishReport, SessionStatus, PREFIX_DEFAULT, STREAM_DEFAULT, WIRE_VERSION,
};

use crate::{Annal, AppendReceipt, Error, Record};

/// A session of an [`Annal`] shared through a [`Fleet`] ([`Annal::shared`]): several hosts
/// append to it, and the servers check each append's position.
#[derive(Debug)]
pub struct SharedSession<'a>(annal_fleet::SharedSession<'a>);

impl SharedSession<'_> {
    /// Appends `records` as the session's next ones: with `expected_next`, only if that is
    /// the session's next sourceOrder on the fleet. Returns once a majority of the stream's
    /// replicas hold them and this store has applied them; a retry with the same entryIds
    /// never duplicates. With no server answering, the records go to a local fork of the
    /// session (see [`SharedSession::writing_to`]), published as a fork when the fleet is back,
    /// and the call says so with an error of kind `ErrorKind::Forked` naming the fork.
    ///
    /// # Errors
    /// A conflict when another writer took the position ([`Error::kind`] is
    /// `ErrorKind::Conflict`, as from a local store); invalid records; `ErrorKind::Busy` when
    /// a record was sent and not acknowledged in time (the stream may hold it: retry with the
    /// same entryIds); `ErrorKind::Forked` when the records went to this host's fork.
    pub fn append(&self, expected_next: Option<u64>, records: Vec<Record>) -> Result<AppendReceipt, Error> {
        Ok(self.0.append(expected_next, records)?)
    }

    /// Brings this store's copy of the session up to the fleet's; returns the records applied.
    ///
    /// # Errors
    /// The stream cannot be read, the store written, or the session's messages do not chain.
    pub fn refresh(&self) -> Result<u64, Error> {
        Ok(self.0.refresh()?)
    }

    /// Where appends go now: the session, or the local fork its offline appends went to.
    ///
    /// # Errors
    /// The store's cursors cannot be read.
    pub fn writing_to(&self) -> Result<String, Error> {
        Ok(self.0.writing_to()?)
    }
}

impl Annal {
    /// Publishes what the fleet lacks of this store's sessions (or those `options` choose),
    /// resuming after the fleet's last record of each; returns when the stream holds it.
    ///
    /// # Errors
    /// [`Error::Fleet`]: the servers cannot be reached or do not acknowledge in time, or the
    /// store cannot be read. What was acknowledged stays published.
    pub fn publish(&self, fleet: &Fleet, options: &PublishOptions) -> Result<PublishReport, Error> {
        Ok(annal_fleet::publish(fleet, &self.store, options)?)
    }

    /// Applies the fleet's records to this store from where it left off, verifying each
    /// session's chain; with `options.watch`, goes on until `keep_going` returns false. The
    /// search index follows the store, so the fleet's sessions become searchable here.
    ///
    /// # Errors
    /// [`Error::Fleet`]: the stream cannot be read or the store written. A session whose
    /// messages do not chain is not an error: it stops, and the report names it.
    pub fn follow(
        &self,
        fleet: &Fleet,
        options: &FollowOptions,
        keep_going: &dyn Fn() -> bool,
    ) -> Result<FollowReport, Error> {
        Ok(annal_fleet::follow(fleet, &self.store, options, keep_going)?)
    }

    /// Per session, what this store holds against what the fleet holds.
    ///
    /// # Errors
    /// [`Error::Fleet`]: the stream cannot be asked or the store read.
    pub fn fleet_status(&self, fleet: &Fleet, pattern: Option<&str>) -> Result<Vec<SessionStatus>, Error> {
        Ok(annal_fleet::status(fleet, &self.store, pattern)?)
    }

    /// This store's host key, as 64 hex digits of its public half: what other hosts trust
    /// (`trust_add`) to accept what this one publishes. Made on first use beside the store file
    /// (`<file>-fleet-key`, readable by its owner only); its secret half is never shown.
    ///
    /// # Errors
    /// [`Error::Fleet`]: the key file cannot be read or written.
    pub fn fleet_key(&self) -> Result<String, Error> {
        Ok(annal_fleet::host_key(&self.store)?)
    }

    /// Trusts the public key `key` (64 hex digits) under `name`. Once a store trusts any key,
    /// `follow` applies only records signed by a trusted key or this host's own, and stops a
    /// session at the first other one.
    ///
    /// # Errors
    /// Bad input for an invalid name or key; the store cannot be written.
    pub fn trust_add(&self, name: &str, key: &str) -> Result<(), Error> {
        Ok(annal_fleet::trust_add(&self.store, name, key)?)
    }

    /// Stops trusting the key named `name`.
    ///
    /// # Errors
    /// Not found when no trusted key has that name; the store cannot be written.
    pub fn trust_remove(&self, name: &str) -> Result<(), Error> {
        Ok(annal_fleet::trust_remove(&self.store, name)?)
    }

    /// The trusted keys: (name, public key as 64 hex digits), by name.
    ///
    /// # Errors
    /// The store cannot be read.
    pub fn trusted(&self) -> Result<Vec<(String, String)>, Error> {
        Ok(annal_fleet::trusted(&self.store)?)
    }

    /// The session `name` shared through `fleet`: appends return once the stream holds them,
    /// with the position checked by the servers.
    pub fn shared<'a>(&'a self, fleet: &'a Fleet, name: &str) -> SharedSession<'a> {
        SharedSession(annal_fleet::SharedSession::new(fleet, &self.store, name))
    }
}
