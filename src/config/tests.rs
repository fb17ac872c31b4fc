//! The configuration's rules, key by key.

use std::time::Duration;

use boardcast_core::{
    pair::{DEFAULT_DIVERGE_AFTER, PairSettings},
    protocol::dgt::display::{ClockDisplayMode, ClockDisplaySettings},
    publish::topics::BoardPath,
    reconstruct::ReconstructorConfig,
};

use super::{boards::live_families, *};

fn parse(extra: &str) -> Config {
    let text = format!("{DEFAULTS}\n{extra}");
    toml_like(&text)
}

/// The defaults file parsed the way the binary does (through serde).
fn toml_like(text: &str) -> Config {
    config::Config::builder()
        .add_source(config::File::from_str(text, config::FileFormat::Toml))
        .build()
        .unwrap()
        .try_deserialize()
        .unwrap()
}

#[test]
fn the_defaults_parse_and_match_the_built_in_settings() {
    let config = parse("");
    assert!(config.boards().unwrap().is_empty());
    assert_eq!(config.reconstructor().unwrap(), ReconstructorConfig::default());
    assert_eq!(config.link().unwrap(), boardcast_core::protocol::link::LinkConfig::default());
}

#[test]
fn boards_need_a_protocol_and_a_way_to_be_found() {
    let ok = parse("[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nserial = \"03921\"\n");
    assert_eq!(ok.boards().unwrap()[0].find, FindBoard::Serial("03921".into()));
    for (extra, message) in [
        ("[[boards]]\nname = \"b1\"\nprotocol = \"dgx\"\nport = \"/dev/x\"\n", "boards[0].protocol = \"dgx\": \"dgt\""),
        (
            "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\n",
            "boards[0].port = (missing): port = \"/dev/…\", serial = \"…\" (the board's serial number) or bluetooth",
        ),
        (
            "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\n[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\n",
            "boards[1].name = \"b1\": a name no other board has",
        ),
    ] {
        let error = parse(extra).boards().unwrap_err().to_string();
        assert!(error.starts_with(message), "{error}");
    }
}

