//! A PBF file's blocks, checked against the format's limits before and while they are read.
//!
//! A file is a sequence of blocks: a 4-byte big-endian header length, a `BlobHeader`
//! message (type and `datasize`), then `datasize` bytes of `Blob`: the block's data, raw or
//! compressed, with its uncompressed size `raw_size`. osmpbf trusts all of it: it inflates
//! up to 32 MiB whatever `raw_size` says (or with none) and parses what comes out, so a
//! 33 KB file of compressed empty groups took an import to 1.9 GiB, and blocks that lie
//! about their size imported as an empty region. Two steps keep that out:
//!
//! - [`check`], before the database is touched, walks the headers and each `Blob`'s fields,
//!   seeking over the data (milliseconds even for a large extract): not PBF at all, cut
//!   short ("truncated at byte N"), a header or block over the format's limits, a missing
//!   or impossible `raw_size`, a compression Etappe does not read.
//! - [`BlockReader`] is what every pass of the import reads through: it inflates each block
//!   itself, capped at its declared `raw_size` plus one byte, refuses data that comes out
//!   longer or shorter, refuses a block whose parse would allocate too much
//!   ([`crate::decoded`]), and hands osmpbf the checked bytes uncompressed. So the bytes
//!   checked are the bytes parsed, and nothing is inflated twice.

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::read::ZlibDecoder;
use osmpbf::{Blob, BlobReader};

use crate::decoded::{self, varint};
use crate::error::IndexError;

/// The PBF specification: a `BlobHeader` "must be less than 64 KiB", a block's
/// uncompressed data "must be less than 32 MiB" (osmpbf refuses raw data of 32 MiB too).
const MAX_HEADER_BYTES: u64 = 64 * 1024;
const MAX_BLOB_BYTES: u64 = 32 * 1024 * 1024;
/// What parsing one block may allocate, as [`decoded::estimate`] prices it. Real blocks
/// (~8,000 entities each) price at a few MiB; 64 MiB keeps an import's peak near 100 MiB
/// whatever a file holds.
const MAX_DECODED_BYTES: u64 = 64 * 1024 * 1024;

/// The block types Etappe decodes; the specification asks readers to skip the others.
const OSM_HEADER: &str = "OSMHeader";
const OSM_DATA: &str = "OSMData";

