//! An assignment sent by a console of the hall (`assign_board`, signed like
//! every command): it goes to this bridge's assigner as one from its own
//! console would, and is checked, kept in this bridge's state file and
//! started the same way (`assign.rs`); the answer goes back on `replies`.
//! Its undoing (`unassign_board`, from any console of the hall, this
//! bridge's own included, and from `ctl`) goes the same way.

use tokio::sync::oneshot;
use tracing::{info, warn};

use boardcast::shell::console::{
    assign::{AssignRequest, Assigner, HallChange},
    bridges::assigned_board,
};
use boardcast_core::operator::Command;

/// Hands the assignment of `name` to `assigner` and waits for its answer.
pub(super) async fn assign(assigner: &Assigner, name: &str, command: &Command) -> Result<String, String> {
    let Some((board, by)) = assigned_board(name, command) else {
        return Err("not assign_board".into());
    };
    let (reply, answered) = oneshot::channel();
    if assigner.send(AssignRequest { change: HallChange::Assign(board), by: by.clone(), reply }).is_err() {
        return Err("the daemon is stopping".into());
    }
    let answer = answered.await.unwrap_or_else(|_| Err("the daemon is stopping".into()));
    match &answer {
        Ok(done) => info!("{by} assigned board {name}: {done}"),
        Err(why) => warn!("{by} was refused board {name}: {why}"),
    }
    answer
}

/// Hands the un-assignment of `name` to `assigner` and waits for its
/// answer.
pub(super) async fn unassign(assigner: &Assigner, name: &str, command: &Command) -> Result<String, String> {
    let Command::UnassignBoard { by } = command else {
        return Err("not unassign_board".into());
    };
    let by = by.clone().unwrap_or_else(|| "a signed command".to_owned());
    let (reply, answered) = oneshot::channel();
    let change = HallChange::Unassign(name.to_owned());
    if assigner.send(AssignRequest { change, by: by.clone(), reply }).is_err() {
        return Err("the daemon is stopping".into());
    }
    let answer = answered.await.unwrap_or_else(|_| Err("the daemon is stopping".into()));
    match &answer {
        Ok(done) => info!("{by}: {done}"),
        Err(why) => warn!("{by} was refused the un-assignment of board {name}: {why}"),
    }
    answer
}
