//! What the decoders built on a framer share: bytes go to the framer, each
//! framed item is turned into zero or more [`Decoded`] items, which wait in
//! a queue until polled. A decoder keeps its own state beside a [`Queue`]
//! and hands `poll` a function of that state, so that only the part that
//! differs (what an item means) is written per family.

use std::collections::VecDeque;

use super::{DecodeProblem, Decoded};

/// A family's framer: bytes in, items out once they are certain (the same
/// items however the bytes were split).
pub(crate) trait Framing {
    /// What the framer finds.
    type Item;

    /// Appends bytes received from the board.
    fn push(&mut self, bytes: &[u8]);

    /// The next complete item, or `None` when more bytes are needed.
    fn next_item(&mut self) -> Option<Self::Item>;

    /// Drops what is buffered (the end of a stream), returning how many
    /// bytes that was.
    fn flush(&mut self) -> Option<usize>;
}

/// Decoded items waiting to be polled.
pub(crate) type Out = VecDeque<Decoded>;

/// A framer and the items decoded from it not yet polled.
#[derive(Clone, Debug, Default)]
pub(crate) struct Queue<F> {
    framer: F,
    out: Out,
}

impl<F: Framing> Queue<F> {
    /// A queue over `framer`, nothing decoded yet.
    pub(crate) fn new(framer: F) -> Self {
        Self { framer, out: Out::new() }
    }

    /// Takes bytes received from the board.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.framer.push(bytes);
    }

    /// The next decoded item: one waiting, or else what `handle` makes of
    /// the next framed items; `None` when more bytes are needed.
    pub(crate) fn poll(&mut self, mut handle: impl FnMut(F::Item, &mut Out)) -> Option<Decoded> {
        loop {
            if let Some(decoded) = self.out.pop_front() {
                return Some(decoded);
            }
            let item = self.framer.next_item()?;
            handle(item, &mut self.out);
        }
    }

    /// Ends the stream: the bytes of a message left unfinished, reported
    /// as dropped for `reason`.
    pub(crate) fn finish(&mut self, reason: &'static str) -> Option<Decoded> {
        let len = self.framer.flush()?;
        Some(Decoded::Problem(DecodeProblem::Garbage { len, reason }))
    }
}
