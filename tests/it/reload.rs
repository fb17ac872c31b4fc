//! SIGHUP reloads without a restart (a tournament cannot stop its daemon
//! mid-round), through the real binary and the real Mosquitto it runs: an
//! account added to the file gets in only after the reload, a removed one
//! is shut out (its open connection too), a broken or missing file changes
//! nothing and stops nothing; a renewed certificate is served after the reload, and a
//! key that is not the certificate's is refused before the broker sees it;
//! with the built-in broker SIGHUP only says there is nothing to reload.

use std::{
    path::Path,
    process::{Child, Command},
    time::{Duration, Instant},
};

use rumqttc::{AsyncClient, ConnectReturnCode, Event, EventLoop, MqttOptions, Packet, Transport};

use crate::{
    security::{hall_with_broker, mosquitto_installed, runtime},
    support::{
        live::{Hall, stop},
        mqtt::{Subscriber, wait_listening},
    },
    tls::{SERVER_EXTENSIONS, issue, let_in, make_pki, tls, tools_present},
};

const BRIDGE_STATUS: &str = "boardcast/v1/bridges/hall/status";

/// Sends the daemon SIGHUP, as `systemctl reload` does.
fn hang_up(daemon: &Child) {
    let pid = nix::unistd::Pid::from_raw(daemon.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
}

/// Waits until the daemon's log says `needle` at least `times` times.
fn wait_log(hall: &Hall, needle: &str, times: usize) -> String {
    let end = Instant::now() + Duration::from_secs(30);
    while hall.log().matches(needle).count() < times && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = hall.log();
    assert!(log.matches(needle).count() >= times, "{times} × {needle:?} in the log:\n{log}");
    log
}

/// The last line of the log that says `needle`.
fn last_line(log: &str, needle: &str) -> String {
    log.lines().rev().find(|l| l.contains(needle)).unwrap_or_default().to_owned()
}

/// Connects as `user` and returns the open connection, or `None` when the
/// broker refuses it.
fn connect(
    runtime: &tokio::runtime::Runtime,
    port: u16,
    user: &str,
    password: &str,
) -> Option<(AsyncClient, EventLoop)> {
    let mut options = MqttOptions::new(format!("reload-{user}-{}", rand_suffix()), "127.0.0.1", port);
    options.set_credentials(user, password).set_keep_alive(Duration::from_secs(30));
    runtime.block_on(async {
        let (client, mut eventloop) = AsyncClient::new(options, 4);
        let answer = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(ack))) => return ack.code == ConnectReturnCode::Success,
                    Ok(_) => {}
                    Err(_) => return false,
                }
            }
        })
        .await;
        answer.expect("the broker answers within 10 s").then_some((client, eventloop))
    })
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

/// Whether `user` can log in, waiting up to 10 s for it to become `wanted`
/// (the broker applies a reload a moment after the daemon signals it).
fn becomes(runtime: &tokio::runtime::Runtime, port: u16, user: &str, password: &str, wanted: bool) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let now = connect(runtime, port, user, password).is_some();
        if now == wanted || Instant::now() > end {
            return now;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether the broker closes an open connection within `limit`.
fn closed_within(runtime: &tokio::runtime::Runtime, eventloop: &mut EventLoop, limit: Duration) -> bool {
    runtime.block_on(async {
        tokio::time::timeout(limit, async {
            loop {
                if eventloop.poll().await.is_err() {
                    return;
                }
            }
        })
        .await
        .is_ok()
    })
}

/// `boardcast accounts remove NAME` on the hall's accounts file.
fn remove_account(hall: &Hall, name: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["accounts", "--config"])
        .arg(hall.dir.join("boardcast.toml"))
        .args(["remove", name])
        .output()
        .unwrap();
    assert!(out.status.success(), "accounts remove: {}", String::from_utf8_lossy(&out.stderr));
}

