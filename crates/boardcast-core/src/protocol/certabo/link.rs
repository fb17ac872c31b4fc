//! The host's side of a board that streams its reports by itself
//! (Certabo, Sentio), sans-I/O: silence detection and LEDs.
//!
//! Such a board needs nothing at connection and no keep-alive: it sends a
//! report several times a second whatever happens. A board that stops
//! streaming for `silent_after` is therefore gone (unplugged, powered
//! down, hung) and is reported silent so that the shell reconnects.
//!
//! LEDs (Certabo only; a Sentio-format board has none here): the classic
//! board takes 8 bytes, one per rank from rank 8, bit 0 the a-file. A board
//! that announced RGB LEDs (its `D` marker) takes `FF 55`, 81 × 3 colour
//! bytes for the 9 × 9 LEDs at the square corners, and `0D 0A`. Squares to
//! put right blink (half a second on, half off); the last move's squares
//! are lit steadily (green on an RGB board, blinking ones red). A frame is
//! sent only when it differs from the last one sent, and again after a
//! reconnection (the board may have lost it).

use std::{collections::VecDeque, time::Duration};

use shakmaty::{Bitboard, Square};

use super::line::{Leds, RGB_LEDS};
use crate::protocol::{BoardLink, Leds as LedControl};
use crate::{
    protocol::{
        BoardInfo, Decoded, Lights,
        link::{
            settings::{LinkConfig, LinkEvent},
            watchdog::{Watch, Watchdog},
        },
    },
    sensor::SensorEvent,
    time::Timestamp,
};

/// How long blinking squares stay lit, and dark.
pub(crate) const BLINK: Duration = Duration::from_millis(500);

/// The host side of one streaming board connection.
#[derive(Clone, Debug)]
pub struct StreamLink {
    /// Whether the board has LEDs (a Certabo board; not an occupancy board
    /// in the Sentio format).
    has_leds: bool,
    config: LinkConfig,
    connected: bool,
    /// Notices a board that went quiet (it streams: it is never asked).
    watchdog: Watchdog,
    /// A report was understood since the connection opened.
    identified: bool,
    /// The LED hardware, once the board announced RGB LEDs.
    leds: Leds,
    /// What the lights should show.
    lights: Lights,
    /// Blinking squares are lit now.
    blink_on: bool,
    /// When blinking squares go on or off next (while any blink).
    next_blink: Option<Timestamp>,
    /// Squares began to blink and the link has not seen the time since:
    /// the first toggle is set from the next time it gets.
    blink_started: bool,
    /// The frame last sent (or assumed: all dark after connecting).
    sent: Option<Vec<u8>>,
    events: VecDeque<LinkEvent>,
}

impl StreamLink {
    /// A link that is not connected yet, to a board with LEDs or without.
    pub fn new(has_leds: bool, config: LinkConfig) -> Self {
        Self {
            has_leds,
            config,
            connected: false,
            watchdog: Watchdog::new(false),
            identified: false,
            leds: Leds::Classic,
            lights: Lights::default(),
            blink_on: true,
            next_blink: None,
            blink_started: false,
            sent: None,
            events: VecDeque::new(),
        }
    }

    fn time_seen(&mut self, now: Timestamp) {
        if self.blink_started {
            self.blink_started = false;
            self.next_blink = Some(now + BLINK);
        }
    }

    const fn has_leds(&self) -> bool {
        self.has_leds
    }
}

/// The LED frame for `lights`.
fn frame(leds: Leds, lights: &Lights, blink_on: bool) -> Vec<u8> {
    let blinking = if blink_on { lights.blinking } else { Bitboard::EMPTY };
    match leds {
        Leds::Classic => classic_frame(lights.steady | blinking),
        Leds::Rgb => rgb_frame(lights.steady, blinking),
    }
}

/// The classic frame: byte 0 is rank 8 … byte 7 rank 1, bit 0 the a-file;
/// that is the bitboard (a1 = bit 0) written big-endian.
pub(crate) fn classic_frame(lit: Bitboard) -> Vec<u8> {
    lit.0.to_be_bytes().to_vec()
}

/// The colour of steadily lit squares on an RGB board.
const STEADY_RGB: [u8; 3] = [0, 255, 0];
/// The colour of squares to put right.
const BLINK_RGB: [u8; 3] = [255, 0, 0];

/// The RGB frame: `FF 55`, then 81 LEDs (a 9 × 9 grid of square corners,
/// row 0 along the rank-8 edge, column 0 along the a-file edge) of three
/// bytes R, G, B, then `0D 0A`. A square lights its four corners; where a
/// corner is shared, a square to put right wins.
///
/// The grid's orientation is taken from one open-source driver and not
/// checked on hardware.
pub(crate) fn rgb_frame(steady: Bitboard, blinking: Bitboard) -> Vec<u8> {
    let mut leds = [[0u8; 3]; 81];
    for (squares, colour) in [(steady, STEADY_RGB), (blinking, BLINK_RGB)] {
        for square in squares {
            for corner in corners(square) {
                leds[corner] = colour;
            }
        }
    }
    let mut out = Vec::with_capacity(2 + 81 * 3 + 2);
    out.extend_from_slice(&[0xFF, 0x55]);
    out.extend(leds.iter().flatten());
    out.extend_from_slice(&[0x0D, 0x0A]);
    out
}

