//! Reduced float precision: values rounded to fewer mantissa bits, so that the low bits become
//! zeros that every codec compresses. Lossy, and only ever applied where a user asks for it.
//!
//! Rounding is to nearest, ties to even, on the IEEE 754 bits (as RNTuple's truncated float
//! columns and NanoAOD's reduced-precision branches store them): with `m` mantissa bits kept,
//! a value moves by at most 2^-(m+1) of itself. Zeros, subnormals, infinities and NaNs stay as they
//! are,
//! and a value that would round up to infinity is truncated instead.
//!
//! Quantization ([`Quantization`]) is the other kind, as RNTuple's `Real32Quant` columns: values
//! of a stated range `[min, max]` are moved to the nearest of `2^bits` evenly spaced values that
//! span it, so a value moves by at most half a step, `(max - min) / (2^bits - 1) / 2` (plus half
//! an ulp of the result for `f32`); a value outside the range (or NaN) is refused, never clamped.
//!
//! ```
//! use evtc_codecs::round_mantissa_f32;
//! let x = 1.234_567_f32;
//! let r = round_mantissa_f32(x, 10);
//! assert!(((r - x) / x).abs() <= 2f32.powi(-11));
//! assert_eq!(r.to_bits() & ((1 << 13) - 1), 0);
//! ```

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

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

/// Values of `[min, max]` moved to the nearest of `2^bits` evenly spaced values spanning it.
///
/// ```
/// use evtc_codecs::Quantization;
/// let q: Quantization = "-3.2:3.2:12".parse()?;
/// let x = 1.234_f32;
/// let y = q.apply_f32(x).expect("in range");
/// assert!(f64::from((y - x).abs()) <= q.max_error() + f64::from(f32::EPSILON));
/// assert_eq!(q.apply_f32(4.0), None);
/// # Ok::<(), evtc_codecs::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantization {
    min: f64,
    max: f64,
    bits: u32,
}

impl Quantization {
    /// A quantization of `[min, max]` into `2^bits` values.
    ///
    /// # Errors
    /// [`Error::BadQuantization`] unless `min < max`, both finite, and `bits` is 1-32.
    pub fn new(min: f64, max: f64, bits: u32) -> Result<Quantization> {
        if !(min.is_finite() && max.is_finite() && min < max && (1..=32).contains(&bits)) {
            return Err(Error::BadQuantization(format!(
                "[{min}, {max}] with {bits} bits: the range must be finite and not empty, the bits 1-32"
            )));
        }
        Ok(Quantization { min, max, bits })
    }

    /// The range's lower end.
    pub fn min(&self) -> f64 {
        self.min
    }

    /// The range's upper end.
    pub fn max(&self) -> f64 {
        self.max
    }

    /// Bits per value: `2^bits` values span the range.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The largest distance between a value and its quantized value, half a step (for `f32`
    /// results, half an ulp of the result more).
    pub fn max_error(&self) -> f64 {
        self.step() / 2.0
    }

    fn step(&self) -> f64 {
        (self.max - self.min) / ((1u64 << self.bits) - 1) as f64
    }

    /// `x` quantized; `None` if `x` is outside the range or NaN.
    pub fn apply_f64(&self, x: f64) -> Option<f64> {
        if !(x >= self.min && x <= self.max) {
            return None;
        }
        let code = ((x - self.min) / self.step()).round();
        Some((self.min + code * self.step()).clamp(self.min, self.max))
    }

    /// `x` quantized, computed in `f64` and rounded to the nearest `f32`; `None` if `x` is
    /// outside the range or NaN.
    pub fn apply_f32(&self, x: f32) -> Option<f32> {
        self.apply_f64(f64::from(x)).map(|y| y as f32)
    }
}

impl fmt::Display for Quantization {
    /// `MIN:MAX:BITS`, as parsed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.min, self.max, self.bits)
    }
}

impl FromStr for Quantization {
    type Err = Error;

    /// Parses `MIN:MAX:BITS` (`-3.2:3.2:12`).
    fn from_str(s: &str) -> Result<Quantization> {
        let bad =
            || Error::BadQuantization(format!("{s:?} is not MIN:MAX:BITS (example: -3.2:3.2:12)"));
        let mut parts = s.split(':');
        let (Some(min), Some(max), Some(bits), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let min = min.trim().parse().map_err(|_| bad())?;
        let max = max.trim().parse().map_err(|_| bad())?;
        let bits = bits.trim().parse().map_err(|_| bad())?;
        Quantization::new(min, max, bits)
    }
}

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

    #[test]
    fn quantization_stays_within_half_a_step_and_refuses_the_outside() {
        for (min, max, bits) in [
            (-3.2, 3.2, 12),
            (0.0, 1000.0, 8),
            (-1e-3, 2e-3, 20),
            (5.0, 6.0, 1),
        ] {
            let q = Quantization::new(min, max, bits).unwrap();
            assert_eq!(q.to_string().parse::<Quantization>().unwrap(), q);
            let mut distinct = std::collections::BTreeSet::new();
            for i in 0..=20_000 {
                let x = min + (max - min) * f64::from(i) / 20_000.0;
                let y = q.apply_f64(x).unwrap();
                assert!((y - x).abs() <= q.max_error() * (1.0 + 1e-9), "{q} {x} {y}");
                assert!((min..=max).contains(&y));
                distinct.insert(y.to_bits());
                let x32 = x as f32;
                if let Some(y32) = q.apply_f32(x32) {
                    let ulp = f64::from(f32::EPSILON) * f64::from(y32.abs().max(f32::MIN_POSITIVE));
                    assert!((f64::from(y32) - f64::from(x32)).abs() <= q.max_error() + ulp);
                }
            }
            assert!(distinct.len() <= 1 << bits);
            assert_eq!(q.apply_f64(max + (max - min)), None);
            assert_eq!(q.apply_f64(min - 1e-9 * (max - min)), None);
            assert_eq!(q.apply_f64(f64::NAN), None);
            assert_eq!(q.apply_f64(min), Some(min));
            assert_eq!(q.apply_f64(max), Some(max));
        }
        for bad in [
            "1:1:8", "2:1:8", "0:1:0", "0:1:33", "0:inf:8", "0:1", "a:1:2", "0:1:2:3",
        ] {
            assert!(bad.parse::<Quantization>().is_err(), "{bad}");
        }
    }
}
