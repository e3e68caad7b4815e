//! A check of a file's PBF framing before anything is written: every block is a 4-byte
//! big-endian header length, a `BlobHeader` message, then `datasize` bytes of blob. Walking
//! the headers (seeking over the data) costs a few milliseconds even for a large extract,
//! and it turns the two common failures into plain answers before the database is touched:
//! a file that is not PBF at all, and a download cut short ("truncated at byte N").

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::IndexError;

/// The PBF specification's limits.
const MAX_HEADER_BYTES: u64 = 64 * 1024;
const MAX_BLOB_BYTES: u64 = 32 * 1024 * 1024;

/// Checks the framing of `path` (`size` bytes long); returns the number of blocks.
pub(crate) fn check(path: &Path, size: u64) -> Result<u64, IndexError> {
    let unreadable = |e: std::io::Error| IndexError::Unreadable {
        path: path.to_owned(),
        detail: e.to_string(),
    };
    let mut file = BufReader::new(File::open(path).map_err(unreadable)?);
    let mut at = 0_u64;
    let mut blocks = 0_u64;
    while at < size {
        let block_start = at;
        let truncated = |needed: u64| IndexError::Truncated {
            path: path.to_owned(),
            size,
            block_start,
            needed,
        };
        let broken = |detail: String| {
            if blocks == 0 {
                IndexError::NotPbf {
                    path: path.to_owned(),
                    detail,
                }
            } else {
                IndexError::Corrupt {
                    path: path.to_owned(),
                    at: block_start,
                    detail,
                }
            }
        };
        if size - at < 4 {
            return Err(if blocks == 0 {
                broken(format!("only {size} bytes"))
            } else {
                truncated(4)
            });
        }
        let mut length = [0_u8; 4];
        file.read_exact(&mut length).map_err(unreadable)?;
        let header_len = u64::from(u32::from_be_bytes(length));
        if header_len == 0 || header_len > MAX_HEADER_BYTES {
            return Err(broken(format!(
                "a block header of {header_len} bytes, at most {MAX_HEADER_BYTES} are allowed"
            )));
        }
        if size - at - 4 < header_len {
            return Err(truncated(4 + header_len));
        }
        let mut header = vec![0_u8; usize::try_from(header_len).unwrap_or(0)];
        file.read_exact(&mut header).map_err(unreadable)?;
        let (kind, datasize) = parse_blob_header(&header).ok_or_else(|| {
            broken("a block header that is not a PBF BlobHeader message".to_owned())
        })?;
        if blocks == 0 && kind != "OSMHeader" {
            return Err(broken(format!(
                "the first block is {kind:?}, a PBF file starts with \"OSMHeader\""
            )));
        }
        if datasize > MAX_BLOB_BYTES {
            return Err(broken(format!(
                "a block of {datasize} bytes, at most {MAX_BLOB_BYTES} are allowed"
            )));
        }
        let needed = 4 + header_len + datasize;
        if size - at < needed {
            return Err(truncated(needed));
        }
        file.seek(SeekFrom::Current(
            i64::try_from(datasize).unwrap_or(i64::MAX),
        ))
        .map_err(unreadable)?;
        at += needed;
        blocks += 1;
    }
    if blocks == 0 {
        return Err(IndexError::NotPbf {
            path: path.to_owned(),
            detail: "the file is empty".to_owned(),
        });
    }
    Ok(blocks)
}

/// `type` (field 1) and `datasize` (field 3) of a `BlobHeader`; `None` if it is not one.
fn parse_blob_header(bytes: &[u8]) -> Option<(String, u64)> {
    let mut at = 0;
    let (mut kind, mut datasize) = (None, None);
    while at < bytes.len() {
        let key = varint(bytes, &mut at)?;
        match (key >> 3, key & 7) {
            (field, 0) => {
                let value = varint(bytes, &mut at)?;
                if field == 3 {
                    datasize = Some(value);
                }
            }
            (field, 2) => {
                let len = usize::try_from(varint(bytes, &mut at)?).ok()?;
                let end = at.checked_add(len).filter(|e| *e <= bytes.len())?;
                if field == 1 {
                    kind = Some(String::from_utf8(bytes[at..end].to_vec()).ok()?);
                }
                at = end;
            }
            _ => return None,
        }
    }
    Some((kind?, datasize?))
}

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0_u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_type_and_size_of_a_blob_header() {
        // type = "OSMData" (field 1, length 7), datasize = 300 (field 3, varint ac 02).
        let mut bytes = vec![0x0a, 7];
        bytes.extend_from_slice(b"OSMData");
        bytes.extend_from_slice(&[0x18, 0xac, 0x02]);
        assert_eq!(parse_blob_header(&bytes), Some(("OSMData".to_owned(), 300)));
        assert_eq!(parse_blob_header(&bytes[..5]), None);
        assert_eq!(parse_blob_header(b"<?xml version"), None);
    }
}
