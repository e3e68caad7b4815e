//! What parsing a block will allocate, estimated from its decompressed bytes before osmpbf
//! parses them.
//!
//! The 32 MiB cap on a block's data does not bound the memory its parse takes: osmpbf builds
//! rust-protobuf structs, and an empty `PrimitiveGroup` is 2 bytes on the wire but a
//! ~120-byte struct in a `Vec`, so 32 MiB of them is ~2 GiB; an empty string of the string
//! table is 2 bytes against a 24-byte `Vec`, a packed value of one byte an 8-byte `i64`.
//! Walking the message tree once (no allocation, one linear scan of bytes already in memory)
//! and pricing each field the way rust-protobuf stores it gives an upper estimate, and a
//! block whose estimate is over a limit is refused instead of parsed.
//!
//! The prices are deliberately high (a struct counted twice for a `Vec`'s spare capacity,
//! every packed value as 8 bytes): real blocks of ~8,000 entities price at a few MiB, so
//! the limit sits far above them and far below what hurts. No byte can price at more than
//! [`MAX_COST_PER_BYTE`], so a block too small to reach the limit even at that rate (every
//! real block seen: 100–400 KB) is not walked at all.

/// How rust-protobuf stores a known field of the OSM schema once parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Field {
    /// A nested message: a struct of its own, boxed or in a `Vec`.
    Message(Schema),
    /// `bytes` or `string`: a `Vec<u8>` of the payload.
    Bytes,
    /// A packed repeated integer: one `Vec` element per varint of the payload.
    Packed,
    /// A singular integer: inside its message's struct.
    Scalar,
}

pub(crate) type Schema = &'static [(u64, Field)];

use Field::{Bytes, Message, Packed, Scalar};

/// A nested message: the largest OSM struct (`Way`, `Relation`) is ~160 bytes, counted
/// with as much again for the spare capacity of the `Vec` it is pushed to.
const MESSAGE_COST: u64 = 320;
/// A value of a packed or repeated integer, or a scalar: at most an `i64`.
const VALUE_COST: u64 = 8;
/// A `Vec<u8>` (and the slack of the `Vec` holding it), plus its payload.
const BYTES_COST: u64 = 48;
/// A field outside the schema: rust-protobuf keeps it in a hash map of unknown fields.
const UNKNOWN_COST: u64 = 128;
/// The most any byte of a message can cost: every price above is paid for a field of at
/// least 2 bytes (a key and a length or value), a nested message's 320 being the most.
/// So data of `n` bytes costs at most `n × MAX_COST_PER_BYTE + MESSAGE_COST`, and a block
/// small enough that this is under a limit (all real blocks, ~100–400 KB) needs no walk.
pub(crate) const MAX_COST_PER_BYTE: u64 = MESSAGE_COST / 2;

const INFO: Schema = &[
    (1, Scalar),
    (2, Scalar),
    (3, Scalar),
    (4, Scalar),
    (5, Scalar),
    (6, Scalar),
];
const DENSE_INFO: Schema = &[
    (1, Packed),
    (2, Packed),
    (3, Packed),
    (4, Packed),
    (5, Packed),
    (6, Packed),
];
const NODE: Schema = &[
    (1, Scalar),
    (2, Packed),
    (3, Packed),
    (4, Message(INFO)),
    (8, Scalar),
    (9, Scalar),
];
const DENSE_NODES: Schema = &[
    (1, Packed),
    (5, Message(DENSE_INFO)),
    (8, Packed),
    (9, Packed),
    (10, Packed),
];
/// `Way` and `Relation` share their field numbers and kinds (refs/lat/lon, and
/// roles_sid/memids/types, are all packed integers).
const WAY_OR_RELATION: Schema = &[
    (1, Scalar),
    (2, Packed),
    (3, Packed),
    (4, Message(INFO)),
    (8, Packed),
    (9, Packed),
    (10, Packed),
];
const CHANGESET: Schema = &[(1, Scalar)];
const PRIMITIVE_GROUP: Schema = &[
    (1, Message(NODE)),
    (2, Message(DENSE_NODES)),
    (3, Message(WAY_OR_RELATION)),
    (4, Message(WAY_OR_RELATION)),
    (5, Message(CHANGESET)),
];
const STRING_TABLE: Schema = &[(1, Bytes)];
/// An `OSMData` block's data.
pub(crate) const PRIMITIVE_BLOCK: Schema = &[
    (1, Message(STRING_TABLE)),
    (2, Message(PRIMITIVE_GROUP)),
    (17, Scalar),
    (18, Scalar),
    (19, Scalar),
    (20, Scalar),
];
const HEADER_BBOX: Schema = &[(1, Scalar), (2, Scalar), (3, Scalar), (4, Scalar)];
/// An `OSMHeader` block's data.
pub(crate) const HEADER_BLOCK: Schema = &[
    (1, Message(HEADER_BBOX)),
    (4, Bytes),
    (5, Bytes),
    (16, Bytes),
    (17, Bytes),
    (32, Scalar),
    (33, Scalar),
    (34, Bytes),
];

