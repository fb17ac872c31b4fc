//! The host's side of a connection to a live board, for every board
//! family: what to send after connecting, how to notice a board that went
//! quiet, what to show on its lights. Each family has its own sans-I/O link
//! (`dgt::link`, `millennium::link`, `certabo::link`), a
//! [`super::BoardLink`] its [`super::Family`] makes; what they share is
//! here: their settings and events, the keep-alive ([`watchdog`]) and the
//! whole-board request after lost bytes ([`retry`]).

pub(crate) mod retry;
pub(crate) mod settings;
pub(crate) mod watchdog;

pub use self::settings::{LinkConfig, LinkEvent};
