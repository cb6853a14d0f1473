//! Reduced float precision: values rounded to fewer mantissa bits, so that the low bits become
//! zeros that every codec compresses. Lossy, and only ever applied where a user asks for it.
//!
//! Rounding is to nearest, ties to even, on the IEEE 754 bits (as RNTuple's truncated float
//! columns and NanoAOD's reduced-precision branches store them): with `m` mantissa bits kept,
//! a value moves by at most 2^-(m+1) of itself. Zeros, subnormals, infinities and NaNs stay as they
//! are,
//! and a value that would round up to infinity is truncated instead.
//!
//! ```
//! use evtc_codecs::round_mantissa_f32;
//! let x = 1.234_567_f32;
//! let r = round_mantissa_f32(x, 10);
//! assert!(((r - x) / x).abs() <= 2f32.powi(-11));
//! assert_eq!(r.to_bits() & ((1 << 13) - 1), 0);
//! ```

macro_rules! round_mantissa {
    ($name:ident, $slice:ident, $f:ty, $u:ty, $mantissa:expr) => {
        #[doc = concat!("`x` rounded to `bits` mantissa bits (of ", stringify!($mantissa), "); `x` itself for `bits >= ", stringify!($mantissa), "`, zeros, subnormals, infinities and NaNs.")]
        pub fn $name(x: $f, bits: u32) -> $f {
            if bits >= $mantissa || !x.is_normal() {
                return x;
            }
            let drop = $mantissa - bits;
            let mask: $u = (1 << drop) - 1;
            let u = x.to_bits();
            let odd = (u >> drop) & 1;
            let rounded = <$f>::from_bits(u.wrapping_add((mask >> 1) + odd) & !mask);
            if rounded.is_finite() {
                rounded
            } else {
                <$f>::from_bits(u & !mask)
            }
        }

        #[doc = concat!("Rounds every value of `values` as [`", stringify!($name), "`] does.")]
        pub fn $slice(values: &mut [$f], bits: u32) {
            if bits < $mantissa {
                for v in values {
                    *v = $name(*v, bits);
                }
            }
        }
    };
}

round_mantissa!(round_mantissa_f32, round_mantissas_f32, f32, u32, 23);
round_mantissa!(round_mantissa_f64, round_mantissas_f64, f64, u64, 52);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_nearest_within_the_bound() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f32::from_bits(state as u32);
            let y = f64::from_bits(state);
            for bits in [1, 7, 10, 16, 22] {
                let r = round_mantissa_f32(x, bits);
                if x.is_normal() && x.abs() < f32::MAX / 2.0 {
                    let err = f64::from((r - x).abs()) / f64::from(x.abs());
                    assert!(err <= 2f64.powi(-(bits as i32 + 1)), "{x} {bits} {r}");
                    assert_eq!(r.to_bits() & ((1 << (23 - bits)) - 1), 0);
                } else if !x.is_normal() {
                    assert_eq!(r.to_bits(), x.to_bits());
                }
                let r = round_mantissa_f64(y, bits + 20);
                if y.is_normal() && y.abs() < f64::MAX / 2.0 {
                    assert!((r - y).abs() / y.abs() <= 2f64.powi(-(bits as i32 + 21)));
                }
            }
        }
    }

    #[test]
    fn ties_go_to_even_and_overflow_truncates() {
        // 1 + 2^-11 lies halfway between two 10-bit values: it goes to the even one, 1.0.
        assert_eq!(round_mantissa_f32(1.0 + 2f32.powi(-11), 10), 1.0);
        // 1 + 3 * 2^-11 lies halfway too: up to the even 1 + 2^-9.
        assert_eq!(
            round_mantissa_f32(1.0 + 3.0 * 2f32.powi(-11), 10),
            1.0 + 2f32.powi(-9)
        );
        assert_eq!(
            round_mantissa_f32(f32::MAX, 5),
            f32::from_bits(f32::MAX.to_bits() & !((1 << 18) - 1))
        );
        assert!(round_mantissa_f32(f32::NAN, 3).is_nan());
        let mut v = [1.1f64, -2.2, 0.0];
        round_mantissas_f64(&mut v, 52);
        assert_eq!(v, [1.1, -2.2, 0.0]);
    }
}