/// Checks the framing of `path` (`size` bytes long) and the declared fields of each
/// block's `Blob`; returns the number of blocks.
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
        let bad = |detail: String| bad_block(path, block_start, detail);
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
        if header_len == 0 || header_len >= MAX_HEADER_BYTES {
            // Past the first block the file is PBF; before it, a huge "length" is most
            // likely the first bytes of something else (text, HTML).
            let detail = header_too_big(header_len);
            return Err(if blocks == 0 {
                broken(format!("a block {detail}"))
            } else {
                bad(detail)
            });
        }
        if size - at - 4 < header_len {
            return Err(truncated(4 + header_len));
        }
        let mut header = vec![0_u8; usize::try_from(header_len).unwrap_or(0)];
        file.read_exact(&mut header).map_err(unreadable)?;
        let (kind, datasize) = parse_blob_header(&header).ok_or_else(|| {
            broken("a block header that is not a PBF BlobHeader message".to_owned())
        })?;
        if blocks == 0 && kind != OSM_HEADER {
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
        if kind == OSM_HEADER || kind == OSM_DATA {
            // Reads the few bytes of field keys and sizes, seeks over the data.
            let fields = match read_blob_fields(&mut file, datasize) {
                Ok(fields) => fields,
                Err(FieldsError::Io(e)) => return Err(unreadable(e)),
                Err(FieldsError::Malformed(detail)) => return Err(broken(detail)),
            };
            plan(&fields).map_err(bad)?;
        } else {
            file.seek_relative(i64::try_from(datasize).unwrap_or(i64::MAX))
                .map_err(unreadable)?;
        }
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

fn bad_block(path: &Path, at: u64, detail: String) -> IndexError {
    IndexError::BadBlock {
        path: path.to_owned(),
        at,
        detail,
    }
}

fn header_too_big(header_len: u64) -> String {
    format!(
        "has a header of {} bytes; the PBF format allows 1 to {}",
        grouped(header_len),
        grouped(MAX_HEADER_BYTES - 1)
    )
}

/// The blocks of a file, each checked and ready for osmpbf to decode.
#[derive(Debug)]
pub(crate) struct BlockReader<R> {
    reader: R,
    path: PathBuf,
    /// Bytes of the file consumed: the start of the next block.
    at: u64,
}

/// One block: where it starts, and its data uncompressed in an osmpbf [`Blob`].
#[derive(Debug)]
pub(crate) struct Block {
    pub(crate) at: u64,
    pub(crate) blob: Blob,
}

impl<R: Read> BlockReader<R> {
    pub(crate) fn new(reader: R, path: &Path) -> Self {
        Self {
            reader,
            path: path.to_owned(),
            at: 0,
        }
    }

    /// Bytes of the file read so far.
    pub(crate) fn offset(&self) -> u64 {
        self.at
    }

    /// The next `OSMHeader` or `OSMData` block (others are skipped, as the specification
    /// asks); `None` at the end of the file.
    pub(crate) fn next(&mut self) -> Result<Option<Block>, IndexError> {
        loop {
            let at = self.at;
            let mut length = [0_u8; 4];
            let got = read_full(&mut self.reader, &mut length).map_err(|e| self.unreadable(&e))?;
            if got == 0 {
                return Ok(None);
            }
            if got < 4 {
                return Err(self.corrupt(at, "the file ends inside a block's length"));
            }
            let header_len = u64::from(u32::from_be_bytes(length));
            if header_len == 0 || header_len >= MAX_HEADER_BYTES {
                return Err(bad_block(&self.path, at, header_too_big(header_len)));
            }
            let header = self.read_exactly(at, header_len)?;
            let (kind, datasize) = parse_blob_header(&header)
                .ok_or_else(|| self.corrupt(at, "a block header that is not a BlobHeader"))?;
            if datasize > MAX_BLOB_BYTES {
                return Err(self.corrupt(
                    at,
                    &format!("a block of {datasize} bytes, at most {MAX_BLOB_BYTES} are allowed"),
                ));
            }
            if kind != OSM_HEADER && kind != OSM_DATA {
                let skipped =
                    std::io::copy(&mut (&mut self.reader).take(datasize), &mut std::io::sink())
                        .map_err(|e| self.unreadable(&e))?;
                if skipped < datasize {
                    return Err(self.corrupt(at, "the file ends inside a block"));
                }
                self.at += 4 + header_len + datasize;
                continue;
            }
            let stored = self.read_exactly(at, datasize)?;
            self.at += 4 + header_len + datasize;
            let blob = self.checked(at, &kind, &stored)?;
            return Ok(Some(Block { at, blob }));
        }
    }

    /// The data of the `Blob` message `stored` (of the block at `at`), checked, in an
    /// osmpbf `Blob` holding it uncompressed.
    fn checked(&self, at: u64, kind: &str, stored: &[u8]) -> Result<Blob, IndexError> {
        let fields = match read_blob_fields(&mut Cursor::new(stored), stored.len() as u64) {
            Ok(fields) => fields,
            Err(FieldsError::Io(e)) => return Err(self.unreadable(&e)),
            Err(FieldsError::Malformed(detail)) => return Err(self.corrupt(at, &detail)),
        };
        let plan = plan(&fields).map_err(|detail| bad_block(&self.path, at, detail))?;
        let (start, len, raw_size) = match plan {
            Plan::Raw { start, len } => (start, len, len),
            Plan::Zlib {
                start,
                len,
                raw_size,
            } => (start, len, raw_size),
        };
        let data = usize::try_from(start)
            .ok()
            .zip(usize::try_from(start + len).ok())
            .and_then(|(from, to)| stored.get(from..to))
            .ok_or_else(|| self.corrupt(at, "a data field past the end of its block"))?;
        // The frame osmpbf reads: a header, then a Blob with the data as `raw` (field 1).
        let mut frame = frame_prefix(kind, raw_size);
        let prefix = frame.len();
        match plan {
            Plan::Raw { .. } => frame.extend_from_slice(data),
            Plan::Zlib { raw_size, .. } => {
                // The capacity is the declared size, already checked to be under 32 MiB;
                // one byte past it is enough to know the data lies.
                frame.reserve_exact(usize::try_from(raw_size).unwrap_or(0));
                ZlibDecoder::new(data)
                    .take(raw_size + 1)
                    .read_to_end(&mut frame)
                    .map_err(|e| self.corrupt(at, &format!("its zlib data is damaged: {e}")))?;
                let inflated = (frame.len() - prefix) as u64;
                if inflated > raw_size {
                    return Err(bad_block(
                        &self.path,
                        at,
                        format!(
                            "decompresses past its declared raw_size of {} bytes",
                            grouped(raw_size)
                        ),
                    ));
                }
                if inflated < raw_size {
                    return Err(bad_block(
                        &self.path,
                        at,
                        format!(
                            "decompresses to {} bytes, not the {} its raw_size declares",
                            grouped(inflated),
                            grouped(raw_size)
                        ),
                    ));
                }
            }
        }
        let schema = if kind == OSM_HEADER {
            decoded::HEADER_BLOCK
        } else {
            decoded::PRIMITIVE_BLOCK
        };
        // Real blocks are too small to need the walk; only those over ~400 KB pay for it.
        let estimate = if decoded::may_exceed(raw_size, MAX_DECODED_BYTES) {
            decoded::estimate(&frame[prefix..], schema, MAX_DECODED_BYTES).map_err(|detail| {
                self.corrupt(
                    at,
                    &format!("its data is not a valid {kind} block ({detail})"),
                )
            })?
        } else {
            0
        };
        if estimate > MAX_DECODED_BYTES {
            return Err(bad_block(
                &self.path,
                at,
                format!(
                    "would need more than {} MiB of memory to decode its {} bytes (real blocks need a few MiB)",
                    MAX_DECODED_BYTES >> 20,
                    grouped(raw_size),
                ),
            ));
        }
        match BlobReader::new(Cursor::new(frame)).next() {
            Some(Ok(blob)) => Ok(blob),
            Some(Err(e)) => Err(self.corrupt(at, &e.to_string())),
            None => Err(self.corrupt(at, "an empty block")),
        }
    }

    fn read_exactly(&mut self, at: u64, len: u64) -> Result<Vec<u8>, IndexError> {
        // `len` is under 32 MiB (checked by the callers), so the buffer is bounded.
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        (&mut self.reader)
            .take(len)
            .read_to_end(&mut bytes)
            .map_err(|e| self.unreadable(&e))?;
        if (bytes.len() as u64) < len {
            return Err(self.corrupt(at, "the file ends inside a block"));
        }
        Ok(bytes)
    }

    fn unreadable(&self, e: &std::io::Error) -> IndexError {
        IndexError::Unreadable {
            path: self.path.clone(),
            detail: e.to_string(),
        }
    }

    fn corrupt(&self, at: u64, detail: &str) -> IndexError {
        IndexError::Corrupt {
            path: self.path.clone(),
            at,
            detail: detail.to_owned(),
        }
    }
}

/// Reads until `buf` is full or the input ends; the number of bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// The length, `BlobHeader` and start of a `Blob` whose `raw` field (1) holds `raw_size`
/// bytes, which follow.
fn frame_prefix(kind: &str, raw_size: u64) -> Vec<u8> {
    let mut blob_start = vec![0x0a];
    put_varint(&mut blob_start, raw_size);
    let datasize = blob_start.len() as u64 + raw_size;
    let mut header = vec![0x0a];
    put_varint(&mut header, kind.len() as u64);
    header.extend_from_slice(kind.as_bytes());
    header.push(0x18);
    put_varint(&mut header, datasize);
    let mut frame = Vec::with_capacity(4 + header.len() + blob_start.len());
    frame.extend_from_slice(&u32::try_from(header.len()).unwrap_or(0).to_be_bytes());
    frame.extend_from_slice(&header);
    frame.extend_from_slice(&blob_start);
    frame
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The data fields of a `Blob` (`oneof data` in `fileformat.proto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    Raw,
    Zlib,
    Lzma,
    Bzip2,
    Lz4,
    Zstd,
}

impl Compression {
    fn of_field(number: u64) -> Option<Self> {
        Some(match number {
            1 => Self::Raw,
            3 => Self::Zlib,
            4 => Self::Lzma,
            5 => Self::Bzip2,
            6 => Self::Lz4,
            7 => Self::Zstd,
            _ => return None,
        })
    }

    fn field_name(self) -> &'static str {
        match self {
            Self::Raw => "raw",
            Self::Zlib => "zlib_data",
            Self::Lzma => "lzma_data",
            Self::Bzip2 => "OBSOLETE_bzip2_data",
            Self::Lz4 => "lz4_data",
            Self::Zstd => "zstd_data",
        }
    }
}

/// A `Blob`'s fields, without its data: the data field (its compression, where it starts
/// in the message, its length) and `raw_size` (field 2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct BlobFields {
    data: Option<(Compression, u64, u64)>,
    raw_size: Option<i64>,
}

#[derive(Debug)]
enum FieldsError {
    Io(std::io::Error),
    /// What is wrong, as the end of "corrupt at byte N: …".
    Malformed(String),
}

/// Reads the fields of the `len`-byte `Blob` message at the start of `reader`, seeking
/// over the data; leaves `reader` at the end of the message.
fn read_blob_fields<R: Read + Seek>(reader: &mut R, len: u64) -> Result<BlobFields, FieldsError> {
    let malformed = || FieldsError::Malformed("a block that is not a PBF Blob message".to_owned());
    let mut fields = BlobFields::default();
    let mut at = 0_u64;
    // A varint of the message, refused if it runs past the message's end.
    let next = |reader: &mut R, at: &mut u64| match read_varint(reader, at)? {
        Some(value) if *at <= len => Ok(value),
        _ => Err(malformed()),
    };
    while at < len {
        let key = next(reader, &mut at)?;
        let (number, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                let value = next(reader, &mut at)?;
                if number == 2 {
                    // `int32`, so a negative size arrives sign-extended to 64 bits.
                    fields.raw_size = Some(value as i64);
                }
            }
            2 => {
                let field_len = next(reader, &mut at)?;
                if field_len > len - at {
                    return Err(malformed());
                }
                if let Some(compression) = Compression::of_field(number) {
                    if let Some((first, _, _)) = fields.data {
                        return Err(FieldsError::Malformed(format!(
                            "a block holding both {} and {}; a Blob holds one",
                            first.field_name(),
                            compression.field_name()
                        )));
                    }
                    fields.data = Some((compression, at, field_len));
                }
                // `field_len` is at most the block's size, under 32 MiB.
                reader
                    .seek(SeekFrom::Current(i64::try_from(field_len).unwrap_or(0)))
                    .map_err(FieldsError::Io)?;
                at += field_len;
            }
            _ => return Err(malformed()),
        }
    }
    Ok(fields)
}

/// A varint read from `reader`, counting its bytes into `at`; `Ok(None)` if malformed or
/// cut short.
fn read_varint(reader: &mut impl Read, at: &mut u64) -> Result<Option<u64>, FieldsError> {
    let mut value = 0_u64;
    for shift in (0..64).step_by(7) {
        let mut byte = [0_u8];
        if read_full(reader, &mut byte).map_err(FieldsError::Io)? == 0 {
            return Ok(None);
        }
        *at += 1;
        value |= u64::from(byte[0] & 0x7f) << shift;
        if byte[0] & 0x80 == 0 {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// How a block's data is read, once its declared fields pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Raw { start: u64, len: u64 },
    Zlib { start: u64, len: u64, raw_size: u64 },
}

/// Judges a `Blob`'s declared fields; `Err` continues "the block at byte N …".
fn plan(fields: &BlobFields) -> Result<Plan, String> {
    let limit = || {
        format!(
            "the PBF format allows less than {} (32 MiB)",
            grouped(MAX_BLOB_BYTES)
        )
    };
    let Some((compression, start, len)) = fields.data else {
        return Err("holds no data".to_owned());
    };
    match compression {
        Compression::Raw if len >= MAX_BLOB_BYTES => Err(format!(
            "holds {} bytes uncompressed; {}",
            grouped(len),
            limit()
        )),
        Compression::Raw => Ok(Plan::Raw { start, len }),
        Compression::Zlib => match fields.raw_size {
            None => Err("declares no raw_size for its zlib data".to_owned()),
            Some(size) if size < 0 => Err(format!("declares a negative raw_size ({size})")),
            Some(size) if size.unsigned_abs() >= MAX_BLOB_BYTES => Err(format!(
                "claims {} bytes uncompressed; {}",
                grouped(size.unsigned_abs()),
                limit()
            )),
            Some(size) => Ok(Plan::Zlib {
                start,
                len,
                raw_size: size.unsigned_abs(),
            }),
        },
        other => Err(format!(
            "is compressed with {} ({}), which Etappe does not read; only zlib and uncompressed blocks are (re-encode it: `osmium cat in.osm.pbf -o out.osm.pbf`)",
            match other {
                Compression::Lzma => "lzma",
                Compression::Bzip2 => "bzip2",
                Compression::Lz4 => "lz4",
                _ => "zstd",
            },
            other.field_name()
        )),
    }
}

/// `n` with thousands separators: 1,073,741,824.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
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

    fn fields_of(bytes: &[u8]) -> Result<BlobFields, String> {
        read_blob_fields(&mut Cursor::new(bytes), bytes.len() as u64).map_err(|e| match e {
            FieldsError::Io(e) => e.to_string(),
            FieldsError::Malformed(d) => d,
        })
    }

    #[test]
    fn reads_the_fields_of_a_blob_without_its_data() {
        // raw_size = 1000 (field 2), zlib_data (field 3) of 3 bytes.
        let blob = [0x10, 0xe8, 0x07, 0x1a, 3, 1, 2, 3];
        let fields = fields_of(&blob).expect("a Blob");
        assert_eq!(fields.raw_size, Some(1000));
        assert_eq!(fields.data, Some((Compression::Zlib, 5, 3)));
        assert_eq!(
            plan(&fields),
            Ok(Plan::Zlib {
                start: 5,
                len: 3,
                raw_size: 1000
            })
        );
        // A data field longer than the message, and two data fields.
        assert!(fields_of(&[0x1a, 9, 1]).is_err());
        let both = fields_of(&[0x0a, 1, 0, 0x1a, 1, 0]).expect_err("two data fields");
        assert!(both.contains("both raw and zlib_data"), "{both}");
    }

    #[test]
    fn judges_declared_sizes_and_compressions() {
        let zlib = |raw_size| BlobFields {
            data: Some((Compression::Zlib, 0, 10)),
            raw_size,
        };
        assert_eq!(
            plan(&zlib(None)),
            Err("declares no raw_size for its zlib data".to_owned())
        );
        assert_eq!(
            plan(&zlib(Some(1 << 30))),
            Err(
                "claims 1,073,741,824 bytes uncompressed; the PBF format allows less than 33,554,432 (32 MiB)"
                    .to_owned()
            )
        );
        assert!(plan(&zlib(Some(33_554_432))).is_err());
        assert!(plan(&zlib(Some(33_554_431))).is_ok());
        assert_eq!(
            plan(&zlib(Some(-5))),
            Err("declares a negative raw_size (-5)".to_owned())
        );
        for (compression, name) in [
            (Compression::Lzma, "lzma"),
            (Compression::Bzip2, "bzip2"),
            (Compression::Lz4, "lz4"),
            (Compression::Zstd, "zstd"),
        ] {
            let fields = BlobFields {
                data: Some((compression, 0, 10)),
                raw_size: Some(100),
            };
            let refused = plan(&fields).expect_err("not zlib");
            assert!(
                refused.starts_with(&format!("is compressed with {name} (")),
                "{refused}"
            );
        }
        let raw = |len| BlobFields {
            data: Some((Compression::Raw, 0, len)),
            raw_size: None,
        };
        assert_eq!(plan(&raw(10)), Ok(Plan::Raw { start: 0, len: 10 }));
        assert!(plan(&raw(MAX_BLOB_BYTES)).is_err());
        assert_eq!(
            plan(&BlobFields::default()),
            Err("holds no data".to_owned())
        );
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(33_554_432), "33,554,432");
    }

    /// A one-block stream: an `OSMData` header and `blob`.
    fn one_block(blob: &[u8]) -> Vec<u8> {
        let mut header = vec![0x0a, 7];
        header.extend_from_slice(b"OSMData");
        header.push(0x18);
        put_varint(&mut header, blob.len() as u64);
        let mut out = (header.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(&header);
        out.extend_from_slice(blob);
        out
    }

    fn zlib_blob(data: &[u8], raw_size: u64) -> Vec<u8> {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(data).expect("compress");
        let zlib = encoder.finish().expect("compress");
        let mut blob = vec![0x10];
        put_varint(&mut blob, raw_size);
        blob.push(0x1a);
        put_varint(&mut blob, zlib.len() as u64);
        blob.extend_from_slice(&zlib);
        blob
    }

    fn read_one(stream: Vec<u8>) -> Result<Option<Block>, IndexError> {
        BlockReader::new(Cursor::new(stream), Path::new("x.osm.pbf")).next()
    }

    #[test]
    fn a_block_must_inflate_to_exactly_its_raw_size() {
        // An empty string table and one empty group: a valid, tiny PrimitiveBlock.
        let data = [0x0a, 0x00, 0x12, 0x00];
        let block = read_one(one_block(&zlib_blob(&data, 4)))
            .expect("exact size")
            .expect("a block");
        assert_eq!(block.at, 0);
        assert!(matches!(
            block.blob.decode(),
            Ok(osmpbf::BlobDecode::OsmData(_))
        ));
        let past = read_one(one_block(&zlib_blob(&data, 3))).expect_err("longer");
        assert_eq!(
            past.to_string(),
            "x.osm.pbf: the block at byte 0 decompresses past its declared raw_size of 3 bytes"
        );
        let short = read_one(one_block(&zlib_blob(&data, 5))).expect_err("shorter");
        assert!(
            short
                .to_string()
                .ends_with("decompresses to 4 bytes, not the 5 its raw_size declares"),
            "{short}"
        );
    }

    #[test]
    fn a_block_whose_parse_would_be_huge_is_refused() {
        // 9 MiB of empty groups: under the 32 MiB limit, ~1.5 GiB once parsed.
        let mut data = vec![0x0a, 0x00];
        data.extend(std::iter::repeat_n([0x12, 0x00], 9 << 19).flatten());
        let refused = read_one(one_block(&zlib_blob(&data, data.len() as u64)))
            .expect_err("too costly to parse");
        assert!(
            matches!(refused, IndexError::BadBlock { at: 0, .. }),
            "{refused}"
        );
        assert!(
            refused
                .to_string()
                .contains("would need more than 64 MiB of memory to decode its 9,437,186 bytes"),
            "{refused}"
        );
    }

    #[test]
    fn unknown_block_types_are_skipped_unread() {
        let mut header = vec![0x0a, 4];
        header.extend_from_slice(b"Mine");
        header.extend_from_slice(&[0x18, 3]);
        let mut stream = (header.len() as u32).to_be_bytes().to_vec();
        stream.extend_from_slice(&header);
        stream.extend_from_slice(&[0xff, 0xff, 0xff]);
        let after = stream.len() as u64;
        stream.extend(one_block(&zlib_blob(&[0x0a, 0x00], 2)));
        let block = read_one(stream).expect("readable").expect("the data block");
        assert_eq!(block.at, after);
    }
}
