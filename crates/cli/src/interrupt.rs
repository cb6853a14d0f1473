//! Ctrl-C and SIGTERM: the first one raises a flag that long-running commands check between
//! chunks of work (so that they stop cleanly, leaving nothing or a partial file they were asked
//! to keep); a second one ends the process at once. Unfinished output is an unnamed file on
//! Linux, so even then nothing is left behind.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The flag raised by the first SIGINT or SIGTERM; installs the handlers on first use.
pub fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        install();
        flag
    })
    .clone()
}

#[cfg(unix)]
fn install() {
    extern "C" fn on_signal(_: libc::c_int) {
        // Only async-signal-safe work: an atomic swap, and _exit on the second signal.
        if let Some(flag) = FLAG.get() {
            if flag.swap(true, Ordering::SeqCst) {
                // SAFETY: _exit is async-signal-safe and takes no pointers.
                unsafe { libc::_exit(130) };
            }
        } else {
            // SAFETY: as above.
            unsafe { libc::_exit(130) };
        }
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only touches an atomic and calls _exit; `signal` installs it
        // for a valid signal number.
        unsafe {
            libc::signal(signal, on_signal as *const () as libc::sighandler_t);
        }
    }
}

#[cfg(not(unix))]
fn install() {}

#[cfg(test)]
mod tests {
    #[test]
    fn the_flag_is_shared() {
        let a = super::flag();
        let b = super::flag();
        assert!(std::sync::Arc::ptr_eq(&a, &b));
    }
}
