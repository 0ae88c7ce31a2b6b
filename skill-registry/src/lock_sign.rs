//! Signed locks, in the minisign format: a lock file's signature lives beside it as
//! `<lock>.minisig` ([`signature_path`]); it is Ed25519 over the BLAKE2b-512 of the lock's
//! bytes with a signed trusted comment (minisign's default "prehashed" signature), so a
//! lock signed by the `minisign` command-line tool verifies here and one signed here
//! verifies with `minisign -V`.
//!
//! Keys are minisign's files: a public key (`minisign.pub`: an untrusted comment line, then
//! the key in base64; the base64 line alone is read too) and a secret key in the
//! unencrypted form `minisign -G -W` writes. An encrypted secret key (minisign's default,
//! scrypt with a password) is refused with a message saying how to get a usable one: the
//! command line never prompts for a password. Verification accepts minisign's legacy
//! signatures (Ed25519 over the whole file, `minisign -S -l`) too.

use std::fs;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::lock::{Lock, MAX_LOCK_BYTES};

/// What [`signature_path`] adds to a lock file's name (minisign's own suffix).
pub const SIGNATURE_SUFFIX: &str = ".minisig";
/// The largest key file read (minisign's are about 100 to 200 bytes).
pub const MAX_KEY_BYTES: u64 = 4096;
/// The largest signature file read (minisign's are about 300 bytes, plus the trusted
/// comment, which it caps at 8 KiB).
pub const MAX_SIGNATURE_BYTES: u64 = 16 * 1024;

/// A verified public key, ready to check signatures.
#[derive(Clone)]
pub struct PublicKey(minisign::PublicKey);

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({})", self.0.to_base64())
    }
}

/// Where a lock file's signature is: the lock's path with [`SIGNATURE_SUFFIX`] added.
pub fn signature_path(lock: &Path) -> PathBuf {
    let mut name = lock.as_os_str().to_owned();
    name.push(SIGNATURE_SUFFIX);
    PathBuf::from(name)
}

/// Read a small text file (a key or a signature), at most `max` bytes.
fn read_small(path: &Path, max: u64, what: &str) -> Result<String, Error> {
    let fail = |reason: String| Error::Lock {
        path: path.to_path_buf(),
        reason,
    };
    let file = fs::File::open(path).map_err(|e| fail(format!("cannot read the {what} ({e})")))?;
    let mut text = String::new();
    file.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| fail(format!("cannot read the {what} as UTF-8 text ({e})")))?;
    if text.len() as u64 > max {
        return Err(fail(format!("the {what} is larger than {max} bytes")));
    }
    Ok(text)
}

