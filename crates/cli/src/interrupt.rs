//! Ctrl-C and SIGTERM: the first one raises a flag that long-running commands check between
//! chunks of work (so that they stop cleanly, leaving nothing or a partial file they were asked
//! to keep); a second one ends the process at once. Unfinished output is an unnamed file on
//! Linux, so even then nothing is left behind.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The flag raised by the first SIGINT or SIGTERM; installs the handlers on first use.
pub fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        install(&flag);
        flag
    })
    .clone()
}

/// Registers the flag for SIGINT and SIGTERM, and an exit with status 130 for a signal that
/// finds it raised already (signal-hook's handlers do only async-signal-safe work).
fn install(flag: &Arc<AtomicBool>) {
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Registered first, so that it sees the flag as the previous signal left it.
        let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, flag.clone());
        let _ = signal_hook::flag::register(signal, flag.clone());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_flag_is_shared() {
        let a = super::flag();
        let b = super::flag();
        assert!(std::sync::Arc::ptr_eq(&a, &b));
    }
}
