//! Scratch buffers reused across blocks of varying sizes.

/// The first `len` bytes of `buf`, growing it (zero-filled) when it is shorter and never shrinking
/// it: a buffer reused for blocks of varying sizes is zeroed once, up to its largest use, instead
/// of again wherever a block is larger than the one before.
///
/// The caller bounds `len` (as for any allocation sized by data).
///
/// # Example
/// ```
/// let mut buf = Vec::new();
/// assert_eq!(evtc_codecs::scratch(&mut buf, 8).len(), 8);
/// assert_eq!(evtc_codecs::scratch(&mut buf, 3).len(), 3);
/// assert_eq!(buf.len(), 8);
/// ```
pub fn scratch(buf: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if buf.len() < len {
        buf.resize(len, 0);
    }
    &mut buf[..len]
}
