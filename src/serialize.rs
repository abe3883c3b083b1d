//! A versioned byte format for fitted models (used by pickling).

use crate::error::{Error, Result};
use serde::{de::DeserializeOwned, Serialize};

/// Bumped whenever a serialised struct changes shape.
pub const FORMAT_VERSION: u32 = 4;
const MAGIC: &[u8; 4] = b"MLRN";

/// Magic bytes, format version, then the postcard encoding of `value`.
pub fn to_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    let body = postcard::to_stdvec(value).map_err(|e| Error::Corrupt(e.to_string()))?;
    out.extend_from_slice(&body);
    Ok(out)
}

/// Inverse of [`to_bytes`]; rejects other formats and versions.
pub fn from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
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
    postcard::from_bytes(&bytes[8..]).map_err(|e| Error::Corrupt(e.to_string()))
}