/// The LED indices of a square's corners.
fn corners(square: Square) -> [usize; 4] {
    let row = 7 - usize::from(square.rank());
    let col = usize::from(square.file());
    [row * 9 + col, row * 9 + col + 1, (row + 1) * 9 + col, (row + 1) * 9 + col + 1]
}

impl LedControl for StreamLink {
    /// What the board's LEDs should show (in the board's orientation).
    /// Blinking starts lit, so that a square to put right shows at once.
    fn show(&mut self, lights: &Lights) {
        if !self.has_leds() || *lights == self.lights {
            return;
        }
        let started = self.lights.blinking.is_empty() && !lights.blinking.is_empty();
        self.lights = *lights;
        if lights.blinking.is_empty() {
            self.next_blink = None;
            self.blink_started = false;
            self.blink_on = true;
        } else if started {
            // `show` is called without the time; the first toggle is set
            // half a second after the next time the link gets (within a
            // report's interval), never in the past.
            self.blink_on = true;
            self.next_blink = None;
            self.blink_started = true;
        }
    }
}

impl BoardLink for StreamLink {
    /// A Certabo board has LEDs; an occupancy board in the Sentio format
    /// has none.
    fn leds_mut(&mut self) -> Option<&mut dyn LedControl> {
        if self.has_leds() { Some(self) } else { None }
    }

    /// The port is open. Nothing is sent: the board streams by itself.
    fn handle_connected(&mut self, now: Timestamp) {
        self.connected = true;
        self.watchdog.handle_rx(now);
        self.identified = false;
        // A board comes up dark; lights already wanted are sent again.
        self.sent = Some(frame(self.leds, &Lights::default(), false));
        if !self.lights.blinking.is_empty() {
            self.blink_on = true;
            self.next_blink = Some(now + BLINK);
            self.blink_started = false;
        }
    }

    /// The port closed.
    fn handle_disconnected(&mut self) {
        self.connected = false;
    }

    /// Bytes arrived.
    fn handle_rx(&mut self, now: Timestamp) {
        self.watchdog.handle_rx(now);
        self.time_seen(now);
    }

    /// The decoder made sense of something, or reported lost bytes.
    fn handle_decoded(&mut self, now: Timestamp, decoded: &Decoded) {
        self.time_seen(now);
        match decoded {
            Decoded::Sensor(SensorEvent::Board(_)) if !self.identified => {
                // A streaming board does not say who it is; a report it
                // sends is all there is to know.
                self.identified = true;
                self.events.push_back(LinkEvent::Identified { serial: None, version: None });
            }
            Decoded::Info(BoardInfo::Trademark(text)) if text == RGB_LEDS => self.leds = Leds::Rgb,
            _ => {}
        }
    }

    /// Acts on deadlines that have come.
    fn handle_timeout(&mut self, now: Timestamp) {
        if !self.connected {
            return;
        }
        self.time_seen(now);
        if self.watchdog.handle_timeout(now, &self.config) == Some(Watch::Silent) {
            self.events.push_back(LinkEvent::Silent);
        }
        if let Some(at) = self.next_blink
            && at <= now
        {
            self.blink_on = !self.blink_on;
            self.next_blink = Some(now + BLINK);
        }
    }

