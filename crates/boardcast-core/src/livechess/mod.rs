//! DGT LiveChess's local API and LiveChess Cloud's JSON, spoken by
//! boardcast (docs/livechess.md): the tools written for LiveChess (operator
//! helpers, online-play connectors, cloud viewers) then work with every
//! board family boardcast reads.
//!
//! Sans-I/O like the rest of the core: the daemon hands each board's
//! outputs to a [`board::BoardWatch`], whose snapshots go into the
//! [`hall::Hall`] that answers the REST paths; each WebSocket connection is
//! a [`socket::Connection`] (calls in, responses and feed messages out);
//! [`cloud`] shapes the delivered (delayed) rounds as LiveChess Cloud
//! serves them. The records are in [`records`], named and keyed as
//! LiveChess's clients read them; [`ids`] derives the stable UUIDs.

pub mod board;
pub mod cloud;
pub mod hall;
pub mod ids;
pub mod records;
pub mod socket;
