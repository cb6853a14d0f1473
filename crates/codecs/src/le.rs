//! Little-endian reads of fixed-size values at offsets of byte slices: every layout evtc reads
//! (block envelopes, record headers, seek tables, preconditioned values) is little-endian.
//!
//! The functions take an offset into a slice the caller has checked is long enough (a header of
//! known size, a chunk of `chunks_exact`), and panic otherwise, as slice indexing does.
//!
//! ```
//! use evtc_codecs::le;
//! let header = [1u8, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0];
//! assert_eq!(le::u32_at(&header, 0), 1);
//! assert_eq!(le::u64_at(&header, 4), 2);
//! ```

/// The `N` bytes at `at`.
///
/// # Panics
/// If `bytes` is shorter than `at + N`.
#[inline]
pub fn array<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

/// The `u16` at `at`.
///
/// # Panics
/// If `bytes` is shorter than `at + 2`.
#[inline]
pub fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(array(bytes, at))
}

/// The `u32` at `at`.
///
/// # Panics
/// If `bytes` is shorter than `at + 4`.
#[inline]
pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(array(bytes, at))
}

/// The `u64` at `at`.
///
/// # Panics
/// If `bytes` is shorter than `at + 8`.
#[inline]
pub fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(array(bytes, at))
}
