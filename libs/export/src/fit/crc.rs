//! The FIT file CRC: CRC-16 with the reflected polynomial 0xA001 and initial value 0
//! (also known as CRC-16/ARC), computed nibble-wise exactly as the FIT protocol
//! document's reference `FitCRC_Get16` does.

/// The 16-entry nibble table from the FIT protocol specification.
const CRC_TABLE: [u16; 16] = [
    0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401, 0xA001, 0x6C00, 0x7800, 0xB401,
    0x5000, 0x9C01, 0x8801, 0x4400,
];

/// Folds `bytes` into a running CRC (start with 0).
pub(super) fn update(mut crc: u16, bytes: &[u8]) -> u16 {
    for &byte in bytes {
        // Low nibble first, then high nibble, as in the specification.
        let tmp = CRC_TABLE[usize::from(crc & 0xF)];
        crc = (crc >> 4) & 0x0FFF;
        crc = crc ^ tmp ^ CRC_TABLE[usize::from(byte & 0xF)];
        let tmp = CRC_TABLE[usize::from(crc & 0xF)];
        crc = (crc >> 4) & 0x0FFF;
        crc = crc ^ tmp ^ CRC_TABLE[usize::from(byte >> 4)];
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_crc16_arc_check_value() {
        // The standard "123456789" check value of CRC-16/ARC.
        assert_eq!(update(0, b"123456789"), 0xBB3D);
    }

    #[test]
    fn is_incremental() {
        assert_eq!(
            update(update(0, b"1234"), b"56789"),
            update(0, b"123456789")
        );
    }
}