#[test]
fn tls_files_are_checked_and_named_by_their_key() {
    let dir = std::env::temp_dir().join(format!("boardcast-config-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").unwrap();
    std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n").unwrap();
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let embedded = |c: &str, k: &str, broker: &str| {
        let mut config = parse("");
        config.mqtt.embedded.tls_cert_file = c.into();
        config.mqtt.embedded.tls_key_file = k.into();
        config.mqtt.embedded.broker = broker.into();
        config.mqtt()
    };
    let BrokerChoice::Embedded(e) = embedded(&cert, &key, "auto").unwrap().broker else { panic!() };
    assert_eq!(e.tls, Some(TlsFiles { cert_file: cert.clone().into(), key_file: key.clone().into() }));
    for (c, k, broker, message) in [
        (cert.as_str(), "", "auto", "mqtt.embedded.tls_key_file = \"\": the PEM file with the private key"),
        ("", key.as_str(), "auto", "mqtt.embedded.tls_cert_file = \"\": the PEM file with"),
        ("/nonexistent/cert.pem", key.as_str(), "auto", "mqtt.embedded.tls_cert_file = \"/nonexistent/cert.pem\""),
        (key.as_str(), key.as_str(), "auto", "has no \"-----BEGIN …CERTIFICATE-----\" block"),
        (cert.as_str(), cert.as_str(), "auto", "mqtt.embedded.tls_key_file"),
        (cert.as_str(), key.as_str(), "builtin", "mqtt.embedded.broker = \"builtin\": \"mosquitto\" or \"auto\""),
    ] {
        let error = embedded(c, k, broker).unwrap_err().to_string();
        assert!(error.contains(message), "{message}: {error}");
    }
    assert!(embedded("/nonexistent/cert.pem", &key, "auto").unwrap_err().to_string().contains("cannot be read"));

    let external = |url: &str, c: &str, k: &str| {
        let mut config = parse("");
        config.mqtt.url = url.into();
        config.mqtt.ca_file = cert.clone();
        config.mqtt.client_cert_file = c.into();
        config.mqtt.client_key_file = k.into();
        config.mqtt()
    };
    let BrokerChoice::External(b) = external("mqtts://hall:8883", &cert, &key).unwrap().broker else { panic!() };
    assert_eq!(b.client_auth, Some(TlsFiles { cert_file: cert.clone().into(), key_file: key.clone().into() }));
    let error = external("mqtt://hall:1883", &cert, &key).unwrap_err().to_string();
    assert!(error.starts_with("mqtt.client_cert_file = ") && error.contains("need mqtts:// or wss://"), "{error}");
    let error = external("wss://hall/mqtt", &cert, "/nonexistent/key.pem").unwrap_err().to_string();
    assert!(error.starts_with("mqtt.client_key_file = \"/nonexistent/key.pem\""), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn broker_urls_and_mqtt_settings_are_checked() {
    let defaults = parse("").mqtt().unwrap();
    assert_eq!(
        defaults.broker,
        BrokerChoice::Embedded(Embedded::on(
            "127.0.0.1:1883".parse().unwrap(),
            Some("127.0.0.1:8083".parse().unwrap())
        ))
    );
    let mut config = parse("");
    config.mqtt.embedded.broker = "rumqttd".into();
    assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.embedded.broker = \"rumqttd\": \"auto\""));
    let mut config = parse("");
    config.mqtt.embedded.memory_limit_mb = 0;
    assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.embedded.memory_limit_mb = 0: a number of MiB"));
    let mut config = parse("");
    config.mqtt.embedded.failed_logins_warn_per_min = 0;
    assert!(
        config.mqtt().unwrap_err().to_string().starts_with("mqtt.embedded.failed_logins_warn_per_min = 0: a number of")
    );
    let mut config = parse("");
    config.mqtt.embedded.anonymous = "all".into();
    assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.embedded.anonymous = \"all\""));
    // Anonymous live readers only on a broker no other machine reaches:
    // the WebSocket listener cannot tell a display from any other page.
    let live = |listen: &str, ws: &str| {
        let mut config = parse("");
        config.mqtt.embedded.anonymous = "live".into();
        config.mqtt.embedded.listen = listen.into();
        config.mqtt.embedded.ws_listen = ws.into();
        config.mqtt()
    };
    assert!(live("127.0.0.1:1883", "127.0.0.1:8083").is_ok());
    assert!(live("127.0.0.1:1883", "").is_ok());
    for (listen, ws, open) in
        [("127.0.0.1:1883", "0.0.0.0:8083", "0.0.0.0:8083"), ("10.0.0.2:1883", "", "10.0.0.2:1883")]
    {
        let said = live(listen, ws).unwrap_err().to_string();
        assert!(
            said.starts_with(&format!(
                "mqtt.embedded.anonymous = \"live\": \"public\" or \"none\" when the broker listens beyond this machine ({open})"
            )),
            "{said}"
        );
    }
    assert_eq!(defaults.languages.len(), 5);
    let url = |u: &str| {
        let mut config = parse("");
        config.mqtt.url = u.into();
        config.mqtt()
    };
    let BrokerChoice::External(broker) = url("mqtt://broker.hall:1884").unwrap().broker else { panic!() };
    assert_eq!((broker.scheme, broker.host.as_str(), broker.port), (Scheme::Mqtt, "broker.hall", 1884));
    let BrokerChoice::External(broker) = url("ws://10.0.0.2/mqtt").unwrap().broker else { panic!() };
    assert_eq!((broker.scheme, broker.port), (Scheme::Ws, 80));
    let BrokerChoice::External(broker) = url("mqtt://[::1]:1883").unwrap().broker else { panic!() };
    assert_eq!(broker.host, "::1");
    for (bad, message) in [
        ("broker.hall:1883", "mqtt.url = \"broker.hall:1883\": mqtt://host:port"),
        ("http://x", "mqtt.url = \"http://x\": mqtt://host:port"),
        ("mqtt://user:pw@x", "a URL without user name or password"),
        ("mqtt://x:99999", "a port number"),
    ] {
        let error = url(bad).unwrap_err().to_string();
        assert!(error.contains(message), "{error}");
    }
    let mut config = parse("");
    config.mqtt.url = "mqtts://x".into();
    config.mqtt.ca_file = "/nonexistent.pem".into();
    assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.ca_file = \"/nonexistent.pem\""));
    let mut config = parse("");
    config.mqtt.languages = vec!["en".into(), "es".into()];
    assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.languages = \"es\""));
    let mut config = parse("");
    config.mqtt.embedded.listen = "localhost".into();
    assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.embedded.listen = \"localhost\""));
}

