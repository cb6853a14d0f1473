//! CRC32 checksums (the gzip, zlib and Parquet polynomial, CRC-32/ISO-HDLC).
//!
//! Backed by `crc32fast`, which folds with PCLMULQDQ, or VPCLMULQDQ on AVX-512 CPUs: as fast as
//! `crc-fast` on large buffers and faster on the 64-byte headers and small RAC units evtc also
//! checksums (`cargo bench --bench codecs -- crc32`; docs/benchmarks.md).

/// The CRC32 of `bytes`.
///
/// ```
/// assert_eq!(evtc_codecs::crc32(b"123456789"), 0xCBF4_3926);
/// ```
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// An incremental CRC32: `Crc32::new().update(a).update(b).finish() == crc32(a ++ b)`.
#[derive(Debug, Clone, Default)]
pub struct Crc32(crc32fast::Hasher);

impl Crc32 {
    /// A fresh checksum.
    pub fn new() -> Crc32 {
        Crc32::default()
    }

    /// Feeds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) -> &mut Crc32 {
        self.0.update(bytes);
        self
    }

    /// The CRC32 of everything fed so far.
    pub fn finish(&self) -> u32 {
        self.0.clone().finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_equals_one_shot() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let (a, b) = data.split_at(3_333);
        assert_eq!(Crc32::new().update(a).update(b).finish(), crc32(&data));
        assert_eq!(crc32(b""), 0);
    }
}
