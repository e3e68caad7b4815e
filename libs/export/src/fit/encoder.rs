//! A minimal FIT binary writer: file header, definition and data messages with normal
//! record headers, little-endian fields, and the trailing file CRC.
//!
//! Only what a course file needs is here: no compressed timestamps, no developer fields and
//! no 64-bit types, which lets the header claim protocol 1.0 so that older devices accept
//! the file too.

use super::crc;
use crate::ExportError;

/// Size of the file header we write (the 14-byte form, which carries a header CRC).
const HEADER_SIZE: usize = 14;
/// Protocol version 1.0 (high nibble major, low nibble minor): nothing we write needs 2.0.
const PROTOCOL_VERSION: u8 = 0x10;
/// Profile version 21.40 as major * 100 + minor. Every message and field we write has been
/// in the profile since long before that, so the exact value only documents which profile
/// the field numbers were checked against.
const PROFILE_VERSION: u16 = 2140;

/// FIT base type codes (the "base type" byte of a field definition).
pub(super) mod base {
    /// 8-bit enum, invalid 0xFF.
    pub(crate) const ENUM: u8 = 0x00;
    /// 8-bit unsigned, invalid 0xFF.
    pub(crate) const UINT8: u8 = 0x02;
    /// 16-bit unsigned, invalid 0xFFFF.
    pub(crate) const UINT16: u8 = 0x84;
    /// 32-bit signed, invalid 0x7FFFFFFF.
    pub(crate) const SINT32: u8 = 0x85;
    /// 32-bit unsigned, invalid 0xFFFFFFFF.
    pub(crate) const UINT32: u8 = 0x86;
    /// uint32z: 0 is the invalid value (serial numbers).
    pub(crate) const UINT32Z: u8 = 0x8C;
    /// Null-terminated UTF-8 string padded to the declared size.
    pub(crate) const STRING: u8 = 0x07;
}

/// Invalid-value markers, used when a field is declared but its value is unknown.
pub(super) const UINT16_INVALID: u16 = 0xFFFF;

/// One field of a definition message.
#[derive(Clone, Copy, Debug)]
pub(super) struct Field {
    /// Field definition number from the FIT profile.
    pub num: u8,
    /// Size in bytes.
    pub size: u8,
    /// Base type code (see [`base`]).
    pub base: u8,
}

impl Field {
    /// Shorthand used by the message tables.
    pub(super) const fn new(num: u8, size: u8, base: u8) -> Self {
        Self { num, size, base }
    }
}

/// Accumulates a FIT file in memory; [`Encoder::finish`] fills in header and CRC.
pub(super) struct Encoder {
    buf: Vec<u8>,
}

impl Encoder {
    /// Starts a file, reserving `capacity` bytes for the messages so large courses are
    /// written without reallocation.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        let mut buf = Vec::with_capacity(HEADER_SIZE + capacity + 2);
        // Placeholder: the header needs the final data size, known only at the end.
        buf.resize(HEADER_SIZE, 0);
        Self { buf }
    }

    /// Writes a definition message binding `local` (0..=15) to the global message `global`.
    pub(super) fn define(&mut self, local: u8, global: u16, fields: &[Field]) {
        self.buf.push(0x40 | (local & 0x0F));
        self.buf.push(0); // reserved
        self.buf.push(0); // architecture: 0 = little-endian
        self.buf.extend_from_slice(&global.to_le_bytes());
        // The message tables in this crate have at most a dozen fields, far below 255.
        self.buf.push(fields.len() as u8);
        for f in fields {
            self.buf.extend_from_slice(&[f.num, f.size, f.base]);
        }
    }

    /// Starts a data message of local type `local`; the caller then writes its fields in
    /// definition order.
    pub(super) fn begin(&mut self, local: u8) {
        self.buf.push(local & 0x0F);
    }

    pub(super) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub(super) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes `s` into a string field of `size` bytes: cut on a UTF-8 boundary so that at
    /// least one terminating NUL fits, then NUL-padded to the declared size.
    pub(super) fn string(&mut self, s: &str, size: u8) {
        let size = usize::from(size);
        let text = truncate_utf8(s, size.saturating_sub(1));
        self.buf.extend_from_slice(text.as_bytes());
        self.buf.resize(self.buf.len() + (size - text.len()), 0);
    }

    /// Completes the header (data size, header CRC) and appends the file CRC.
    ///
    /// Fails only if the messages exceed the 4 GiB a FIT header can describe, which the
    /// record cap keeps far out of reach; the error still reports it rather than writing
    /// a corrupt size.
    pub(super) fn finish(mut self, records: usize) -> Result<Vec<u8>, ExportError> {
        let data_size = u32::try_from(self.buf.len() - HEADER_SIZE)
            .map_err(|_| ExportError::TooManyPoints(records))?;
        let mut header = [0u8; HEADER_SIZE];
        header[0] = HEADER_SIZE as u8;
        header[1] = PROTOCOL_VERSION;
        header[2..4].copy_from_slice(&PROFILE_VERSION.to_le_bytes());
        header[4..8].copy_from_slice(&data_size.to_le_bytes());
        header[8..12].copy_from_slice(b".FIT");
        let header_crc = crc::update(0, &header[..12]);
        header[12..14].copy_from_slice(&header_crc.to_le_bytes());
        self.buf[..HEADER_SIZE].copy_from_slice(&header);
        // The file CRC covers the header too.
        let file_crc = crc::update(0, &self.buf);
        self.buf.extend_from_slice(&file_crc.to_le_bytes());
        Ok(self.buf)
    }
}

/// The longest prefix of `s` that is at most `max` bytes and ends on a char boundary.
pub(super) fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundary() {
        assert_eq!(truncate_utf8("abc", 15), "abc");
        assert_eq!(truncate_utf8("Übernachtung Linz", 15), "Übernachtung L");
        // "ü" is 2 bytes: 14 ASCII + "ü" would need 16, so the "ü" goes entirely.
        assert_eq!(truncate_utf8("aaaaaaaaaaaaaaü", 15), "aaaaaaaaaaaaaa");
        assert_eq!(truncate_utf8("🚲🚲🚲🚲", 15), "🚲🚲🚲");
    }

    #[test]
    fn string_field_is_padded_and_terminated() {
        let mut e = Encoder::with_capacity(0);
        e.string("🚲🚲🚲🚲", 16);
        let bytes = &e.buf[HEADER_SIZE..];
        assert_eq!(bytes.len(), 16);
        assert_eq!(&bytes[..12], "🚲🚲🚲".as_bytes());
        assert!(bytes[12..].iter().all(|&b| b == 0));
    }

    #[test]
    fn empty_file_has_valid_header() {
        let out = Encoder::with_capacity(0).finish(0).unwrap_or_default();
        assert_eq!(out.len(), HEADER_SIZE + 2);
        assert_eq!(&out[8..12], b".FIT");
        assert_eq!(crc::update(0, &out), 0, "CRC over data + CRC must be 0");
    }
}
