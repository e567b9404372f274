//! Trust and kept signatures: the keys a store trusts to write the fleet's sessions, the signer
//! and signature of each record it applied or published, and the check of those against the
//! records that `verify` runs.
//!
//! Both live in the store's cursor table, in the same redb file as the journal, under names of
//! the fleet's own: `fleet-trust:<name>` (the key's 32 bytes) and
//! `fleet-sig:<session>\0<sourceOrder as 16 hex digits>` (the signer's public key, then the
//! signature: 96 bytes), the latter written in the commit that stores the record. The journal
//! and its format are unchanged: a store without them reads every record as unsigned.

use std::collections::BTreeMap;

use annal_engine::{PortableRecord, Problem, Snapshot, Store};

use crate::error::FleetError;
use crate::sign::{self, HostKey, Signed, SIGNED_BYTES};
use crate::wire::Incoming;

const TRUST: &str = "fleet-trust:";
const SIGNATURE: &str = "fleet-sig:";

/// The longest name a trusted key may have.
const TRUST_NAME_BYTES_MAX: usize = 200;

/// The public key of `store`'s host key (64 hex digits), made beside the store if it has none.
/// The secret half is never returned.
///
/// # Errors
/// [`FleetError::HostKey`] when the key file cannot be read, written or parsed.
pub fn host_key(store: &Store) -> Result<String, FleetError> {
    Ok(HostKey::of(store)?.public_hex())
}

/// Trusts the public key `key` (64 hex digits) under `name`, replacing a key of that name.
///
/// # Errors
/// [`FleetError::BadTrust`] for a name that is empty, too long or holds control characters, or
/// a key that is not an ed25519 public key; the store's own errors.
pub fn trust_add(store: &Store, name: &str, key: &str) -> Result<(), FleetError> {
    if name.is_empty() || name.len() > TRUST_NAME_BYTES_MAX || name.chars().any(char::is_control) {
        return Err(FleetError::BadTrust(format!(
            "the name {name:?} must be 1 to {TRUST_NAME_BYTES_MAX} bytes without control characters"
        )));
    }
    let shown: String = key.chars().take(80).collect();
    let public = sign::parse_public(key).ok_or_else(|| {
        FleetError::BadTrust(format!(
            "{shown:?} is not a host's public key (64 hex digits, as `annal fleet key` prints)"
        ))
    })?;
    store.put_cursors(vec![(format!("{TRUST}{name}"), Some(public.to_vec()))])?;
    Ok(())
}

/// Stops trusting the key named `name`.
///
/// # Errors
/// [`FleetError::UnknownTrust`] when no trusted key has that name; the store's own errors.
pub fn trust_remove(store: &Store, name: &str) -> Result<(), FleetError> {
    let row = format!("{TRUST}{name}");
    if !store.cursors(&row)?.iter().any(|(found, _)| *found == row) {
        return Err(FleetError::UnknownTrust(name.to_owned()));
    }
    store.put_cursors(vec![(row, None)])?;
    Ok(())
}

/// The keys `store` trusts: (name, public key as 64 hex digits), by name.
///
/// # Errors
/// The store cannot be read.
pub fn trusted(store: &Store) -> Result<Vec<(String, String)>, FleetError> {
    Ok(Trust::read(store)?.keys.into_iter().map(|(public, name)| (name, sign::hex(&public))).collect())
}

/// The name of the row keeping the signature of `session`'s record at `order`.
pub(crate) fn signature_row(
    session: &str,
    order: u64,
    signed: &[u8; SIGNED_BYTES],
) -> (String, Option<Vec<u8>>) {
    (format!("{SIGNATURE}{session}\0{order:016x}"), Some(signed.to_vec()))
}

/// The kept signatures of `session`'s own records: (sourceOrder, signer and signature).
fn signatures(store: &Store, session: &str) -> Result<Vec<(u64, [u8; SIGNED_BYTES])>, FleetError> {
    let prefix = format!("{SIGNATURE}{session}\0");
    let mut out = Vec::new();
    for (name, value) in store.cursors(&prefix)? {
        let order = u64::from_str_radix(&name[prefix.len()..], 16).ok();
        let signed = <[u8; SIGNED_BYTES]>::try_from(value.as_slice()).ok();
        // A row that does not parse is kept as an impossible one, so verify names it.
        out.push((order.unwrap_or(u64::MAX), signed.unwrap_or([0; SIGNED_BYTES])));
    }
    Ok(out)
}