impl PublicKey {
    /// Read a minisign public key file (`minisign.pub`), or a file holding the key's
    /// base64 line alone.
    pub fn read(path: &Path) -> Result<PublicKey, Error> {
        let text = read_small(path, MAX_KEY_BYTES, "public key")?;
        PublicKey::parse(&text).map_err(|reason| Error::Lock {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// Parse a public key: minisign's two-line file, or its base64 line alone.
    pub fn parse(text: &str) -> Result<PublicKey, String> {
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("untrusted comment:"))
            .ok_or_else(|| {
                "no public key in it (minisign.pub has it on its second line)".to_owned()
            })?;
        minisign::PublicKey::from_base64(line)
            .map(PublicKey)
            .map_err(|e| format!("not a minisign public key ({e})"))
    }

    /// Check `signature` (a `.minisig` file's text) over `data`.
    pub fn verify(&self, data: &[u8], signature: &str) -> Result<(), String> {
        let sig = minisign::SignatureBox::from_string(signature)
            .map_err(|e| format!("not a minisign signature ({e})"))?;
        minisign::verify(&self.0, &sig, Cursor::new(data), true, false, true)
            .map_err(|e| format!("the signature does not verify with this public key ({e})"))
    }
}

/// Sign `data` (a lock file's bytes) with the unencrypted minisign secret key at
/// `secret_key`; the answer is the `.minisig` file's text. The trusted comment names the
/// time and `file_name`, as minisign's does.
pub fn sign_lock(data: &[u8], secret_key: &Path, file_name: &str) -> Result<String, Error> {
    let fail = |reason: String| Error::Lock {
        path: secret_key.to_path_buf(),
        reason,
    };
    let text = read_small(secret_key, MAX_KEY_BYTES, "secret key")?;
    let sk = unencrypted_secret_key(&text).map_err(fail)?;
    // Its own public key checks each signature as it is made: a damaged key fails here.
    let pk = minisign::PublicKey::from_secret_key(&sk)
        .map_err(|e| fail(format!("not a usable minisign secret key ({e})")))?;
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let file_name: String = file_name.chars().filter(|c| !c.is_control()).collect();
    let trusted = format!("timestamp:{seconds}\tfile:{file_name}\thashed");
    let signature = minisign::sign(Some(&pk), &sk, Cursor::new(data), Some(&trusted), None)
        .map_err(|e| fail(format!("cannot sign with it ({e})")))?;
    Ok(signature.to_string())
}

/// The length of a minisign secret key once decoded: algorithm, KDF algorithm, checksum
/// algorithm, salt, two KDF limits, key number, Ed25519 secret key, checksum.
const SECRET_KEY_BYTES: usize = 2 + 2 + 2 + 32 + 8 + 8 + 8 + 64 + 32;

/// A minisign secret key file in the unencrypted form (`minisign -G -W`: no key derivation,
/// and a checksum the tool leaves zero, which the `minisign` crate's own reader refuses, so
/// the key is decoded here and checked by signing instead).
fn unencrypted_secret_key(text: &str) -> Result<minisign::SecretKey, String> {
    use base64::Engine as _;
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("untrusted comment:"))
        .ok_or_else(|| "no secret key in it (minisign.key has it on its second line)".to_owned())?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(line)
        .map_err(|e| format!("not a minisign secret key ({e})"))?;
    if bytes.len() != SECRET_KEY_BYTES || bytes.get(..2) != Some(&b"Ed"[..]) {
        return Err(
            "not a minisign secret key (an Ed25519 key file from `minisign -G -W`)".to_owned(),
        );
    }
    if bytes.get(2..4) != Some(&[0u8, 0][..]) {
        return Err("the secret key is encrypted: only unencrypted minisign secret keys are supported (this command never asks for a password); make a key pair with `minisign -G -W`".to_owned());
    }
    minisign::SecretKey::from_bytes(&bytes).map_err(|e| format!("not a minisign secret key ({e})"))
}

impl Lock {
    /// Read a lock file whose signature ([`signature_path`]) verifies with `key`, then
    /// parse it: a lock that is missing its signature, or was changed after it was signed,
    /// or was signed by another key, is an error.
    pub fn read_signed(path: &Path, key: &PublicKey) -> Result<Lock, Error> {
        let fail = |reason: String| Error::Lock {
            path: path.to_path_buf(),
            reason,
        };
        let data = read_small(path, MAX_LOCK_BYTES, "lock file")?;
        let sig_path = signature_path(path);
        let signature = read_small(&sig_path, MAX_SIGNATURE_BYTES, "signature").map_err(|e| {
            fail(format!(
                "a signed lock is required and its signature {} cannot be read ({e})",
                sig_path.display()
            ))
        })?;
        key.verify(data.as_bytes(), &signature)
            .map_err(|e| fail(format!("{}: {e}", sig_path.display())))?;
        Lock::parse(&data).map_err(fail)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// A fresh unencrypted key pair written as minisign writes it: (public, secret) paths.
    pub(crate) fn key_pair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        let minisign::KeyPair { pk, sk } =
            minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let (p, s) = (
            dir.join(format!("{name}.pub")),
            dir.join(format!("{name}.key")),
        );
        fs::write(&p, pk.to_box().unwrap().to_string()).unwrap();
        fs::write(&s, sk.to_box(None).unwrap().to_string()).unwrap();
        (p, s)
    }

