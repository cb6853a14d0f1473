#![no_main]

#[path = "limit_alloc.rs"]
mod limit_alloc;

#[global_allocator]
static ALLOC: limit_alloc::Limited = limit_alloc::Limited;

libfuzzer_sys::fuzz_target!(|data: &[u8]| evtc::fuzzing::decode_block(data));