    /// The next bytes to send (an LED frame), if any.
    fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        if !self.connected || !self.has_leds() {
            return None;
        }
        self.time_seen(now);
        let frame = frame(self.leds, &self.lights, self.blink_on);
        if self.sent.as_ref() == Some(&frame) {
            return None;
        }
        self.sent = Some(frame.clone());
        Some(frame)
    }

    /// When to call [`StreamLink::handle_timeout`] next.
    fn poll_timeout(&self) -> Option<Timestamp> {
        if !self.connected {
            return None;
        }
        let silence = self.watchdog.poll_timeout(&self.config);
        Some(self.next_blink.map_or(silence, |blink| blink.min(silence)))
    }

    /// The next thing to report.
    fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    fn sent(link: &mut StreamLink, now: Timestamp) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| link.poll_transmit(now)).collect()
    }

    fn squares(list: &[Square]) -> Bitboard {
        list.iter().copied().collect()
    }

    fn board_seen() -> Decoded {
        Decoded::Sensor(SensorEvent::Board(Box::default()))
    }

    #[test]
    fn sends_nothing_at_connection_and_reports_a_board_that_stops_streaming() {
        let mut link = StreamLink::new(true, LinkConfig::default());
        link.handle_connected(ms(0));
        assert_eq!(sent(&mut link, ms(0)), Vec::<Vec<u8>>::new());
        link.handle_rx(ms(100));
        link.handle_decoded(ms(100), &board_seen());
        link.handle_decoded(ms(200), &board_seen());
        assert_eq!(link.poll_event(), Some(LinkEvent::Identified { serial: None, version: None }));
        assert_eq!(link.poll_event(), None, "identified once");
        assert_eq!(link.poll_timeout(), Some(ms(6100)));
        link.handle_timeout(ms(6000));
        assert_eq!(link.poll_event(), None);
        link.handle_timeout(ms(6100));
        assert_eq!(link.poll_event(), Some(LinkEvent::Silent));
        assert_eq!(link.poll_event(), None);
    }

    #[test]
    fn lights_squares_with_the_classic_frame_only_when_they_change() {
        let mut link = StreamLink::new(true, LinkConfig::default());
        link.handle_connected(ms(0));
        let lights = Lights { steady: squares(&[Square::D2, Square::D4]), blinking: Bitboard::EMPTY };
        link.show(&lights);
        assert_eq!(sent(&mut link, ms(10)), [vec![0, 0, 0, 0, 0x08, 0, 0x08, 0]]);
        link.show(&lights);
        assert_eq!(sent(&mut link, ms(20)), Vec::<Vec<u8>>::new());
        link.show(&Lights::default());
        assert_eq!(sent(&mut link, ms(30)), [vec![0; 8]]);
        // After a reconnection the board is dark: the lights go again.
        link.show(&Lights { steady: squares(&[Square::A8, Square::H1]), blinking: Bitboard::EMPTY });
        link.handle_disconnected();
        assert_eq!(sent(&mut link, ms(40)), Vec::<Vec<u8>>::new(), "nothing while disconnected");
        link.handle_connected(ms(50));
        assert_eq!(sent(&mut link, ms(50)), [vec![0x01, 0, 0, 0, 0, 0, 0, 0x80]]);
    }

    #[test]
    fn blinks_squares_to_put_right() {
        let mut link = StreamLink::new(true, LinkConfig::default());
        link.handle_connected(ms(0));
        link.handle_rx(ms(1000));
        link.show(&Lights { steady: squares(&[Square::E2]), blinking: squares(&[Square::E4]) });
        assert_eq!(sent(&mut link, ms(1000)), [vec![0, 0, 0, 0, 0x10, 0, 0x10, 0]], "lit at once");
        assert_eq!(link.poll_timeout(), Some(ms(1500)));
        link.handle_timeout(ms(1500));
        assert_eq!(sent(&mut link, ms(1500)), [vec![0, 0, 0, 0, 0, 0, 0x10, 0]], "dark");
        link.handle_timeout(ms(2000));
        assert_eq!(sent(&mut link, ms(2000)), [vec![0, 0, 0, 0, 0x10, 0, 0x10, 0]], "lit again");
        link.show(&Lights { steady: squares(&[Square::E2]), blinking: Bitboard::EMPTY });
        assert_eq!(sent(&mut link, ms(2100)), [vec![0, 0, 0, 0, 0, 0, 0x10, 0]]);
        assert_eq!(link.poll_timeout(), Some(ms(7000)), "no more blinking: only the silence watch");
    }

    #[test]
    fn uses_rgb_frames_once_the_board_announces_rgb_leds() {
        let mut link = StreamLink::new(true, LinkConfig::default());
        link.handle_connected(ms(0));
        link.handle_decoded(ms(0), &Decoded::Info(BoardInfo::Trademark(RGB_LEDS.into())));
        link.show(&Lights { steady: squares(&[Square::A8]), blinking: squares(&[Square::H1]) });
        let [frame] = sent(&mut link, ms(10)).try_into().unwrap();
        assert_eq!(frame.len(), 247);
        assert_eq!((&frame[..2], &frame[245..]), (&[0xFF, 0x55][..], &[0x0D, 0x0A][..]));
        let led = |i: usize| &frame[2 + i * 3..5 + i * 3];
        for corner in [0, 1, 9, 10] {
            assert_eq!(led(corner), [0, 255, 0], "a8's corner {corner}");
        }
        for corner in [70, 71, 79, 80] {
            assert_eq!(led(corner), [255, 0, 0], "h1's corner {corner}");
        }
        assert_eq!(frame[2..].iter().filter(|&&b| b != 0).count(), 8 + 2, "eight LEDs lit, and the frame's end");
    }

    #[test]
    fn a_sentio_board_gets_no_led_frames() {
        let mut link = StreamLink::new(false, LinkConfig::default());
        link.handle_connected(ms(0));
        link.show(&Lights { steady: squares(&[Square::E4]), blinking: squares(&[Square::E5]) });
        assert_eq!(sent(&mut link, ms(10)), Vec::<Vec<u8>>::new());
        assert_eq!(link.poll_timeout(), Some(ms(6000)), "no blinking either");
    }
}