    #[test]
    fn a_signed_lock_verifies_and_every_way_around_it_fails() {
        let dir = tempfile::tempdir().unwrap();
        let (public, secret) = key_pair(dir.path(), "k");
        let (other_public, other_secret) = key_pair(dir.path(), "other");
        let lock = dir.path().join("skills-lock.json");
        let text = Lock {
            version: crate::lock::LOCK_VERSION,
            skills: Vec::new(),
        }
        .to_json();
        fs::write(&lock, &text).unwrap();
        let sig = sign_lock(text.as_bytes(), &secret, "skills-lock.json").unwrap();
        assert!(sig.contains("trusted comment: timestamp:"), "{sig}");
        fs::write(signature_path(&lock), &sig).unwrap();
        let key = PublicKey::read(&public).unwrap();
        assert!(Lock::read_signed(&lock, &key).is_ok());
        // The base64 line alone is a public key too.
        let line = fs::read_to_string(&public).unwrap();
        let bare = PublicKey::parse(line.lines().nth(1).unwrap()).unwrap();
        assert!(Lock::read_signed(&lock, &bare).is_ok());

        // Another key's public key.
        let other = PublicKey::read(&other_public).unwrap();
        let e = Lock::read_signed(&lock, &other).unwrap_err().to_string();
        assert!(e.contains("does not verify"), "{e}");
        // The lock edited after signing (one byte).
        fs::write(&lock, text.replace("\"skills\"", "\"skillz\"")).unwrap();
        let e = Lock::read_signed(&lock, &key).unwrap_err().to_string();
        assert!(e.contains("does not verify"), "{e}");
        // A valid signature, but over a different lock.
        fs::write(&lock, &text).unwrap();
        let elsewhere = sign_lock(b"{\"version\":1,\"skills\":[]}", &secret, "x").unwrap();
        fs::write(signature_path(&lock), &elsewhere).unwrap();
        assert!(Lock::read_signed(&lock, &key).is_err());
        // Signed by the other key.
        fs::write(
            signature_path(&lock),
            sign_lock(text.as_bytes(), &other_secret, "x").unwrap(),
        )
        .unwrap();
        assert!(Lock::read_signed(&lock, &key).is_err());
        // The trusted comment edited (it is signed too).
        let edited = sig.replace("timestamp:", "timestamp:1");
        fs::write(signature_path(&lock), edited).unwrap();
        assert!(Lock::read_signed(&lock, &key).is_err());
        // No signature at all.
        fs::remove_file(signature_path(&lock)).unwrap();
        let e = Lock::read_signed(&lock, &key).unwrap_err().to_string();
        assert!(e.contains("signature") && e.contains(".minisig"), "{e}");
    }

    #[test]
    fn bad_keys_and_signatures_are_errors_never_panics() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            "",
            "untrusted comment: x\n",
            "RWQ",
            "not base64 !!!",
            "RW\u{0}\u{0}",
        ] {
            assert!(PublicKey::parse(text).is_err(), "{text:?}");
        }
        let (public, _) = key_pair(dir.path(), "k");
        let key = PublicKey::read(&public).unwrap();
        for sig in [
            "",
            "untrusted comment: x\n",
            "untrusted comment: x\nAAAA\ntrusted comment: t\nAAAA\n",
            "x\ny\nz\nw\n",
        ] {
            assert!(key.verify(b"data", sig).is_err(), "{sig:?}");
        }
        // A public key where a secret key belongs, and the size bound at its edge.
        let e = sign_lock(b"x", &public, "f").unwrap_err().to_string();
        assert!(e.contains("secret key"), "{e}");
        // An encrypted key (KDF algorithm `Sc`) and a damaged one are refused.
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        let (_, secret) = key_pair(dir.path(), "s");
        let text = fs::read_to_string(&secret).unwrap();
        let line = text.lines().nth(1).unwrap();
        let mut bytes = b64.decode(line).unwrap();
        let rewrite = |bytes: &[u8]| {
            let path = dir.path().join("edited.key");
            fs::write(
                &path,
                format!("untrusted comment: x\n{}\n", b64.encode(bytes)),
            )
            .unwrap();
            path
        };
        bytes[2..4].copy_from_slice(b"Sc");
        let e = sign_lock(b"x", &rewrite(&bytes), "f")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("encrypted") && e.contains("minisign -G -W"),
            "{e}"
        );
        bytes[2..4].copy_from_slice(&[0, 0]);
        assert!(sign_lock(b"x", &rewrite(&bytes), "f").is_ok());
        bytes[70] ^= 1; // inside the Ed25519 seed (bytes 62 to 93)
        assert!(sign_lock(b"x", &rewrite(&bytes), "f").is_err());
        let big = dir.path().join("big.key");
        fs::write(&big, "a".repeat(MAX_KEY_BYTES as usize + 1)).unwrap();
        let e = sign_lock(b"x", &big, "f").unwrap_err().to_string();
        assert!(e.contains(&format!("larger than {MAX_KEY_BYTES}")), "{e}");
        fs::write(&big, "a".repeat(MAX_KEY_BYTES as usize)).unwrap();
        let e = sign_lock(b"x", &big, "f").unwrap_err().to_string();
        assert!(!e.contains("larger than"), "{e}");
    }
}
