//! How many bytes of a compressed block are the codec's framing rather than coded data: what a
//! random-access unit pays again for each unit (docs/benchmarks.md, RAC's size cost).

use crate::codec::Algorithm;

/// The bytes of `data`, one block in `algorithm`'s own form (as [`crate::Compressor`] makes
/// them), that are framing: a zstd frame's header, its blocks' 3-byte headers and its checksum;
/// a zlib stream's 2-byte header and Adler-32; nothing for an LZ4 block or stored data. `None`
/// where evtc does not take the format apart (xz streams and raw LZMA2) or `data` is not a
/// well-formed frame.
pub fn frame_overhead(algorithm: Algorithm, data: &[u8]) -> Option<usize> {
    match algorithm {
        Algorithm::None | Algorithm::Lz4 | Algorithm::Lz4Hc => Some(0),
        Algorithm::Zlib => (data.len() >= 6).then_some(6),
        Algorithm::Zstd => zstd_overhead(data),
        Algorithm::Lzma => None,
    }
}

/// A zstd frame's header (RFC 8878 3.1.1), block headers and checksum.
fn zstd_overhead(frame: &[u8]) -> Option<usize> {
    if frame.get(..4)? != [0x28, 0xB5, 0x2F, 0xFD] {
        return None;
    }
    let descriptor = *frame.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    let checksum = descriptor & 0x04 != 0;
    let dictionary_id = [0, 1, 2, 4][usize::from(descriptor & 0x03)];
    let content_size = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let header = 5 + usize::from(!single_segment) + dictionary_id + content_size;
    let mut at = header;
    let mut overhead = header;
    loop {
        let bytes = frame.get(at..at + 3)?;
        let block = u32::from(bytes[0]) | u32::from(bytes[1]) << 8 | u32::from(bytes[2]) << 16;
        let last = block & 1 != 0;
        let size = (block >> 3) as usize;
        // An RLE block holds one byte, repeated `size` times.
        let stored = if (block >> 1) & 3 == 1 { 1 } else { size };
        at = at.checked_add(3 + stored)?;
        overhead += 3;
        if last {
            break;
        }
    }
    if checksum {
        overhead += 4;
        at += 4;
    }
    (at == frame.len()).then_some(overhead)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Codec, compress};

    #[test]
    #[cfg(feature = "zstd")]
    fn a_zstd_frame_is_taken_apart_to_its_last_byte() {
        let data: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let mut frame = Vec::new();
        compress(Codec::zstd(5).unwrap(), &data, &mut frame).unwrap();
        let overhead = frame_overhead(Algorithm::Zstd, &frame).expect("a well-formed frame");
        // Magic, descriptor, window and content size, then at least two 128 KiB blocks' headers.
        assert!((10..64).contains(&overhead), "{overhead}");
        assert_eq!(
            frame_overhead(Algorithm::Zstd, &frame[..frame.len() - 1]),
            None
        );
        assert_eq!(frame_overhead(Algorithm::Zstd, b"not a frame"), None);
        assert_eq!(frame_overhead(Algorithm::Lz4, &frame), Some(0));
        assert_eq!(frame_overhead(Algorithm::Lzma, &frame), None);
    }
}