/// Whether data of `len` bytes may cost more than `limit`, so that [`estimate`] must walk it.
pub(crate) fn may_exceed(len: u64, limit: u64) -> bool {
    len.saturating_mul(MAX_COST_PER_BYTE)
        .saturating_add(MESSAGE_COST)
        > limit
}

/// The bytes parsing `bytes` as a message of `schema` will allocate, at most, or, once
/// that is over `limit`, a figure over `limit` (the walk stops there: a bomb is refused
/// after a few hundred KB of it); `Err` says why `bytes` is not such a message (osmpbf
/// would refuse it too).
pub(crate) fn estimate(bytes: &[u8], schema: Schema, limit: u64) -> Result<u64, String> {
    walk(bytes, schema, limit).map(|cost| cost + MESSAGE_COST)
}

fn walk(bytes: &[u8], schema: Schema, limit: u64) -> Result<u64, String> {
    let mut cost = 0_u64;
    let mut at = 0_usize;
    while at < bytes.len() && cost <= limit {
        let field_at = at;
        let malformed = || format!("a malformed field at byte {field_at} of its data");
        let key = varint(bytes, &mut at).ok_or_else(malformed)?;
        let (number, wire) = (key >> 3, key & 7);
        if number == 0 {
            return Err(format!("field number 0 at byte {field_at} of its data"));
        }
        let known = schema.iter().find(|(n, _)| *n == number).map(|(_, f)| *f);
        let fixed = match wire {
            0 => {
                varint(bytes, &mut at).ok_or_else(malformed)?;
                true
            }
            1 | 5 => {
                let width = if wire == 1 { 8 } else { 4 };
                at = at
                    .checked_add(width)
                    .filter(|end| *end <= bytes.len())
                    .ok_or_else(malformed)?;
                true
            }
            2 => false,
            // Groups (3, 4) are not part of the OSM schema; 6 and 7 do not exist.
            _ => return Err(format!("wire type {wire} at byte {field_at} of its data")),
        };
        if fixed {
            // Packed fields may also arrive one value at a time, which the parser accepts.
            cost += match known {
                Some(Scalar | Packed) => VALUE_COST,
                _ => UNKNOWN_COST,
            };
            continue;
        }
        let len = varint(bytes, &mut at)
            .and_then(|l| usize::try_from(l).ok())
            .ok_or_else(malformed)?;
        let end = at
            .checked_add(len)
            .filter(|end| *end <= bytes.len())
            .ok_or_else(malformed)?;
        let payload = &bytes[at..end];
        at = end;
        cost += match known {
            Some(Message(inner)) => MESSAGE_COST + walk(payload, inner, limit - cost)?,
            Some(Bytes) => BYTES_COST + payload.len() as u64,
            // One value per byte that ends a varint.
            Some(Packed) => VALUE_COST * payload.iter().filter(|b| *b & 0x80 == 0).count() as u64,
            Some(Scalar) | None => UNKNOWN_COST + payload.len() as u64,
        };
    }
    Ok(cost)
}