#[test]
fn one_board_twice_is_refused_with_the_key() {
    let board = |name: &str, find: &str| format!("[[boards]]\nname = \"{name}\"\nprotocol = \"dgt\"\n{find}\n");
    for (text, message) in [
        (
            board("a", "port = \"/dev/ttyUSB0\"") + &board("b", "port = \"/dev/ttyUSB0\""),
            "boards[1].port = \"/dev/ttyUSB0\": a port no other board reads (board \"a\" reads it)",
        ),
        (
            board("a", "serial = \"3921\"") + &board("b", "serial = \"03921\""),
            "boards[1].serial = \"03921\": the serial number of another board (board \"a\" has \"3921\"",
        ),
    ] {
        let got = parse(&text).boards().unwrap_err().to_string();
        assert!(got.contains(message), "{got}");
    }
    let mut config = parse(&board("a", "port = \"/dev/a\""));
    config.broadcast.time_control = "ninety".into();
    let got = config.boards().unwrap_err().to_string();
    assert!(got.contains("broadcast.time_control = \"ninety\": a PGN TimeControl"), "{got}");
    let distinct = board("a", "serial = \"3921\"") + &board("b", "serial = \"39210\"");
    assert_eq!(parse(&distinct).boards().unwrap().len(), 2);
}

#[test]
fn paired_boards_name_the_game_board_once() {
    let board = |name: &str, extra: &str| {
        format!("[[boards]]\nname = \"{name}\"\nprotocol = \"dgt\"\nport = \"/dev/{name}\"\n{extra}\n")
    };
    let ok = board("b7", "") + &board("b7-vi", "mirror_of = \"b7\"\ndiverge_after_ms = 15000");
    let boards = parse(&ok).boards().unwrap();
    let settings =
        PairSettings { game_board: "b7".into(), mirror_board: "b7-vi".into(), diverge_after: Duration::from_secs(15) };
    assert_eq!(boards[0].pair, Some(Pairing::Game(settings)));
    assert_eq!(boards[1].pair, Some(Pairing::MirrorOf { game: "b7".into() }));
    // The mirror may come first; the tolerance has a default.
    let first = board("b7-vi", "mirror_of = \"b7\"") + &board("b7", "");
    let boards = parse(&first).boards().unwrap();
    assert!(
        matches!(&boards[1].pair, Some(Pairing::Game(s)) if s.diverge_after == DEFAULT_DIVERGE_AFTER && s.mirror_board == "b7-vi")
    );
    for (text, message) in [
        (
            board("b7", "") + &board("vi", "mirror_of = \"b8\""),
            "boards[1].mirror_of = \"b8\": the name of a configured board, the sighted player's board where the game is played: none is called \"b8\" (the others are \"b7\")",
        ),
        (
            board("b7", "mirror_of = \"b7\""),
            "boards[0].mirror_of = \"b7\": the name of another board: the sighted player's board, where the game is played (a board cannot mirror itself)",
        ),
        (
            board("b7", "") + &board("vi", "mirror_of = \"b7\"") + &board("vi2", "mirror_of = \"b7\""),
            "boards[2].mirror_of = \"b7\": a board no other board mirrors: board \"vi\" mirrors it already (one visually impaired player's board per game)",
        ),
        (
            board("b7", "") + &board("vi", "mirror_of = \"b7\"") + &board("vi2", "mirror_of = \"vi\""),
            "boards[2].mirror_of = \"vi\": a board that is not itself a mirror: board \"vi\" mirrors \"b7\"; name the board the game is played on",
        ),
        (
            board("b7", "diverge_after_ms = 15000"),
            "boards[0].diverge_after_ms = 15000: nothing on this board: it belongs with mirror_of",
        ),
        (
            board("b7", "") + &board("vi", "mirror_of = \"b7\"\ndiverge_after_ms = 0"),
            "boards[1].diverge_after_ms = 0: 500 to 600000 milliseconds",
        ),
    ] {
        let got = parse(&text).boards().unwrap_err().to_string();
        assert!(got.starts_with(message), "{got}\nwanted {message}");
    }
}

