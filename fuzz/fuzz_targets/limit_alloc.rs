//! The targets' global allocator: the system's, except that any single allocation over 512 MiB
//! aborts, which libFuzzer reports as a crash and keeps the input of. libFuzzer's own
//! `-malloc_limit_mb` needs a sanitizer's malloc hooks; this limit holds without one too
//! (`cargo fuzz run -s none`, several times faster), so that a size taken unchecked from the
//! input is a crash in every build, not a slow success.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;

/// The largest single allocation a target may make, in bytes.
const LIMIT: usize = 512 << 20;

/// The system allocator with the [`LIMIT`] on each request.
pub struct Limited;

fn check(size: usize) {
    if size > LIMIT {
        // stderr is unbuffered: writing a static message allocates nothing.
        let _ = std::io::stderr().write_all(b"==limit_alloc== an allocation over 512 MiB\n");
        std::process::abort();
    }
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds `GlobalAlloc`'s contract;
// the check before it only aborts.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}
