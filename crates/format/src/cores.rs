//! The number of cores, asked once per process.

/// The cores this process may use (`std::thread::available_parallelism`, at least 1), asked
/// once: the standard library reads the cgroup files under `/proc` at each call, which was a
/// third of the time of opening a small file.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
