//! Reporting whole positions, for the boards that send their whole board
//! (Chessnut, iChessOne, ChessUp): a position is reported only when it
//! changed, as the squares that changed, in the order they are taken to
//! have changed, then the whole [`Picture`] (as the Certabo decoder does).
//! After lost bytes the next position is reported whole, changed or not,
//! which tells the reconstructor the picture is whole again.

//!
//! [`PositionDecoder`] is the one decoder those families share: their
//! framer, what each framed item means, and what was reported. Each
//! family's decoder type wraps one and says only how it starts
//! ([`WholePositions`]).

use shakmaty::Square;

use super::{
    BoardDecoder, Decoded,
    queue::{Framing, Out, Queue},
};
use crate::sensor::{Cell, Picture, SensorEvent};

/// What a family makes of a framed item: a position reported through
/// [`Positions::report`], something else pushed to the output, or lost
/// bytes ([`Positions::lost`] and a problem).
pub(crate) type Meaning<Item> = fn(&mut Positions, Item, &mut Out);

/// A decoder for a family that sends whole positions.
#[derive(Clone, Debug)]
pub(crate) struct PositionDecoder<F: Framing> {
    queue: Queue<F>,
    positions: Positions,
    meaning: Meaning<F::Item>,
}

impl<F: Framing> PositionDecoder<F> {
    /// A decoder at the start of a stream.
    pub(crate) fn new(framer: F, meaning: Meaning<F::Item>) -> Self {
        Self { queue: Queue::new(framer), positions: Positions::default(), meaning }
    }
}

/// A family's decoder type, which is a [`PositionDecoder`] (the one
/// [`BoardDecoder`] they share).
pub(crate) trait WholePositions: std::fmt::Debug + Send {
    /// The family's framer.
    type Framer: Framing;

    /// The decoder inside.
    fn decoder(&mut self) -> &mut PositionDecoder<Self::Framer>;
}

impl<T: WholePositions> BoardDecoder for T {
    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.decoder().queue.push(bytes);
    }

    fn poll_decoded(&mut self) -> Option<Decoded> {
        let PositionDecoder { queue, positions, meaning } = self.decoder();
        queue.poll(|item, out| meaning(positions, item, out))
    }

    /// Ends the stream, reporting a message left unfinished; the next
    /// position is reported whole.
    fn finish(&mut self) -> Option<Decoded> {
        let decoder = self.decoder();
        decoder.positions.lost();
        decoder.queue.finish("a message cut off by the end of the stream")
    }
}

/// What was reported so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct Positions {
    /// The position last reported.
    shown: Option<Picture>,
    /// Report the next position even if unchanged (bytes were lost).
    refresh: bool,
}

impl Positions {
    /// A position the board sent: reported if it changed.
    pub(crate) fn report(&mut self, picture: Picture, out: &mut Out) {
        if !self.refresh && self.shown.as_ref() == Some(&picture) {
            return;
        }
        if let Some(shown) = self.shown.as_ref().filter(|_| !self.refresh) {
            for square in changes_in_order(shown, &picture).unwrap_or_default() {
                let cell = picture.get(square);
                out.push_back(Decoded::Sensor(SensorEvent::Square { square, cell }));
            }
        }
        self.refresh = false;
        self.shown = Some(picture.clone());
        out.push_back(Decoded::Sensor(SensorEvent::Board(Box::new(picture))));
    }

    /// Bytes were lost: the next position is reported whole.
    pub(crate) const fn lost(&mut self) {
        self.refresh = true;
    }
}

/// The squares that changed between two positions, in the order they are
/// taken to have changed, so that the reconstructor sees each move happen
/// (a whole position alone is judged only once the board is still, which
/// a quick reply may not leave it). The board names its pieces, which tell
/// which piece went where. First the squares filled by a piece not seen
/// leaving a square (one lifted earlier, now put down: the end of
/// something under way); then each piece that moved, its square emptied
/// and then the one it went to; last the squares emptied by pieces not
/// seen elsewhere (taken in hand: the start of something).
///
/// `None` when pieces of both colours moved: two moves whose order the
/// position cannot tell. The position then goes alone, and the
/// reconstructor fills in the moves from the game (rules.md R10).
fn changes_in_order(before: &Picture, after: &Picture) -> Option<Vec<Square>> {
    let (emptied, mut filled): (Vec<Square>, Vec<Square>) = Square::ALL
        .into_iter()
        .filter(|&square| before.get(square) != after.get(square))
        .partition(|&square| after.get(square) == Cell::Empty);
    let mut moved = Vec::new();
    let mut lifted = Vec::new();
    for from in emptied {
        let piece = before.get(from);
        match filled.iter().position(|&to| after.get(to) == piece && before.get(to) != piece) {
            Some(at) => moved.extend([from, filled.remove(at)]),
            None => lifted.push(from),
        }
    }
    let mut colours = moved.iter().step_by(2).filter_map(|&from| before.get(from).piece().map(|p| p.color));
    if let Some(first) = colours.next()
        && colours.any(|c| c != first)
    {
        return None;
    }
    Some(filled.into_iter().chain(moved).chain(lifted).collect())
}
