//! The container around the graph message: a fixed header, the message, then the blobs.

use crate::ModelError;

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = *b"ANFORA\0M";
/// The container format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Where the graph message starts.
pub const HEADER_LEN: usize = 64;
/// Every blob starts at a multiple of this from the blob section, which itself starts at a
/// multiple of it: a mapped file gives cache-line (and AVX-512) aligned weights.
pub const ALIGN: usize = 64;

/// The parts of a file, each borrowed from it.
#[derive(Debug)]
pub struct Parts<'a> {
    pub message: &'a [u8],
    pub blobs: &'a [u8],
    /// Where the blob section starts in the file (for error offsets).
    pub blobs_offset: u64,
}

fn round_up(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// The file made of `message` and the blob section `blobs`.
pub fn assemble(message: &[u8], blobs: &[u8]) -> Vec<u8> {
    let blobs_offset = round_up(HEADER_LEN + message.len());
    let mut out = Vec::with_capacity(blobs_offset + blobs.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(message.len() as u64).to_le_bytes());
    out.extend_from_slice(&(blobs_offset as u64).to_le_bytes());
    out.extend_from_slice(&(blobs.len() as u64).to_le_bytes());
    out.resize(HEADER_LEN, 0);
    out.extend_from_slice(message);
    out.resize(blobs_offset, 0);
    out.extend_from_slice(blobs);
    out
}

fn field(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

fn malformed(offset: u64, message: impl Into<String>) -> ModelError {
    ModelError::Malformed {
        offset,
        message: message.into(),
    }
}

/// Splits a file into its parts, checking the header: magic, version, and every offset and
/// length inside the file.
pub fn split(bytes: &[u8]) -> Result<Parts<'_>, ModelError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(ModelError::NotAModel(format!(
            "it does not start with the magic bytes \"ANFORA\\0M\" ({} bytes long)",
            bytes.len()
        )));
    }
    if bytes.len() < HEADER_LEN {
        return Err(malformed(
            bytes.len() as u64,
            format!("the header needs {HEADER_LEN} bytes; the file ends first"),
        ));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(ModelError::Version {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let flags = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
    if flags != 0 {
        return Err(malformed(12, format!("unknown flags {flags:#x}")));
    }
    let len = bytes.len() as u64;
    let message_len = field(bytes, 16);
    let blobs_offset = field(bytes, 24);
    let blobs_len = field(bytes, 32);
    let message_end = (HEADER_LEN as u64)
        .checked_add(message_len)
        .filter(|&e| e <= len)
        .ok_or_else(|| {
            malformed(
                16,
                format!("the graph message's length {message_len} runs past the end of the file ({len} bytes)"),
            )
        })?;
    if blobs_offset < message_end || !blobs_offset.is_multiple_of(ALIGN as u64) {
        return Err(malformed(
            24,
            format!(
                "the blob section's offset {blobs_offset} is not a multiple of {ALIGN} after the graph message (which ends at {message_end})"
            ),
        ));
    }
    if blobs_offset.checked_add(blobs_len) != Some(len) {
        return Err(malformed(
            32,
            format!(
                "the blob section ({blobs_len} bytes at {blobs_offset}) does not end where the file does ({len} bytes)"
            ),
        ));
    }
    Ok(Parts {
        message: &bytes[HEADER_LEN..message_end as usize],
        blobs: &bytes[blobs_offset as usize..],
        blobs_offset,
    })
}

/// Collects blobs into one section, each at a multiple of [`ALIGN`].
#[derive(Default)]
pub struct BlobWriter {
    pub bytes: Vec<u8>,
}

impl BlobWriter {
    /// Appends `data`; returns its offset and length.
    pub fn push(&mut self, data: &[u8]) -> (u64, u64) {
        let at = round_up(self.bytes.len());
        self.bytes.resize(at, 0);
        self.bytes.extend_from_slice(data);
        (at as u64, data.len() as u64)
    }
}
