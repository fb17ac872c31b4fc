//! The tournament panel's delivery (issue 28 leftovers), in headless
//! Chromium against the real daemon: a lichess server that refuses the
//! token (a local one speaking lichess's push API, answering 401 as lichess
//! does for a bad token) makes the panel say "token refused" for the
//! round, from the state the daemon keeps of its lichess push.

use std::{
    io::{BufRead as _, BufReader, Read as _, Write as _},
    net::TcpListener,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use crate::{
    console_round::hall_with_console,
    displays::{Browser, console_logged_in},
    security::{GAMES, mosquitto_installed},
    support::{live::stop, mqtt::wait_listening},
};

const ROUND_ID: &str = "tokenRef";

/// A lichess server that refuses every push's token (401), counting the
/// pushes; its address.
fn refusing_lichess() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let pushes = Arc::new(AtomicUsize::new(0));
    let counted = pushes.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // The whole request first (headers, then the PGN body), as a
            // server reads it before it answers.
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            if first.starts_with("POST /api/broadcast/round/") {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            let answer = r#"{"error":"No such token"}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (format!("http://{address}"), pushes)
}

#[test]
fn the_tournament_panel_says_when_lichess_refuses_the_token() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port) = hall_with_console("console-lichess");
    let Some(browser) = Browser::start(&hall.dir.join("chromium")) else { return };
    let (url, pushes) = refusing_lichess();
    let token_file = hall.dir.join("lichess.token");
    std::fs::write(&token_file, "lip_Expired4Tests0nly\n").unwrap();
    let config = hall.dir.join("boardcast.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[lichess]\nurl = \"{url}\"\ntoken_file = \"{}\"\ninterval_ms = 200\n[lichess.rounds]\n\"1\" = \"{ROUND_ID}\"\n",
        token_file.display()
    ));
    std::fs::write(&config, text).unwrap();
    let op = hall.account("op", "operator");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let site = format!("http://127.0.0.1:{port}");
    console_logged_in(&browser, &site, "op", &op);
    browser.open(&format!("{site}/console.html"));

    // Before any game: the round configured, nothing pushed yet, no word
    // of the token.
    let before = browser.wait_for(
        Duration::from_secs(20),
        &format!(
            "const li = document.querySelector('#delivery li.lichess[data-id=\"{ROUND_ID}\"]'); \
             return li && [li.textContent, !!document.querySelector('#delivery .token-refused')]"
        ),
    );
    assert!(before[0].as_str().unwrap().contains("not pushed yet"), "{before}");
    assert_eq!(before[1], false, "{before}");

    // A game on the board: its round goes to lichess, which refuses the
    // token; the panel says so, with what to do.
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let refused = browser.wait_for(
        Duration::from_secs(90),
        "const li = document.querySelector('#delivery li.token-refused'); return li && li.textContent",
    );
    let refused = refused.as_str().unwrap();
    assert!(refused.contains("token refused (401)") && refused.contains("study:write"), "{refused}");
    assert!(pushes.load(Ordering::SeqCst) >= 1, "lichess was asked");
    // The round itself was never taken.
    let round = browser
        .run(&format!("return document.querySelector('#delivery li.lichess[data-id=\"{ROUND_ID}\"]').textContent"));
    assert!(round.as_str().unwrap().contains("not pushed yet"), "{round}");
    browser.run("document.getElementById('delivery').scrollIntoView()");
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}