/// The keys a store trusts, and its own, which it always trusts.
#[derive(Debug, Default)]
pub(crate) struct Trust {
    /// Trusted public keys, with their names.
    keys: BTreeMap<[u8; 32], String>,
    own: Option<[u8; 32]>,
}

impl Trust {
    /// The trust list of `store`, without its own key.
    fn read(store: &Store) -> Result<Trust, FleetError> {
        let mut keys = BTreeMap::new();
        for (name, value) in store.cursors(TRUST)? {
            if let Ok(public) = <[u8; 32]>::try_from(value.as_slice()) {
                keys.insert(public, name[TRUST.len()..].to_owned());
            }
        }
        Ok(Trust { keys, own: None })
    }

    /// What a follower of `store` admits: its trust list, and its own key when the list is not
    /// empty (its own records, read back from the stream, stay admitted).
    pub(crate) fn load(store: &Store) -> Result<Trust, FleetError> {
        let mut trust = Trust::read(store)?;
        if !trust.keys.is_empty() {
            trust.own = Some(HostKey::of(store)?.public());
        }
        Ok(trust)
    }

    /// The same, labelling this host's own key when it has one, without making one.
    fn for_labels(store: &Store) -> Result<Trust, FleetError> {
        let mut trust = Trust::read(store)?;
        if let Some(path) = store.path() {
            if sign::key_path(path).exists() {
                trust.own = Some(HostKey::of(store)?.public());
            }
        }
        Ok(trust)
    }

    /// Whether records must be signed by a trusted key: the store trusts at least one.
    pub(crate) fn enforced(&self) -> bool {
        !self.keys.is_empty()
    }

    /// A signer as lines show it: its trusted name, `this host`, or its key's first digits.
    pub(crate) fn label(&self, public: &[u8]) -> String {
        if let Some(name) = <[u8; 32]>::try_from(public).ok().and_then(|key| self.keys.get(&key)) {
            return name.clone();
        }
        if self.own.is_some_and(|own| own == public) {
            return "this host".into();
        }
        sign::short(public)
    }

    /// The signature a message carries, if this admits it ([`Trust::admit`]); else why its
    /// session stops.
    pub(crate) fn admit_message(
        &self,
        session: &str,
        headers: Option<&async_nats::HeaderMap>,
        incoming: &Incoming,
    ) -> Result<Option<[u8; SIGNED_BYTES]>, String> {
        let signed = match headers {
            Some(headers) => sign::from_headers(headers)?,
            None => None,
        };
        // A record's signature is checked when its run is appended, on the appending threads
        // side by side (`Pass::flush`); a reference's before its object is read, a fork's at once.
        let (what, now) = match incoming {
            Incoming::Record { order, hash, .. } => {
                (Signed { kind: "record", session, order: *order, hash, parent: None }, false)
            }
            Incoming::RecordRef { order, hash, .. } => {
                (Signed { kind: "record", session, order: *order, hash, parent: None }, true)
            }
            Incoming::Fork { parent, at, head } => {
                (Signed { kind: "fork", session, order: *at, hash: head, parent: Some(parent) }, true)
            }
        };
        self.admit(&what, signed, now)
    }

    /// Whether a message signing `what` with `signed` (or unsigned) may be applied: the
    /// signature to keep, or the reason its session stops. With `check` false the signature
    /// itself is left for the caller to check ([`mismatch`]), by a signer this admits.
    fn admit(
        &self,
        what: &Signed<'_>,
        signed: Option<[u8; SIGNED_BYTES]>,
        check: bool,
    ) -> Result<Option<[u8; SIGNED_BYTES]>, String> {
        let Some(signed) = signed else {
            if self.enforced() {
                return Err("unsigned, and this store applies only records signed by a trusted key".into());
            }
            return Ok(None);
        };
        if check {
            if let Some(reason) = mismatch(what, &signed) {
                return Err(reason);
            }
        }
        let public = <[u8; 32]>::try_from(&signed[..32]).unwrap_or_default();
        if self.enforced() && !self.keys.contains_key(&public) && self.own != Some(public) {
            return Err(format!("signed by {}, a key this store does not trust", sign::short(&public)));
        }
        Ok(Some(signed))
    }
}

