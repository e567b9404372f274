//! Authorship: the host key a store signs what it publishes with, what exactly a signature
//! covers, and the signature headers of a message.
//!
//! A host key is an ed25519 key made on first use and kept beside the store as
//! `<store file>-fleet-key` (64 hex digits of its secret seed, owner read and write only, as the
//! store file). Its public half names the signer; the secret is never printed.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use annal_engine::{Hash, Store};
use async_nats::HeaderMap;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};

use crate::error::FleetError;

/// The header naming the signer: its public key, 64 hex digits.
pub(crate) const H_SIGNER: &str = "Annal-Signer";
/// The header holding the signature, 128 hex digits.
pub(crate) const H_SIGNATURE: &str = "Annal-Signature";

/// A signer's public key and its signature, as a store keeps them (96 bytes).
pub(crate) const SIGNED_BYTES: usize = 32 + 64;

/// A store's host key. Its `Debug` shows only the public key.
pub(crate) struct HostKey {
    key: SigningKey,
}

impl std::fmt::Debug for HostKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostKey({})", self.public_hex())
    }
}

/// Where the host key of the store at `store` is kept.
pub(crate) fn key_path(store: &Path) -> PathBuf {
    let mut name = store.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "store".into());
    name.push("-fleet-key");
    store.with_file_name(name)
}

impl HostKey {
    /// The key of `store`, made and written beside it if it has none. A store without a file
    /// gets a key of its own for this call only.
    pub(crate) fn of(store: &Store) -> Result<HostKey, FleetError> {
        match store.path() {
            Some(path) => HostKey::at(&key_path(path)),
            None => Ok(HostKey { key: SigningKey::from_bytes(&fresh_seed()?) }),
        }
    }

    /// The key kept at `path`, made if there is none. Two processes or threads making it at
    /// once keep one: each writes a file of its own (a random name) and links it into place,
    /// and the one that finds the name taken reads the other's.
    pub(crate) fn at(path: &Path) -> Result<HostKey, FleetError> {
        if let Some(key) = read_key(path)? {
            return Ok(key);
        }
        let seed = fresh_seed()?;
        let mut staged = path.as_os_str().to_owned();
        staged.push(format!(".{}.new", &hex(&fresh_seed()?)[..16]));
        let staged = PathBuf::from(staged);
        write_private(&staged, &seed).map_err(|err| key_error(&staged, err.to_string()))?;
        let linked = std::fs::hard_link(&staged, path);
        let _ = std::fs::remove_file(&staged);
        match linked {
            Ok(()) => Ok(HostKey { key: SigningKey::from_bytes(&seed) }),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                read_key(path)?.ok_or_else(|| key_error(path, "made by another process and then gone".into()))
            }
            Err(err) => Err(key_error(path, err.to_string())),
        }
    }

    /// The public key, 64 lowercase hex digits.
    pub(crate) fn public_hex(&self) -> String {
        hex(self.key.verifying_key().as_bytes())
    }

    /// The public key's bytes.
    pub(crate) fn public(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// Signs `what`: this key's public half and the signature, as a message's headers carry
    /// them and a store keeps them.
    pub(crate) fn sign(&self, what: &Signed<'_>) -> [u8; SIGNED_BYTES] {
        let signature = self.key.sign(&what.message());
        let mut out = [0; SIGNED_BYTES];
        out[..32].copy_from_slice(&self.public());
        out[32..].copy_from_slice(&signature.to_bytes());
        out
    }
}

/// What a signature covers: the kind of message, the session, the position and the chain hash
/// there (which chains every record before it, and the record's content); for a fork, also the
/// parent it reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signed<'a> {
    pub(crate) kind: &'a str,
    pub(crate) session: &'a str,
    pub(crate) order: u64,
    pub(crate) hash: &'a Hash,
    pub(crate) parent: Option<&'a str>,
}

impl Signed<'_> {
    /// The bytes signed (docs/replication.md, "Signatures").
    pub(crate) fn message(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.session.len());
        out.extend_from_slice(b"annal.sig.v1\0");
        out.extend_from_slice(self.kind.as_bytes());
        out.push(0);
        out.extend_from_slice(&(self.session.len() as u64).to_le_bytes());
        out.extend_from_slice(self.session.as_bytes());
        out.extend_from_slice(&self.order.to_le_bytes());
        out.extend_from_slice(self.hash);
        if let Some(parent) = self.parent {
            out.extend_from_slice(&(parent.len() as u64).to_le_bytes());
            out.extend_from_slice(parent.as_bytes());
        }
        out
    }

    /// Whether `signed` (a public key and a signature) is a valid signature of this.
    pub(crate) fn check(&self, signed: &[u8; SIGNED_BYTES]) -> bool {
        let (public, signature) = signed.split_at(32);
        let Ok(public) = <[u8; 32]>::try_from(public) else { return false };
        let Ok(signature) = <[u8; 64]>::try_from(signature) else { return false };
        let Ok(key) = VerifyingKey::from_bytes(&public) else { return false };
        key.verify_strict(&self.message(), &Signature::from_bytes(&signature)).is_ok()
    }
}

/// Adds the signature headers of `signed` to `headers`.
pub(crate) fn add_headers(headers: &mut HeaderMap, signed: &[u8; SIGNED_BYTES]) {
    headers.insert(H_SIGNER, hex(&signed[..32]).as_str());
    headers.insert(H_SIGNATURE, hex(&signed[32..]).as_str());
}

