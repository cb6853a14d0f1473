//! Byte sizes as users write them (`30MB`, `256KiB`, `4096`) and as evtc prints them.

/// Parses a byte size: a number with an optional unit (B, KB, MB, GB are powers of 1000; KiB,
/// MiB, GiB powers of 1024; any case).
///
/// ```
/// assert_eq!(evtc_format::size::parse("256KiB"), Ok(262_144));
/// assert_eq!(evtc_format::size::parse("1.5MB"), Ok(1_500_000));
/// ```
///
/// # Errors
/// A message naming the text that is not a size, or its unknown unit.
pub fn parse(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a size (examples: 4096, 256KiB, 30MB)"))?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        other => {
            return Err(format!(
                "unknown size unit {other:?} in {s:?} (B, KB, MB, GB, KiB, MiB, GiB)"
            ));
        }
    };
    Ok((number * scale).round() as u64)
}

/// A human-readable size in powers of 1000 (`23.55 MB`).
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

/// A size as [`parse`] reads it back, in the largest binary unit that divides it (`256KiB`,
/// `32MiB`, `1000`).
pub fn spell(bytes: u64) -> String {
    for (unit, scale) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn spelled_sizes_read_back() {
        for (bytes, text) in [
            (262_144, "256KiB"),
            (32 << 20, "32MiB"),
            (1000, "1000"),
            (3 << 30, "3GiB"),
        ] {
            assert_eq!(super::spell(bytes), text);
            assert_eq!(super::parse(text), Ok(bytes));
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(super::parse("30MB"), Ok(30_000_000));
        assert_eq!(super::parse("256KiB"), Ok(262_144));
        assert_eq!(super::parse("4096"), Ok(4096));
        assert!(super::parse("lots").is_err());
        assert!(super::parse("3 parsecs").is_err());
    }
}
