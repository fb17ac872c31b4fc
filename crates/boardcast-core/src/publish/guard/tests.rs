//! The commands gate, case by case, and a property: no change to a valid
//! envelope gets through unless it still says exactly the same thing.

use proptest::prelude::*;

use super::*;
use crate::operator::Command;

const NOW: i64 = 1_795_259_698_000;

fn key() -> OperatorKey {
    OperatorKey::from_bytes([7; 32])
}

fn envelope(id: &str, ts_ms: i64) -> Vec<u8> {
    seal(&key(), &request_json(id, "b1", ts_ms, &Command::TakeBack))
}

fn refused(verdict: Verdict) -> Refusal {
    match verdict {
        Verdict::Refuse(refusal) => refusal,
        other => panic!("refused, not {other:?}"),
    }
}

#[test]
fn a_signed_fresh_request_is_applied_once() {
    let mut guard = Guard::new(key());
    let message = envelope("c1", NOW - 1000);
    assert_eq!(
        guard.handle_message(NOW, &message, false),
        Verdict::Apply(Request { id: "c1".into(), board: "b1".into(), command: Command::TakeBack })
    );
    let again = refused(guard.handle_message(NOW + 5, &message, false));
    assert!(again.reason.contains("already received (a replay)"), "{again:?}");
    assert_eq!((again.id.as_str(), again.board.as_str(), again.answer), ("c1", "b1", true));
}

