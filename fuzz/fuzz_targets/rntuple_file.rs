#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| evtc::fuzzing::rntuple_file(data));