/// Why a record's signature (if it has one) does not match it.
pub(crate) fn bad_signature(
    session: &str,
    record: &PortableRecord,
    signed: Option<&[u8; SIGNED_BYTES]>,
) -> Option<String> {
    let signed = signed?;
    // Both claims are present: `parse_record` checked them against the headers.
    let (order, hash) = (record.source_order.unwrap_or_default(), record.hash.unwrap_or_default());
    mismatch(&Signed { kind: "record", session, order, hash: &hash, parent: None }, signed)
}

/// The rows keeping the signatures of a run of `session`'s records from `first` on.
pub(crate) fn kept(
    session: &str,
    first: u64,
    signed: &[Option<[u8; SIGNED_BYTES]>],
) -> Vec<(String, Option<Vec<u8>>)> {
    (first..)
        .zip(signed)
        .filter_map(|(order, signed)| signed.as_ref().map(|signed| signature_row(session, order, signed)))
        .collect()
}

/// Why `signed` is not a signature of `what`, if it is not.
pub(crate) fn mismatch(what: &Signed<'_>, signed: &[u8; SIGNED_BYTES]) -> Option<String> {
    (!what.check(signed))
        .then(|| format!("its signature does not match (signer {})", sign::short(&signed[..32])))
}

/// Who signed `session`'s own records here: each signer (as [`Trust::label`] names it) with
/// its count, most first, and how many are unsigned.
pub(crate) fn signers(
    store: &Store,
    snapshot: &Snapshot,
    session: &str,
) -> Result<(Vec<(String, u64)>, u64), FleetError> {
    let trust = Trust::for_labels(store)?;
    let own_records =
        snapshot.session(session)?.map_or(0, |info| info.len.saturating_sub(info.fork_at.unwrap_or(0)));
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut signed = 0;
    for (_, row) in signatures(store, session)? {
        *counts.entry(trust.label(&row[..32])).or_default() += 1;
        signed += 1;
    }
    let mut out: Vec<(String, u64)> = counts.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok((out, own_records.saturating_sub(signed)))
}

/// Checks every kept signature of `store` (or of `session`) against the record it signed:
/// the first bad one of each session is a problem. A record changed after it was signed, even
/// with its chain hashes recomputed to match, fails here.
///
/// # Errors
/// The store cannot be read.
pub fn check_signatures(store: &Store, session: Option<&str>) -> Result<Vec<Problem>, FleetError> {
    let snapshot = store.snapshot()?;
    let names: Vec<String> = match session {
        Some(name) => vec![name.to_owned()],
        None => snapshot.sessions()?.into_iter().map(|info| info.name).collect(),
    };
    let mut problems = Vec::new();
    for name in names {
        for (order, signed) in signatures(store, &name)? {
            // A record that does not read is the journal's check's problem to report; its
            // signature cannot be checked, and the check goes on with the next session.
            let held = snapshot.record(&name, order).and_then(|guard| match guard {
                Some(guard) => guard.view().map(|view| Some(view.hash())),
                None => Ok(None),
            });
            let hash = match held {
                Ok(Some(hash)) => hash,
                Ok(None) => {
                    let detail = "a signature is kept for a record the session does not hold";
                    problems.push(problem(&name, order, detail));
                    break;
                }
                Err(err) => {
                    let detail = format!("its signature cannot be checked: the record does not read ({err})");
                    problems.push(problem(&name, order, &detail));
                    break;
                }
            };
            let what = Signed { kind: "record", session: &name, order, hash: &hash, parent: None };
            if !what.check(&signed) {
                let signer = sign::short(&signed[..32]);
                let detail = format!("the record does not match the signature kept for it (signer {signer}): changed after it was signed");
                problems.push(problem(&name, order, &detail));
                break;
            }
        }
    }
    Ok(problems)
}

fn problem(session: &str, order: u64, detail: &str) -> Problem {
    Problem { session: Some(session.to_owned()), source_order: Some(order), detail: detail.to_owned() }
}