#[test]
fn every_refusal_says_why() {
    let mut guard = Guard::new(key());
    let mut why = |payload: &[u8]| refused(guard.handle_message(NOW, payload, false)).reason;
    assert!(why(br#"{"id": "x", "board": "b1", "command": "take_back", "ts_ms": 1}"#).contains("not a signed command"));
    assert!(why(b"\xff\xfe").contains("not a signed command"));
    let wrong = seal(&OperatorKey::from_bytes([8; 32]), &request_json("w", "b1", NOW, &Command::Flip));
    assert!(why(&wrong).contains("not signed with this daemon's operator key"));
    let stale = envelope("s", NOW - MAX_AGE_MS - 1000);
    assert!(why(&stale).contains("301 s old"), "{}", why(&stale));
    let future = envelope("f", NOW + MAX_FUTURE_MS + 1000);
    assert!(why(&future).contains("31 s in the future"), "{}", why(&future));
    let untimed = seal(&key(), r#"{"id": "u", "board": "b1", "command": "flip"}"#);
    assert!(why(&untimed).contains("no \"ts_ms\""));
    let anonymous = seal(&key(), &format!(r#"{{"board": "b1", "command": "flip", "ts_ms": {NOW}}}"#));
    assert!(why(&anonymous).contains("no \"id\""));
    let long_id = envelope(&"i".repeat(MAX_ID_CHARS + 1), NOW);
    assert!(why(&long_id).contains("no \"id\""));
    let unknown = seal(&key(), &format!(r#"{{"id": "k", "board": "b1", "command": "resign", "ts_ms": {NOW}}}"#));
    assert!(why(&unknown).contains("unknown variant"));
    let mut big = b"{\"signed\": \"".to_vec();
    big.resize(MAX_COMMAND_BYTES + 1, b' ');
    assert!(why(&big).contains("commands are at most 65536 bytes"));
    // Within the tolerated skew, both ways.
    assert!(matches!(guard.handle_message(NOW, &envelope("late", NOW - MAX_AGE_MS), false), Verdict::Apply(_)));
    assert!(matches!(guard.handle_message(NOW, &envelope("early", NOW + MAX_FUTURE_MS), false), Verdict::Apply(_)));
    assert_eq!(guard.handle_message(NOW, b"", false), Verdict::Ignore, "an empty message clears a retained one");
}

#[test]
fn a_retained_command_is_refused_cleared_and_answered_once() {
    let mut guard = Guard::new(key());
    let message = envelope("r", NOW);
    let first = refused(guard.handle_message(NOW, &message, true));
    assert!(first.reason.contains("retained") && first.clear_retained && first.answer, "{first:?}");
    assert_eq!(first.id, "r");
    let second = refused(guard.handle_message(NOW + 1000, &message, true));
    assert!(second.clear_retained && !second.answer, "{second:?}");
    // An unsigned retained message is cleared too.
    let unsigned = refused(guard.handle_message(NOW, br#"{"command": "flip"}"#, true));
    assert!(unsigned.clear_retained);
}

#[test]
fn ids_are_forgotten_only_once_they_could_not_pass_again() {
    let mut guard = Guard::new(key());
    for i in 0..30 {
        let now = NOW + i * 60_000;
        assert!(matches!(guard.handle_message(now, &envelope(&format!("m{i}"), now), false), Verdict::Apply(_)));
    }
    assert!(guard.remembered() <= 6, "ids older than the window are forgotten: {}", guard.remembered());
    // A replay just inside the window is still caught.
    let now = NOW + 40 * 60_000;
    let message = envelope("edge", now);
    assert!(matches!(guard.handle_message(now, &message, false), Verdict::Apply(_)));
    let later = now + MAX_AGE_MS;
    assert!(refused(guard.handle_message(later, &message, false)).reason.contains("a replay"));
}

#[test]
fn a_flood_is_refused_and_answered_once_then_the_bucket_refills() {
    let mut guard = Guard::new(key());
    let mut applied = 0;
    let mut answered = 0;
    for i in 0..200 {
        match guard.handle_message(NOW, &envelope(&format!("f{i}"), NOW), false) {
            Verdict::Apply(_) => applied += 1,
            Verdict::Refuse(refusal) => {
                assert!(refusal.reason.contains("commands a second"), "{refusal:?}");
                answered += usize::from(refusal.answer);
            }
            Verdict::Ignore => unreachable!(),
        }
    }
    assert_eq!((applied, answered), (BURST as usize, 1));
    // A second later, 20 more.
    let later = NOW + 1000;
    let passed = (0..100)
        .filter(|i| matches!(guard.handle_message(later, &envelope(&format!("g{i}"), later), false), Verdict::Apply(_)))
        .count();
    assert_eq!(passed, RATE_PER_S as usize);
    // Junk counts too: a stranger cannot make the daemon hash without end.
    let mut guard = Guard::new(key());
    let junk = (0..1000).filter(|_| refused(guard.handle_message(NOW, b"junk", false)).answer).count();
    assert_eq!(junk, BURST as usize + 1);
}

#[test]
fn key_files_are_one_line_of_lowercase_hex() {
    let key = OperatorKey::from_hex(&format!("{}\n", "ab".repeat(32))).unwrap();
    assert_eq!(key.to_hex(), "ab".repeat(32));
    assert!(OperatorKey::from_hex(&"AB".repeat(32)).is_err());
    let short = OperatorKey::from_hex("abc\n").unwrap_err();
    assert_eq!(short.found, "3 character(s) on 1 line(s)");
    let two = OperatorKey::from_hex(&format!("{}\n{}\n", "ab".repeat(32), "cd".repeat(32))).unwrap_err();
    assert!(!two.to_string().contains("abab"), "the error never echoes the key: {two}");
    assert_eq!(format!("{key:?}"), "OperatorKey(…)");
    // The documented MAC: HMAC-SHA256 over the exact string.
    let key = OperatorKey::from_bytes([0; 32]);
    assert_eq!(key.mac_hex(b"{}"), key.mac_hex(b"{}"));
    assert!(key.verify(b"{}", &key.mac_hex(b"{}")));
    assert!(!key.verify(b"{} ", &key.mac_hex(b"{}")));
    assert!(!key.verify(b"{}", &key.mac_hex(b"{}").to_uppercase()));
}

fn any_command() -> impl Strategy<Value = Command> {
    prop_oneof![
        Just(Command::TakeBack),
        Just(Command::Flip),
        "[0-9]{1,3}".prop_map(|round| Command::NextRound {
            round,
            tags: Default::default(),
            pairings: Default::default()
        }),
        ("[A-Za-z]{1,8}", "[ -~]{0,30}").prop_map(|(k, v)| Command::SetTags { tags: [(k, v)].into_iter().collect() }),
        prop::collection::vec("[a-hNBRQK][1-8x]{1,3}", 1..5).prop_map(|san| Command::Moves { san }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any change of bytes to a valid envelope is refused, unless the
    /// changed envelope still carries exactly the same request and MAC.
    #[test]
    fn no_mutation_of_a_valid_envelope_verifies(
        command in any_command(),
        id in "[a-z0-9-]{1,20}",
        changes in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..4),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let original = seal(&key(), &request_json(&id, "b1", NOW, &command));
        let mut mutated = original.clone();
        for (at, flip) in &changes {
            let i = at.index(mutated.len());
            mutated[i] ^= flip;
        }
        if let Some(cut) = cut {
            mutated.truncate(cut.index(mutated.len()));
        }
        let mut guard = Guard::new(key());
        if let Verdict::Apply(_) = guard.handle_message(NOW, &mutated, false) {
            let same: Envelope = serde_json::from_slice(&mutated).unwrap();
            let before: Envelope = serde_json::from_slice(&original).unwrap();
            prop_assert_eq!(same, before);
        }
    }

    /// Whatever arrives, the gate answers without panicking.
    #[test]
    fn any_bytes_are_judged(payload in prop::collection::vec(any::<u8>(), 0..300), retained: bool) {
        let mut guard = Guard::new(key());
        let _ = guard.handle_message(NOW, &payload, retained);
    }
}
