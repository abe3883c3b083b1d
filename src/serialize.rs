//! A versioned byte format for fitted models (used by pickling).

use crate::error::{Error, Result};
use serde::{de::DeserializeOwned, Serialize};

/// Bumped whenever a serialised struct changes shape.
pub const FORMAT_VERSION: u32 = 10;
const MAGIC: &[u8; 4] = b"MLRN";

/// Magic bytes, format version, the CRC-32 of the body, then the body: the postcard encoding
/// of `value`. The checksum makes a corrupted file fail on load: structural checks alone
/// cannot see a flipped bit in a threshold or a count that stays plausible.
pub fn to_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    let body = postcard::to_stdvec(value).map_err(|e| Error::Corrupt(e.to_string()))?;
    out.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Inverse of [`to_bytes`]; rejects other formats and versions and bytes whose checksum
/// does not match.
pub fn from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    if bytes.len() < 12 || &bytes[..4] != MAGIC {
        return Err(Error::Corrupt("not a mondrian-learn model".into()));
    }
    let mut version = [0u8; 4];
    version.copy_from_slice(&bytes[4..8]);
    let version = u32::from_le_bytes(version);
    if version != FORMAT_VERSION {
        return Err(Error::Corrupt(format!(
            "format version {version}, this build reads {FORMAT_VERSION}"
        )));
    }
    let mut stored = [0u8; 4];
    stored.copy_from_slice(&bytes[8..12]);
    let body = &bytes[12..];
    if crc32fast::hash(body) != u32::from_le_bytes(stored) {
        return Err(Error::Corrupt(
            "checksum mismatch: the stored model is corrupted".into(),
        ));
    }
    postcard::from_bytes(body).map_err(|e| Error::Corrupt(e.to_string()))
}
