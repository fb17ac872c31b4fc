//! What the decoder property tests share: how many cases to run, and a
//! stream of bytes cut into the pieces a serial read may return.

use proptest::{sample::Index, test_runner::Config};

/// `cases` cases, or `PROPTEST_CASES`; failures are not persisted (the
/// seed is printed instead).
pub fn config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases);
    Config { failure_persistence: None, ..Config::with_cases(cases) }
}

/// Splits `bytes` at the given points (empty chunks included: a read may
/// return nothing).
pub fn split<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::with_capacity(points.len() + 1);
    let mut from = 0;
    for point in points {
        chunks.push(&bytes[from..point]);
        from = point;
    }
    chunks.push(&bytes[from..]);
    chunks
}