/// The signer and signature a message carries: none when it has neither header; an error
/// when it has one without the other, or either is not hex of its length.
pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Option<[u8; SIGNED_BYTES]>, String> {
    let signer = headers.get(H_SIGNER).map(|value| value.as_str().to_owned());
    let signature = headers.get(H_SIGNATURE).map(|value| value.as_str().to_owned());
    match (signer, signature) {
        (None, None) => Ok(None),
        (Some(signer), Some(signature)) => {
            let mut out = [0; SIGNED_BYTES];
            let public = unhex(&signer, 32).ok_or("its Annal-Signer header is not 64 hex digits")?;
            let signature =
                unhex(&signature, 64).ok_or("its Annal-Signature header is not 128 hex digits")?;
            out[..32].copy_from_slice(&public);
            out[32..].copy_from_slice(&signature);
            Ok(Some(out))
        }
        _ => Err("it has one of the Annal-Signer and Annal-Signature headers without the other".into()),
    }
}

/// A public key given as text: 64 hex digits (either case).
pub(crate) fn parse_public(text: &str) -> Option<[u8; 32]> {
    let bytes = unhex(text.trim(), 32)?;
    let public: [u8; 32] = bytes.try_into().ok()?;
    VerifyingKey::from_bytes(&public).ok().map(|_| public)
}

/// The first 16 hex digits of a public key, as status lines show an untrusted signer.
pub(crate) fn short(public: &[u8]) -> String {
    format!("{}…", &hex(public)[..16.min(public.len() * 2)])
}

/// Lowercase hex digits of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

fn unhex(text: &str, len: usize) -> Option<Vec<u8>> {
    if text.len() != len * 2 || !text.is_ascii() {
        return None;
    }
    (0..len).map(|i| u8::from_str_radix(&text[i * 2..i * 2 + 2], 16).ok()).collect()
}

fn fresh_seed() -> Result<[u8; 32], FleetError> {
    let mut seed = [0; 32];
    getrandom::fill(&mut seed)
        .map_err(|err| FleetError::BadOptions(format!("cannot draw a host key's randomness: {err}")))?;
    Ok(seed)
}

fn key_error(path: &Path, reason: String) -> FleetError {
    FleetError::HostKey { path: path.to_path_buf(), reason }
}

/// The key at `path`, if there is a file there.
fn read_key(path: &Path) -> Result<Option<HostKey>, FleetError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(key_error(path, err.to_string())),
    };
    let seed = unhex(text.trim(), 32)
        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
        .ok_or_else(|| key_error(path, "not a host key (64 hex digits)".into()))?;
    Ok(Some(HostKey { key: SigningKey::from_bytes(&seed) }))
}

/// Writes the seed to a new file only its owner may read, synced.
fn write_private(path: &Path, seed: &[u8; 32]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(format!("{}\n", hex(seed)).as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_covers_session_position_and_hash() {
        let key = HostKey { key: SigningKey::from_bytes(&[7; 32]) };
        let hash = [3; 32];
        let what =
            Signed { kind: "record", session: "日本 🚀 e\u{301}", order: 4, hash: &hash, parent: None };
        let signed = key.sign(&what);
        assert!(what.check(&signed));
        let other_hash = [4; 32];
        for changed in [
            Signed { order: 5, ..what },
            Signed { session: "日本 🚀 e", ..what },
            Signed { hash: &other_hash, ..what },
            Signed { kind: "fork", ..what },
            Signed { parent: Some("p"), ..what },
        ] {
            assert!(!changed.check(&signed), "{changed:?}");
        }
        let mut tampered = signed;
        tampered[40] ^= 1;
        assert!(!what.check(&tampered));
    }

    #[test]
    fn headers_round_trip_and_half_a_signature_is_refused() {
        let key = HostKey { key: SigningKey::from_bytes(&[9; 32]) };
        let signed =
            key.sign(&Signed { kind: "record", session: "s", order: 0, hash: &[0; 32], parent: None });
        let mut headers = HeaderMap::new();
        assert_eq!(from_headers(&headers), Ok(None));
        add_headers(&mut headers, &signed);
        assert_eq!(from_headers(&headers), Ok(Some(signed)));
        let mut half = HeaderMap::new();
        half.insert(H_SIGNER, key.public_hex().as_str());
        assert!(from_headers(&half).is_err());
        assert_eq!(parse_public(&key.public_hex().to_uppercase()), Some(key.public()));
        assert_eq!(parse_public("xyz"), None);
    }

    #[test]
    fn a_key_is_made_once_and_kept_private() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = key_path(&dir.path().join("s.redb"));
        let made = HostKey::at(&path)?;
        let again = HostKey::at(&path)?;
        assert_eq!(made.public(), again.public());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(std::fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
        }
        assert!(!format!("{made:?}").contains(&std::fs::read_to_string(&path)?.trim().to_owned()));
        let racing = dir.path().join("r.redb-fleet-key");
        let keys: Vec<[u8; 32]> = std::thread::scope(|scope| {
            let made: Vec<_> =
                (0..4).map(|_| scope.spawn(|| HostKey::at(&racing).map(|key| key.public()))).collect();
            made.into_iter().map(|handle| handle.join().expect("thread").expect("key")).collect()
        });
        assert!(keys.windows(2).all(|pair| pair[0] == pair[1]), "threads racing to make it keep one");
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 2, "no staged file left behind");
        std::fs::write(&path, "not a key")?;
        assert!(HostKey::at(&path).is_err(), "a damaged key file is an error, never replaced");
        Ok(())
    }
}
