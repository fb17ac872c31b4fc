//! A hall of several bridges seen from one console: a change for a board
//! of another bridge goes to that bridge as `boardcast ctl` sends it —
//! signed here with the operator key (which every bridge of the hall
//! shares), published on `<root>/v1/bridges/<id>/commands` of the hall
//! broker, and answered on that bridge's `replies`. [`send`] is that one
//! path for every command of the console, its own bridge's included; an
//! assignment of another bridge's board travels as the `assign_board`
//! command ([`assignment`]), which that bridge turns back into the board
//! of its state file ([`assigned_board`]).

use boardcast_core::{
    operator::{Assignment, Command},
    publish::topics::Topics,
};

use super::{Commander, REPLY_TIMEOUT};
use crate::{
    config::AssignedBoard,
    shell::mqtt::{ask, client::connect_options, mosquitto},
};

/// What became of a command sent to a bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sent {
    /// `done`, `refused` or `no_answer`.
    pub status: &'static str,
    /// The bridge's words (what was done, or why not), or why no answer
    /// came.
    pub reason: String,
}

/// Signs `command` for `board` as `account`'s and sends it to `bridge`;
/// the bridge's answer, or why none came within [`REPLY_TIMEOUT`].
pub async fn send(commander: &Commander, bridge: &str, board: &str, command: &Command, account: &str) -> Sent {
    let refused = |reason: String| Sent { status: "refused", reason };
    let topics = Topics::new(&commander.root, bridge);
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let nonce = mosquitto::random::<8>().map(|b| mosquitto::hex(&b)).unwrap_or_default();
    let id = format!("console-{account}-{now_ms}-{nonce}");
    let request = match ask::signed_request(&commander.key, &id, board, now_ms, command) {
        Ok(request) => request,
        Err(e) => return refused(e.to_string()),
    };
    let options = connect_options(
        &commander.broker,
        &format!("boardcast-console-{nonce}"),
        commander.credentials.as_ref(),
        std::time::Duration::from_secs(5),
    );
    match tokio::time::timeout(REPLY_TIMEOUT, ask::ask(options, &topics, &id, request)).await {
        Ok(Ok(reply)) => {
            let reason = reply["message"].as_str().unwrap_or_default().to_owned();
            if reply["ok"] == true { Sent { status: "done", reason } } else { refused(key_refused(bridge, reason)) }
        }
        Ok(Err(e)) => Sent { status: "no_answer", reason: format!("the broker {}: {e}", commander.broker.url) },
        Err(_) => Sent {
            status: "no_answer",
            reason: format!(
                "no answer from the bridge {bridge:?} within {} s (is its daemon running on this broker, with this operator key?)",
                REPLY_TIMEOUT.as_secs()
            ),
        },
    }
}

/// The words the bridge guard uses for a MAC made with another key.
const OTHER_KEY: &str = "not signed with this daemon's operator key";

/// A bridge's refusal as the console shows it: a signature refused (the
/// bridge has another operator key than the console's daemon) says which
/// bridge, and how the hall shares one key; any other refusal as it came.
fn key_refused(bridge: &str, reason: String) -> String {
    if !reason.contains(OTHER_KEY) {
        return reason;
    }
    format!(
        "the bridge {bridge:?} refused the signature: its operator key is not the one this console's daemon signs with \
         (every bridge of the hall must have the same key). Copy this daemon's [operator] key_file to {bridge}'s \
         key_file and restart {bridge}'s daemon (docs/service.md, \"One console for the hall\"); nothing was changed there"
    )
}

/// The `assign_board` command that asks another bridge to read `board`.
pub fn assignment(board: &AssignedBoard, by: &str) -> Command {
    Command::AssignBoard(Box::new(Assignment {
        family: board.protocol.clone(),
        port: board.port.as_ref().map(|p| p.display().to_string()),
        serial: board.serial.clone(),
        label: board.board.clone().unwrap_or_else(|| board.name.clone()),
        white: board.white.clone(),
        black: board.black.clone(),
        by: Some(by.to_owned()),
    }))
}

/// The board an `assign_board` command for `name` asks this bridge to
/// read, and who asked; `None` for any other command.
pub fn assigned_board(name: &str, command: &Command) -> Option<(AssignedBoard, String)> {
    let Command::AssignBoard(assignment) = command else { return None };
    let Assignment { family, port, serial, label, white, black, by } = assignment.as_ref();
    // As from this bridge's own console: a board that tells its serial
    // number is kept by it, the others by their port.
    let (port, serial) = match serial {
        Some(serial) => (None, Some(serial.clone())),
        None => (port.as_ref().map(Into::into), None),
    };
    let board = AssignedBoard {
        name: name.to_owned(),
        protocol: family.clone(),
        port,
        serial,
        board: Some(label.clone()),
        white: white.clone(),
        black: black.clone(),
        assigned: None,
    };
    let by = by.as_deref().map_or_else(|| "a signed command".to_owned(), |by| format!("{by} (a console of the hall)"));
    Some((board, by))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_refused_says_which_bridge_and_how_to_share_the_key() {
        let said = key_refused("hall-b", format!("{OTHER_KEY} ([operator] key_file; docs/operator.md)"));
        assert!(said.contains("\"hall-b\" refused the signature"), "{said}");
        assert!(said.contains("Copy this daemon's [operator] key_file to hall-b's key_file"), "{said}");
        assert_eq!(key_refused("hall-b", "board b9 is not here".into()), "board b9 is not here");
    }

    #[test]
    fn an_assignment_reaches_the_other_bridge_as_the_board_its_state_file_keeps() {
        let board = AssignedBoard {
            name: "mil7".into(),
            protocol: "millennium".into(),
            port: Some("/dev/ttyACM3".into()),
            serial: None,
            board: Some("7".into()),
            white: Some("Carlsen, Magnus".into()),
            black: None,
            assigned: None,
        };
        let command = assignment(&board, "op");
        let carried = Command::from_json(serde_json::to_value(&command).unwrap()).unwrap();
        let (back, by) = assigned_board("mil7", &carried).unwrap();
        assert_eq!(back, board);
        assert_eq!(by, "op (a console of the hall)");
        assert_eq!(assigned_board("mil7", &Command::Flip), None);
    }
}
