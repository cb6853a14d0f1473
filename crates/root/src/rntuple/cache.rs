//! The decoded index columns an RNTuple's field readers share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The whole index columns of recent clusters, shared by the readers of an RNTuple's fields:
/// every field below a collection (`Muon.pt`, `Muon.eta`, ...) reads the collection's offsets,
/// which are then decoded once. Bounded: past [`IndexCache::BUDGET`] elements, the clusters
/// other than the one being stored are dropped.
#[derive(Debug, Default)]
pub(crate) struct IndexCache {
    columns: Mutex<HashMap<ColumnInCluster, Arc<Vec<u64>>>>,
}

/// A physical column's id and a cluster's number.
type ColumnInCluster = (u32, usize);

impl IndexCache {
    /// Elements kept at most (8 bytes each).
    const BUDGET: usize = 8 << 20;

    pub(crate) fn get(&self, column: u32, cluster: usize) -> Option<Arc<Vec<u64>>> {
        let map = self.columns.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&(column, cluster)).cloned()
    }

    pub(crate) fn put(&self, column: u32, cluster: usize, index: Arc<Vec<u64>>) {
        let mut map = self.columns.lock().unwrap_or_else(|e| e.into_inner());
        let held: usize = map.values().map(|v| v.len()).sum();
        if held + index.len() > Self::BUDGET {
            map.retain(|&(_, k), _| k == cluster);
            let held: usize = map.values().map(|v| v.len()).sum();
            if held + index.len() > Self::BUDGET {
                return;
            }
        }
        map.insert((column, cluster), index);
    }
}
