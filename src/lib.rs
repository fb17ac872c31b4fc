//! boardcast: electronic chess boards in, a live tournament feed out.
pub mod alert;
pub mod capture;
pub mod config;
pub mod event;
pub mod game;
pub mod lichess;
pub mod names;
pub mod operator;
pub mod protocol;
pub mod publish;
pub mod reconstruct;
pub mod replay;
pub mod sensor;
pub mod session;
pub mod shell;
pub mod synth;
pub mod time;
