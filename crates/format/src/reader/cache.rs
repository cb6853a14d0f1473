//! [`SharedCache`]: what the reads and cursors of one open file keep for each other, bounded by
//! the bytes it holds.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A map shared by every read and cursor of one [`crate::FileReader`] (behind one lock), bounded
/// by the bytes its values hold: when a new value would not fit, the oldest values are evicted
/// first. A value larger than the whole bound is not kept.
pub(super) struct SharedCache<K, V: ?Sized> {
    max_bytes: usize,
    inner: Mutex<Held<K, V>>,
}

/// The values a [`SharedCache`] holds, the order they came in and their bytes.
struct Held<K, V: ?Sized> {
    values: HashMap<K, (Arc<V>, usize)>,
    order: VecDeque<K>,
    bytes: usize,
}

impl<K: Copy + Eq + Hash, V: ?Sized> SharedCache<K, V> {
    /// An empty cache that holds at most `max_bytes` of values.
    pub(super) fn new(max_bytes: usize) -> Self {
        SharedCache {
            max_bytes,
            inner: Mutex::new(Held {
                values: HashMap::new(),
                order: VecDeque::new(),
                bytes: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Held<K, V>> {
        // A panic while the lock was held cannot leave the map and its count apart (each update
        // is completed before the guard drops), so a poisoned lock is used as it is.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value kept under `key`, if any.
    pub(super) fn get(&self, key: K) -> Option<Arc<V>> {
        self.lock().values.get(&key).map(|(value, _)| value.clone())
    }

    /// Whether a value of `bytes` can be kept at all (not larger than the whole bound), so that
    /// a caller can skip making one that would not be.
    pub(super) fn fits(&self, bytes: usize) -> bool {
        bytes <= self.max_bytes
    }

    /// Keeps `value`, which holds `bytes`, under `key` (unless a value is already kept there),
    /// evicting the oldest values as needed to stay within the bound.
    pub(super) fn put(&self, key: K, value: Arc<V>, bytes: usize) {
        if !self.fits(bytes) {
            return;
        }
        let mut held = self.lock();
        if held.values.contains_key(&key) {
            return;
        }
        while held.bytes + bytes > self.max_bytes {
            let Some(oldest) = held.order.pop_front() else {
                break;
            };
            if let Some((_, freed)) = held.values.remove(&oldest) {
                held.bytes -= freed;
            }
        }
        held.values.insert(key, (value, bytes));
        held.order.push_back(key);
        held.bytes += bytes;
    }

    /// How many bytes of values are kept.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_values_make_room_for_a_new_one() {
        let cache = SharedCache::<u32, [u8]>::new(10);
        cache.put(1, Arc::from(vec![1u8; 4]), 4);
        cache.put(2, Arc::from(vec![2u8; 4]), 4);
        assert_eq!(cache.bytes(), 8);
        cache.put(3, Arc::from(vec![3u8; 5]), 5);
        assert!(cache.get(1).is_none());
        assert!(cache.get(2).is_some());
        assert_eq!(cache.get(3).as_deref(), Some(&[3u8; 5][..]));
        assert_eq!(cache.bytes(), 9);
        cache.put(4, Arc::from(vec![4u8; 5]), 5);
        assert!(cache.get(2).is_none());
        assert!(cache.get(3).is_some() && cache.get(4).is_some());
        assert_eq!(cache.bytes(), 10);
    }

    #[test]
    fn a_kept_key_keeps_its_first_value_and_an_oversized_value_is_not_kept() {
        let cache = SharedCache::<u32, [u8]>::new(10);
        cache.put(1, Arc::from(vec![1u8; 4]), 4);
        cache.put(1, Arc::from(vec![9u8; 6]), 6);
        assert_eq!(cache.get(1).as_deref(), Some(&[1u8; 4][..]));
        assert_eq!(cache.bytes(), 4);
        assert!(cache.fits(10) && !cache.fits(11));
        cache.put(2, Arc::from(vec![2u8; 11]), 11);
        assert!(cache.get(2).is_none());
        assert_eq!(cache.bytes(), 4);
    }
}