#[test]
fn names_that_cannot_be_file_names_are_refused_with_the_key() {
    let board = |extra: &str| format!("[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\n{extra}");
    let long = "x".repeat(250);
    for (extra, message) in [
        (board("event = \"a\\u0000b\"\n"), "boards[0].event = \"a\\0b\": a name without control characters"),
        (board(&format!("board = \"{long}\"\n")), "(250 characters): a name of at most 100 characters"),
        (
            format!("{}[[boards]]\nname = \"b/1\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nboard = \"2\"\n", board(""))
                .replace("\"b1\"", "\"b-1\""),
            "boards[1].name = \"b/1\": a name whose capture files differ from board \"b-1\"'s",
        ),
    ] {
        let message_got = parse(&extra).boards().unwrap_err().to_string();
        assert!(message_got.contains(message), "{message_got}");
        assert!(message_got.len() < 400, "the name is not echoed whole: {message_got}");
    }
    let mut config = parse(&board(""));
    config.broadcast.round = long;
    assert!(config.boards().unwrap_err().to_string().starts_with("broadcast.round = \"xxxx"));
    // Ordinary names, and names made safe where they become paths.
    let ok = parse(&board("event = \"Open A\"\nround = \"Round 3.1\"\nboard = \"Ålesund\"\n"));
    assert_eq!(ok.boards().unwrap()[0].path.event, "Open-A");
    assert!(parse(&board("event = \"..\"\nboard = \"../../x\"\n")).boards().is_ok());
}

#[test]
fn the_clock_display_is_off_unless_a_dgt_board_opts_in() {
    let board = |protocol: &str, extra: &str| {
        parse(&format!("[[boards]]\nname = \"b1\"\nprotocol = \"{protocol}\"\nport = \"/dev/a\"\n{extra}"))
    };
    assert_eq!(board("dgt", "").boards().unwrap()[0].clock_display, ClockDisplaySettings::default());
    let moves = board("dgt", "clock_display = \"moves\"\n");
    assert_eq!(moves.boards().unwrap()[0].clock_display.mode, ClockDisplayMode::Moves);
    let tuned =
        board("dgt", "clock_display = \"moves\"\nclock_display_show_ms = 3000\nclock_display_min_left_s = 30\n");
    let tuned = tuned.boards().unwrap()[0].clock_display;
    assert_eq!((tuned.show_for, tuned.min_remaining), (Duration::from_secs(3), Duration::from_secs(30)));
    for (protocol, extra, message) in [
        ("dgt", "clock_display = \"on\"\n", "boards[0].clock_display = \"on\": \"off\" (only the times) or \"moves\""),
        (
            "millennium",
            "clock_display = \"moves\"\n",
            "boards[0].clock_display = \"moves\": \"off\": a millennium board",
        ),
        ("dgt", "clock_display_show_ms = 100\n", "boards[0].clock_display_show_ms = 100: 500 to 10000"),
        ("dgt", "clock_display_min_left_s = 7200\n", "boards[0].clock_display_min_left_s = 7200: 0 to 3600"),
    ] {
        let error = board(protocol, extra).boards().unwrap_err().to_string();
        assert!(error.starts_with(message), "{error}");
    }
}

