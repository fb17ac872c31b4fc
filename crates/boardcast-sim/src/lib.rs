//! Simulated smart boards and synthesized games, for the test suite, the
//! benchmarks and the `simulate`, `synth` and `demo` commands.
//!
//! - [`board`]: a board of each family, sans-I/O, answering the host's
//!   commands byte for byte as the real board does (`boardcast simulate`
//!   puts one behind a pseudo-terminal);
//! - [`synth`]: real games turned into what a board would report, with a
//!   hall's hands, noise and irregularities, and the labels the Laws
//!   expect;
//! - [`Rng`]: the deterministic random numbers both use, so that a stream
//!   is the same on every machine for the same seed.
//!
//! Nothing in the daemon's feed depends on this crate; it builds on
//! `boardcast-core` and never the other way round.
pub mod board;
mod rng;
pub mod synth;

pub use rng::Rng;