/// A fresh reader of the bridge's retained status sees it online: the
/// daemon's own connection to its broker is up.
fn bridge_online(runtime: &tokio::runtime::Runtime, port: u16, user: &str, password: &str, id: &str) -> bool {
    let reader = Subscriber::start_as(runtime, port, BRIDGE_STATUS, id, user, password);
    reader.wait_for(Duration::from_secs(10), |r| {
        r.iter().any(|m| m.topic == BRIDGE_STATUS && m.json["status"] == "online")
    })
}

#[test]
fn sighup_reloads_the_accounts_file_and_a_broken_one_changes_nothing() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, _) = hall_with_broker("reload-accounts", "anonymous = \"none\"\n");
    let display = hall.account("tv-1", "public");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    wait_log(&hall, "connected to", 1);

    // An account added while the daemon runs gets in after the reload
    // only.
    let arbiter = hall.account("arbiter", "live");
    assert!(connect(&runtime, port, "arbiter", &arbiter).is_none(), "not before the reload");
    hang_up(&daemon);
    let log = wait_log(&hall, "reloaded (SIGHUP)", 1);
    let line = last_line(&log, "reloaded (SIGHUP)");
    assert!(line.contains("2 broker account(s)") && line.contains("added: arbiter"), "{line}");
    assert!(becomes(&runtime, port, "arbiter", &arbiter, true), "the new account gets in: {}", hall.log());
    assert!(bridge_online(&runtime, port, "arbiter", &arbiter, "console-1"), "{}", hall.log());

    // An account removed (a lost laptop's) is shut out after the reload,
    // and its open connection is closed.
    let (_client, mut laptop) = connect(&runtime, port, "tv-1", &display).expect("tv-1 is let in");
    remove_account(&hall, "tv-1");
    hang_up(&daemon);
    let log = wait_log(&hall, "reloaded (SIGHUP)", 2);
    assert!(last_line(&log, "reloaded (SIGHUP)").contains("removed: tv-1"), "{log}");
    assert!(!becomes(&runtime, port, "tv-1", &display, false), "the removed account is refused: {}", hall.log());
    assert!(closed_within(&runtime, &mut laptop, Duration::from_secs(10)), "its open connection is closed");
    assert!(connect(&runtime, port, "arbiter", &arbiter).is_some(), "the others stay");

    // A file gone (a wrong path, a move): refused, not taken as "nobody".
    let file = hall.dir.join("mqtt-accounts");
    let aside = hall.dir.join("mqtt-accounts.aside");
    std::fs::rename(&file, &aside).unwrap();
    hang_up(&daemon);
    let log = wait_log(&hall, "reload (SIGHUP) refused", 1);
    assert!(last_line(&log, "refused").contains("does not exist any more"), "{log}");
    assert!(connect(&runtime, port, "arbiter", &arbiter).is_some(), "the account stays: {}", hall.log());
    std::fs::rename(&aside, &file).unwrap();

    // A broken accounts file: the reload is refused with what, where and
    // what to do; the accounts stay as they were and the daemon runs on.
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("intruder:admin:nothing\n");
    std::fs::write(&file, text).unwrap();
    hang_up(&daemon);
    let log = wait_log(&hall, "reload (SIGHUP) refused", 2);
    let line = last_line(&log, "reload (SIGHUP) refused");
    for said in
        [&file.display().to_string(), "line 3", "\"admin\" is not a role", "keeps its 1 account(s)", "reload again"]
    {
        assert!(line.contains(said), "{said:?} in {line}");
    }
    std::thread::sleep(Duration::from_secs(1));
    assert!(daemon.try_wait().unwrap().is_none(), "the daemon runs on: {}", hall.log());
    assert!(connect(&runtime, port, "arbiter", &arbiter).is_some(), "the account stays: {}", hall.log());
    assert!(bridge_online(&runtime, port, "arbiter", &arbiter, "console-2"), "{}", hall.log());
    assert!(!hall.log().contains("connected again"), "the daemon's own connection was never dropped: {}", hall.log());

    // SIGTERM still stops it cleanly.
    stop(&mut daemon);
    assert!(hall.log().contains("stopped; everything was delivered"), "{}", hall.log());
}