#[test]
fn broadcast_pairings_give_boards_their_players_and_a_bad_file_is_refused_with_its_line() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pairings/ch-rus-hl-w-2012-round4.trf");
    let mut config = parse(
        "[[boards]]\nname = \"board-1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\nwhite = \"Someone\"\n\
         [[boards]]\nname = \"top\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nwhite = \"Kept\"\n",
    );
    config.broadcast.round = "4".into();
    config.broadcast.pairings = fixture.into();
    let mut boards = config.boards().unwrap();
    let unplaced = config.apply_pairings(&mut boards).unwrap();
    let tag = |b: &Board, name: &str| b.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    assert_eq!(tag(&boards[0], "White").as_deref(), Some("Kovanova,B"));
    assert_eq!(tag(&boards[0], "BlackFideId").as_deref(), Some("4195752"));
    assert_eq!(tag(&boards[0], "WhiteFed"), None, "an empty field sets no tag");
    assert_eq!(tag(&boards[1], "White").as_deref(), Some("Kept"), "a board without a number keeps its players");
    assert_eq!(unplaced.len(), 15);
    assert_eq!(unplaced[0], "round 4 board 2");

    let dir = std::env::temp_dir().join(format!("boardcast-config-pairings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.trf");
    let text = std::fs::read_to_string(fixture).unwrap().replacen("2447", "24x7", 1);
    std::fs::write(&bad, text).unwrap();
    config.broadcast.pairings = bad.clone();
    let error = config.apply_pairings(&mut boards).unwrap_err().to_string();
    assert!(error.starts_with("broadcast.pairings = \""), "{error}");
    assert!(error.contains("line 7: rating (columns 49-52) \"24x7\""), "{error}");
    config.broadcast.pairings = fixture.into();
    config.broadcast.round = "9".into();
    let mut boards = config.boards().unwrap();
    let error = config.apply_pairings(&mut boards).unwrap_err().to_string();
    assert!(error.contains("no pairings for round \"9\" (rounds 1 to 4)"), "{error}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn boards_are_published_under_their_event_round_and_label() {
    let mut config = parse(
        "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\n\
         [[boards]]\nname = \"b2\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nround = \"3\"\nboard = \"1\"\n",
    );
    config.broadcast.event = "Open A".into();
    config.broadcast.round = "2".into();
    let boards = config.boards().unwrap();
    assert_eq!(boards[0].path, BoardPath::new("Open A", "2", "b1"));
    assert_eq!(boards[1].path, BoardPath::new("Open A", "3", "1"));
    let clash = parse(
        "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\nboard = \"7\"\n\
         [[boards]]\nname = \"b2\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nboard = \"7\"\n",
    );
    assert!(clash.boards().unwrap_err().to_string().starts_with("boards[1].board = \"7\": a label no other board"));
}

#[test]
fn speech_commands_languages_and_boards_are_checked() {
    assert_eq!(parse("").speech().unwrap(), None, "off by default");
    let boards = "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\n\
                  [[boards]]\nname = \"b2\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nspeech_language = \"nl\"\n";
    let with = |change: &dyn Fn(&mut SpeechConfig)| {
        let mut config = parse(boards);
        config.speech.enabled = true;
        change(&mut config.speech);
        config
    };
    let config = with(&|_| {});
    let speech = config.speech().unwrap().unwrap();
    assert_eq!(speech.command, ["espeak-ng", "-v", "de"]);
    assert_eq!(speech.timeout, Duration::from_secs(10));
    let boards = config.boards().unwrap();
    assert_eq!(speech.language_of(&boards[0]), Some(Language::De));
    assert_eq!(speech.language_of(&boards[1]), Some(Language::Nl), "a board's own language wins");
    let only_b2 = with(&|s| s.boards = vec!["b2".into()]).speech().unwrap().unwrap();
    assert_eq!(only_b2.language_of(&boards[0]), None, "boards not named stay silent");
    for (change, message) in [
        (
            &(|s: &mut SpeechConfig| s.command = Vec::new()) as &dyn Fn(&mut SpeechConfig),
            "speech.command = []: a program and its arguments",
        ),
        (&|s| s.command = vec![" ".into()], "speech.command = [\" \"]: a program"),
        (&|s| s.language = "german".into(), "speech.language = \"german\": one of \"en\""),
        (&|s| s.boards = vec!["b3".into()], "speech.boards[0] = \"b3\": the name of a configured board"),
        (&|s| s.max_queue = 0, "speech.max_queue = 0: at least 1"),
        (&|s| s.timeout_ms = 0, "speech.timeout_ms = 0: at least 100 milliseconds"),
    ] {
        let got = with(change).speech().unwrap_err().to_string();
        assert!(got.starts_with(message), "{got}");
    }
    let bad_board =
        parse("[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\nspeech_language = \"xx\"\n");
    let got = bad_board.boards().unwrap_err().to_string();
    assert!(got.starts_with("boards[0].speech_language = \"xx\": one of"), "{got}");
}

#[test]
fn an_unknown_family_is_answered_with_every_live_family() {
    assert_eq!(
        live_families(),
        r#""dgt", "millennium", "certabo", "sentio", "chessnut", "pegasus", "squareoff", "ichessone" or "chessup""#
    );
}

#[test]
fn lichess_rounds_urls_and_intervals_are_checked() {
    assert_eq!(parse("").lichess().unwrap(), None);
    let with = |rounds: &[(&str, &str)]| {
        let mut config = parse("");
        config.lichess.rounds = rounds.iter().map(|(r, id)| ((*r).to_owned(), (*id).to_owned())).collect();
        config
    };
    let ok = with(&[("1", "abcdEF12"), ("Open B/1", "zyxwvu98")]).lichess().unwrap().unwrap();
    assert_eq!(ok.url, "https://lichess.org");
    assert_eq!(ok.interval, Duration::from_millis(2000));
    assert_eq!(ok.round_id("Open A", "1"), Some("abcdEF12"));
    assert_eq!(ok.round_id("Open B", "1"), Some("zyxwvu98"));
    assert_eq!(ok.round_id("Open A", "2"), None);
    let bad_id = with(&[("1", "abc")]).lichess().unwrap_err().to_string();
    assert!(bad_id.starts_with("lichess.rounds.\"1\" = \"abc\": the lichess round id"), "{bad_id}");
    let mut bad_url = with(&[("1", "abcdefgh")]);
    bad_url.lichess.url = "lichess.org".into();
    let got = bad_url.lichess().unwrap_err().to_string();
    assert!(got.starts_with("lichess.url = \"lichess.org\": an https://"), "{got}");
    // The token would cross the network in clear over http, except to this
    // machine.
    for (url, refused) in [
        ("http://lichess.org", true),
        ("http://10.0.0.5:8080/", true),
        ("http://127.0.0.1:9000", false),
        ("http://localhost:9000", false),
        ("http://[::1]:9000", false),
        ("https://lichess.org", false),
    ] {
        let mut config = with(&[("1", "abcdefgh")]);
        config.lichess.url = url.into();
        let got = config.lichess().map(|_| ()).map_err(|e| e.to_string());
        assert_eq!(got.is_err(), refused, "{url}: {got:?}");
        if let Err(said) = got {
            assert!(said.contains("in clear") && said.contains("https://"), "{said}");
        }
    }
    let mut bad_interval = with(&[("1", "abcdefgh")]);
    bad_interval.lichess.interval_ms = 0;
    let got = bad_interval.lichess().unwrap_err().to_string();
    assert!(got.starts_with("lichess.interval_ms = 0: at least 100"), "{got}");
    // The configuration says where the token is, never what it is.
    let debug = format!("{:?}", parse("").lichess);
    assert!(debug.contains("token_file"), "{debug}");
}

#[test]
fn settings_out_of_range_say_what_is_accepted() {
    let mut config = parse("");
    config.reconstruction.settle_ms = 0;
    assert_eq!(
        config.reconstructor().unwrap_err().to_string(),
        "reconstruction.settle_ms = 0: a positive number of milliseconds"
    );
    let mut config = parse("");
    config.link.silent_ms = 1000;
    assert!(
        config.link().unwrap_err().to_string().starts_with("link.silent_ms = 1000: more than link.keepalive_ms (2000)")
    );
}

#[test]
fn analysis_is_off_unless_enabled_and_its_budget_and_sizes_are_checked() {
    use boardcast_core::analysis::uci::Budget;
    assert_eq!(parse("").analysis().unwrap(), None, "off by default");
    let with = |change: &dyn Fn(&mut AnalysisConfig)| {
        let mut config = parse("");
        config.analysis.enabled = true;
        change(&mut config.analysis);
        config
    };
    let analysis = with(&|_| {}).analysis().unwrap().unwrap();
    assert_eq!(analysis.engine, None, "Stockfish is looked for");
    assert_eq!((analysis.engines, analysis.threads, analysis.hash_mb), (1, 1, 64));
    assert_eq!(analysis.budget, Budget::MoveTime { ms: 1000 });
    assert_eq!(analysis.deadline(), Duration::from_secs(11));
    let nodes = with(&|a| a.nodes = 1_000_000).analysis().unwrap().unwrap();
    assert_eq!(nodes.budget, Budget::Nodes { nodes: 1_000_000 });
    assert_eq!(nodes.deadline(), Duration::from_secs(10));
    let named = with(&|a| a.engine = "/opt/engines/lc0".into()).analysis().unwrap().unwrap();
    assert_eq!(named.engine.as_deref(), Some(std::path::Path::new("/opt/engines/lc0")));
    assert_eq!(named.find_engine(), None, "a configured engine that is not there is not replaced by another");
    for (change, message) in [
        (&(|a: &mut AnalysisConfig| a.engines = 0) as &dyn Fn(&mut AnalysisConfig), "analysis.engines = 0: 1 to 64"),
        (&|a| a.threads = 0, "analysis.threads = 0: 1 to 512"),
        (&|a| a.hash_mb = 0, "analysis.hash_mb = 0: 1 to 65536 MiB"),
        (&|a| a.movetime_ms = 5, "analysis.movetime_ms = 5: at least 10 milliseconds"),
        (&|a| a.nodes = 10, "analysis.nodes = 10: at least 1000 nodes"),
        (&|a| a.hung_after_ms = 0, "analysis.hung_after_ms = 0: at least 100 milliseconds"),
        (&|a| a.nice = 20, "analysis.nice = 20: a nice value from 0"),
        (&|a| a.nice = -5, "analysis.nice = -5: a nice value from 0"),
    ] {
        let got = with(change).analysis().unwrap_err().to_string();
        assert!(got.starts_with(message), "{got}");
    }
}

#[test]
fn a_broker_ws_url_with_a_password_is_refused_and_never_repeated() {
    let mut config = parse("");
    config.http.enabled = true;
    config.http.broker_ws_url = "wss://tv:s3cret@hall-broker:8084/mqtt".into();
    let said = config.http().unwrap_err().to_string();
    assert!(said.starts_with("http.broker_ws_url") && said.contains("without user name or password"), "{said}");
    assert!(!said.contains("s3cret"), "the password is not repeated: {said}");
    config.http.broker_ws_url = "wss://hall-broker:8084/mqtt".into();
    assert!(config.http().unwrap().is_some());
}

#[test]
fn the_consoles_keys_default_to_operators_only_and_sessions_with_units_and_bounds() {
    let mut config = parse("");
    config.http.enabled = true;
    let console = config.http().unwrap().unwrap().console;
    assert_eq!(console, ConsoleSettings::default(), "default.toml and the built-in defaults agree");
    assert!(!console.live_may_change);
    assert_eq!((console.idle.as_secs(), console.max.as_secs()), (3600, 12 * 3600));
    (config.http.live_may_change, config.http.session_idle_min, config.http.session_max_h) = (true, 15, 8);
    let console = config.http().unwrap().unwrap().console;
    assert!(console.live_may_change);
    assert_eq!((console.idle.as_secs(), console.max.as_secs()), (15 * 60, 8 * 3600));
    config.http.session_idle_min = 0;
    let got = config.http().unwrap_err().to_string();
    assert!(got.starts_with("http.session_idle_min = 0: minutes from 1 to 1440"), "{got}");
    (config.http.session_idle_min, config.http.session_max_h) = (60, 1000);
    let got = config.http().unwrap_err().to_string();
    assert!(got.starts_with("http.session_max_h = 1000: hours from 1 to 168"), "{got}");
}

#[test]
fn a_pegasus_developer_key_is_twelve_hex_digits() {
    let with = |key: &str| {
        let mut config = parse("");
        config.link.pegasus_key = key.into();
        config.link()
    };
    assert_eq!(with("").unwrap().pegasus_key, None);
    assert_eq!(with("01:23:45:67:89:ab").unwrap().pegasus_key, Some([0x01, 0x23, 0x45, 0x67, 0x89, 0xab]));
    for bad in ["0123", "0123456789zz", "0123456789abcd"] {
        let error = with(bad).unwrap_err().to_string();
        assert!(error.starts_with(&format!("link.pegasus_key = {bad:?}: the developer key")), "{error}");
    }
}

#[test]
fn a_bluetooth_board_is_found_by_address_or_by_name() {
    use crate::config::BluetoothTarget;
    assert_eq!(BluetoothTarget::parse(" c0:ff:ee:00:00:01 "), BluetoothTarget::Address("C0:FF:EE:00:00:01".into()));
    assert_eq!(BluetoothTarget::parse("Chessnut Air"), BluetoothTarget::Name("Chessnut Air".into()));
    // Not six pairs of hex digits: a name.
    assert_eq!(BluetoothTarget::parse("C0:FF:EE:00:00"), BluetoothTarget::Name("C0:FF:EE:00:00".into()));
    let config = parse("[[boards]]\nname = \"b1\"\nbluetooth = \"DGT_Pegasus_1234\"\n");
    let board = &config.boards().unwrap()[0];
    assert_eq!(board.protocol.name(), "pegasus");
    assert_eq!(board.find, FindBoard::Bluetooth(BluetoothTarget::Name("DGT_Pegasus_1234".into())));
}