/// A protobuf varint at `*at`, advancing past it; `None` if cut short or over 10 bytes.
pub(crate) fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
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
    fn empty_groups_price_far_above_their_bytes() {
        // An empty string table, then 1,000 empty groups: 2,002 bytes on the wire.
        let mut block = vec![0x0a, 0x00];
        for _ in 0..1_000 {
            block.extend_from_slice(&[0x12, 0x00]);
        }
        let cost = estimate(&block, PRIMITIVE_BLOCK, u64::MAX).expect("a valid block");
        assert!(cost >= 1_000 * MESSAGE_COST, "{cost}");
        assert!(cost > 100 * block.len() as u64, "{cost}");
        // With a limit, the walk stops soon after passing it, with a figure over it.
        let stopped = estimate(&block, PRIMITIVE_BLOCK, 10 * MESSAGE_COST).expect("valid");
        assert!(
            stopped > 10 * MESSAGE_COST && stopped < 20 * MESSAGE_COST,
            "{stopped}"
        );
    }

    #[test]
    fn packed_values_are_priced_per_varint() {
        // A group holding dense nodes with 4 ids: 1, 300 (2 bytes), 2, 3.
        let dense = [0x0a, 5, 0x02, 0xd8, 0x04, 0x04, 0x06];
        let mut group = vec![0x12, dense.len() as u8];
        group.extend_from_slice(&dense);
        let mut block = vec![0x0a, 0x00, 0x12, group.len() as u8];
        block.extend_from_slice(&group);
        let cost = estimate(&block, PRIMITIVE_BLOCK, u64::MAX).expect("a valid block");
        // Block, string table, group, dense nodes; 4 values.
        assert_eq!(cost, 4 * MESSAGE_COST + 4 * VALUE_COST);
    }

    #[test]
    fn unknown_fields_cost_their_storage() {
        // Field 99 (varint) and field 98 (3 bytes) in a header block.
        let block = [0x98, 0x06, 0x01, 0x92, 0x06, 3, b'a', b'b', b'c'];
        assert_eq!(
            estimate(&block, HEADER_BLOCK, u64::MAX),
            Ok(MESSAGE_COST + 2 * UNKNOWN_COST + 3)
        );
    }

    #[test]
    fn no_byte_costs_more_than_the_bound() {
        // The densest shapes each price: empty groups, empty strings, empty unknown
        // fields, one-byte packed values, scalars.
        let mut groups = vec![0x0a, 0x00];
        groups.extend(std::iter::repeat_n([0x12, 0x00], 500).flatten());
        let mut strings = Vec::new();
        strings.extend(std::iter::repeat_n([0x0a, 0x00], 500).flatten());
        let mut strings_block = vec![0x0a, 0xe8, 0x07];
        strings_block.extend_from_slice(&strings);
        let unknown: Vec<u8> = std::iter::repeat_n([0x1a, 0x00], 500).flatten().collect();
        let scalars: Vec<u8> = std::iter::repeat_n([0x88, 0x01, 0x00], 500)
            .flatten()
            .collect();
        let mut packed = vec![0x12, 0x80, 0x08, 0x12, 0xfd, 0x07, 0x0a, 0xfa, 0x07];
        packed.extend(std::iter::repeat_n(0x01, 1_018));
        for (what, bytes) in [
            ("groups", groups),
            ("strings", strings_block),
            ("unknown", unknown),
            ("scalars", scalars),
            ("packed", packed),
        ] {
            let cost = estimate(&bytes, PRIMITIVE_BLOCK, u64::MAX).expect(what);
            let bound = bytes.len() as u64 * MAX_COST_PER_BYTE + MESSAGE_COST;
            assert!(cost <= bound, "{what}: {cost} > {bound}");
            assert!(!may_exceed(bytes.len() as u64, bound), "{what}");
        }
        assert!(may_exceed(1_000, 1_000 * MAX_COST_PER_BYTE));
    }

    #[test]
    fn refuses_what_is_not_a_message() {
        let any = u64::MAX;
        assert!(
            estimate(&[0; 16], PRIMITIVE_BLOCK, any).is_err(),
            "field number 0"
        );
        assert!(
            estimate(&[0x0a, 0x05, 0x00], PRIMITIVE_BLOCK, any).is_err(),
            "cut short"
        );
        assert!(estimate(&[0x0b], PRIMITIVE_BLOCK, any).is_err(), "a group");
        assert_eq!(estimate(&[], PRIMITIVE_BLOCK, any), Ok(MESSAGE_COST));
    }
}