#[test]
fn sighup_with_the_builtin_broker_says_there_is_nothing_to_reload_and_goes_on() {
    let (hall, port, _) = hall_with_broker("reload-builtin", "broker = \"builtin\"\n");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    wait_log(&hall, "connected to", 1);
    hang_up(&daemon);
    let log = wait_log(&hall, "SIGHUP: nothing to reload", 1);
    assert!(last_line(&log, "SIGHUP").contains("built-in broker (rumqttd) has no accounts"), "{log}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(daemon.try_wait().unwrap().is_none(), "SIGHUP did not stop the daemon: {}", hall.log());
    let reader = Subscriber::start(&runtime, port, BRIDGE_STATUS, "after-sighup");
    assert!(
        reader.wait_for(Duration::from_secs(10), |r| r.iter().any(|m| m.json["status"] == "online")),
        "the feed goes on: {}",
        hall.log()
    );
    stop(&mut daemon);
}

/// The serial number of the certificate served on `port`, as openssl
/// prints it (`04`).
fn served_serial(port: u16) -> String {
    let handshake = Command::new("openssl")
        .args(["s_client", "-connect", &format!("127.0.0.1:{port}"), "-servername", "localhost"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let mut x509 = Command::new("openssl")
        .args(["x509", "-noout", "-serial"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut x509.stdin.take().unwrap(), &handshake.stdout).unwrap();
    let out = x509.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().trim_start_matches("serial=").to_owned()
}

/// Waits up to 10 s for the served certificate to be `serial`.
fn serves(port: u16, serial: &str) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    while served_serial(port) != serial && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
    }
    served_serial(port) == serial
}

fn replace(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap();
}

#[test]
fn sighup_serves_a_renewed_certificate_and_refuses_a_key_that_is_not_its() {
    if !tools_present() {
        return;
    }
    let hall = Hall::new("reload-tls");
    let pki = make_pki(&hall.dir.join("pki"));
    let (port, ws) = (crate::support::mqtt::free_port(), crate::support::mqtt::free_port());
    let mqtt = format!(
        "[mqtt]\nbridge_id = \"hall\"\n[mqtt.embedded]\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"127.0.0.1:{ws}\"\ntls_cert_file = \"{cert}\"\ntls_key_file = \"{key}\"\n",
        cert = pki.server_cert.display(),
        key = pki.server_key.display(),
    );
    hall.config_with_mqtt(&["b1"], &mqtt);
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    wait_log(&hall, "connected to", 1);
    assert_eq!(served_serial(port), "02", "the certificate of the start");

    // Renewed in place (a new key too), then SIGHUP: served from then on.
    let dir = hall.dir.join("pki");
    issue(&dir, "renewed", "4", SERVER_EXTENSIONS);
    replace(&dir.join("renewed.pem"), &pki.server_cert);
    replace(&dir.join("renewed.key"), &pki.server_key);
    hang_up(&daemon);
    let log = wait_log(&hall, "reloaded (SIGHUP)", 1);
    assert!(last_line(&log, "reloaded (SIGHUP)").contains("1 in its chain"), "{log}");
    assert!(serves(port, "04"), "the renewed certificate is served: {}", hall.log());

    // A key that is not the certificate's (Mosquitto would fail every
    // handshake with it): refused, the broker keeps serving the last one.
    issue(&dir, "other", "5", SERVER_EXTENSIONS);
    replace(&dir.join("other.key"), &pki.server_key);
    hang_up(&daemon);
    let log = wait_log(&hall, "reload (SIGHUP) refused", 1);
    assert!(last_line(&log, "refused").contains("the key is not the certificate's"), "{log}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(served_serial(port), "04");
    let mut options = MqttOptions::new("display-after-bad-reload", "127.0.0.1", port);
    options.set_transport(Transport::Tls(tls(&pki, false)));
    assert!(let_in(&runtime, options), "TLS still works: {}", hall.log());
    stop(&mut daemon);
}
