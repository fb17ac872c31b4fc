//! TLS (issue 16), through the real binary, the real Mosquitto and
//! certificates made by `openssl` at test time: the managed broker serves
//! the feed over mqtts (and wss) to a client that trusts the test's CA,
//! and a plain MQTT connection to its port gets nothing; `boardcast ctl`
//! reaches it over TLS; the daemon's display pages, in headless Chromium
//! trusting the test's CA through its NSS database (as `certutil` installs
//! a hall's CA on a display PC), follow a game over wss by themselves, and
//! get nothing when opened by a name the certificate lacks; and the daemon
//! publishes to an external Mosquitto that asks every client for a
//! certificate, which `ctl` shows too (and without one is refused, saying
//! what to set).

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

use crate::support::{
    live::{Hall, stop},
    mqtt::{Received, Subscriber, free_port, wait_listening},
};
use rumqttc::{MqttOptions, TlsConfiguration, Transport};
use serde_json::Value;

const GAMES: &str = "livechess-vestland-round1.pgn";
const PUBLIC_STATE: &str = "boardcast/v1/public/event/1/b1/state";

/// Whether the test can run: Mosquitto and openssl are needed. Under CI a
/// missing one fails the test; elsewhere it is skipped, saying why.
pub(crate) fn tools_present() -> bool {
    let mosquitto = ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/bin/mosquitto"]
        .iter()
        .any(|p| Path::new(p).exists());
    let openssl = Command::new("openssl").arg("version").output().is_ok_and(|o| o.status.success());
    for (present, what) in
        [(mosquitto, "Mosquitto (apt-get install mosquitto)"), (openssl, "openssl (apt-get install openssl)")]
    {
        if !present {
            assert!(std::env::var_os("CI").is_none(), "under CI {what} must be installed");
            eprintln!("skipped: {what} is not installed");
            return false;
        }
    }
    true
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// A test CA, and certificates it signed, in `dir`.
pub(crate) struct Pki {
    pub(crate) ca: PathBuf,
    pub(crate) server_cert: PathBuf,
    pub(crate) server_key: PathBuf,
    pub(crate) client_cert: PathBuf,
    pub(crate) client_key: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").current_dir(dir).args(args).output().unwrap();
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A key pair and a certificate signing request for `name`, then the
/// certificate the CA signs with `extensions`.
pub(crate) fn issue(dir: &Path, name: &str, serial: &str, extensions: &str) {
    let ext = format!("{name}.ext");
    std::fs::write(dir.join(&ext), extensions).unwrap();
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
            "-subj",
            &format!("/CN={name}"),
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-set_serial",
            serial,
            "-days",
            "2",
            "-out",
            &format!("{name}.pem"),
            "-extfile",
            &ext,
        ],
    );
}

/// A broker's certificate: for 127.0.0.1 and localhost.
pub(crate) const SERVER_EXTENSIONS: &str = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n";

pub(crate) fn make_pki(dir: &Path) -> Pki {
    std::fs::create_dir_all(dir).unwrap();
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=boardcast test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
    issue(dir, "server", "2", SERVER_EXTENSIONS);
    issue(
        dir,
        "client",
        "3",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n",
    );
    Pki {
        ca: dir.join("ca.pem"),
        server_cert: dir.join("server.pem"),
        server_key: dir.join("server.key"),
        client_cert: dir.join("client.pem"),
        client_key: dir.join("client.key"),
    }
}

/// TLS options for a client that trusts the test CA (and shows the client
/// certificate when `client` is set).
pub(crate) fn tls(pki: &Pki, client: bool) -> TlsConfiguration {
    let client_auth =
        client.then(|| (std::fs::read(&pki.client_cert).unwrap(), std::fs::read(&pki.client_key).unwrap()));
    TlsConfiguration::Simple { ca: std::fs::read(&pki.ca).unwrap(), alpn: None, client_auth }
}

/// A CONNECT packet (MQTT 3.1.1, clean session) for `id`.
fn connect_packet(id: &str) -> Vec<u8> {
    let mut body = vec![0, 4, b'M', b'Q', b'T', b'T', 4, 0b0000_0010, 0, 30];
    body.extend_from_slice(&(id.len() as u16).to_be_bytes());
    body.extend_from_slice(id.as_bytes());
    let mut packet = vec![0x10, body.len() as u8];
    packet.extend(body);
    packet
}

fn ctl(hall: &Hall, args: &[&str], password: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["ctl", "--config"])
        .arg(hall.dir.join("boardcast.toml"))
        .args(["--timeout-s", "10", "--user", "op"])
        .env("BOARDCAST_MQTT_PASSWORD", password)
        .args(args)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// Whether a client with `options` is let in (a CONNACK that accepts it),
/// or refused (the handshake or the connection fails first).
pub(crate) fn let_in(runtime: &tokio::runtime::Runtime, options: MqttOptions) -> bool {
    runtime.block_on(async {
        let (_client, mut eventloop) = rumqttc::AsyncClient::new(options, 4);
        let answer = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match eventloop.poll().await {
                    Ok(rumqttc::Event::Incoming(rumqttc::Packet::ConnAck(ack))) => {
                        return ack.code == rumqttc::ConnectReturnCode::Success;
                    }
                    Ok(_) => {}
                    Err(_) => return false,
                }
            }
        })
        .await;
        answer.expect("the broker answers or closes within 20 s")
    })
}

fn moved(r: &[Received]) -> bool {
    r.iter().any(|m| m.topic == PUBLIC_STATE && m.json["ply"].as_u64() >= Some(2))
}

#[test]
fn the_managed_broker_serves_the_feed_over_tls_and_nothing_in_clear() {
    if !tools_present() {
        return;
    }
    let hall = Hall::new("tls-managed");
    let pki = make_pki(&hall.dir.join("pki"));
    let (port, ws) = (free_port(), free_port());
    let mqtt = format!(
        "[mqtt]\nbridge_id = \"hall\"\nca_file = \"{ca}\"\n[mqtt.embedded]\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"127.0.0.1:{ws}\"\ntls_cert_file = \"{cert}\"\ntls_key_file = \"{key}\"\n",
        ca = pki.ca.display(),
        cert = pki.server_cert.display(),
        key = pki.server_key.display(),
    );
    hall.config_with_mqtt(&["b1"], &mqtt);
    let operator = hall.account("op", "operator");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    assert!(wait_listening(ws, Duration::from_secs(10)), "{}", hall.log());

    // A display trusting the CA, over mqtts and over wss.
    let mut options = MqttOptions::new("display-mqtts", "127.0.0.1", port);
    options.set_transport(Transport::Tls(tls(&pki, false)));
    let display = Subscriber::start_with(&runtime, options, "boardcast/v1/public/#");
    let mut options = MqttOptions::new("display-wss", format!("wss://localhost:{ws}/mqtt"), ws);
    options.set_transport(Transport::Wss(tls(&pki, false)));
    let browser = Subscriber::start_with(&runtime, options, "boardcast/v1/public/#");

    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    assert!(display.wait_for(Duration::from_secs(60), moved), "the feed arrives over mqtts: {}", hall.log());
    assert!(browser.wait_for(Duration::from_secs(30), moved), "and over wss: {}", hall.log());

    // A client speaking plain MQTT to the TLS port is never answered with
    // a CONNACK: the broker closes the connection.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(&connect_packet("plain-intruder")).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    assert!(answer.first() != Some(&0x20), "no CONNACK in clear: {answer:02x?}");
    // A client that trusts only the system's authorities refuses the
    // test CA's certificate.
    let mut options = MqttOptions::new("untrusting", "127.0.0.1", port);
    let system = std::fs::read("/etc/ssl/certs/ca-certificates.crt").unwrap_or_default();
    options.set_transport(Transport::Tls(TlsConfiguration::Simple { ca: system, alpn: None, client_auth: None }));
    assert!(!let_in(&runtime, options), "a certificate nobody trusts is refused");

    // The operator's ctl reaches the broker over TLS too ([mqtt] ca_file).
    let (code, said) = ctl(&hall, &["b1", "tag", "Annotator", "over TLS"], &operator);
    assert_eq!(code, 0, "{said}\n{}", hall.log());
    assert!(hall.pgn("b1").contains("[Annotator \"over TLS\"]"), "{}", hall.pgn("b1"));

    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}

/// A Mosquitto of "the hall" that wants a client certificate signed by the
/// test CA, stopped when dropped.
struct HallBroker {
    port: u16,
    child: Child,
}

impl HallBroker {
    fn start(dir: &Path, pki: &Pki) -> Self {
        let port = free_port();
        let conf = dir.join("hall-mosquitto.conf");
        // Run as root, Mosquitto becomes the `mosquitto` user, who cannot
        // read the test's key: it stays root then.
        let user = if nix::unistd::geteuid().is_root() { "user root\n" } else { "" };
        std::fs::write(
            &conf,
            format!(
                "{user}listener {port} 127.0.0.1\ncafile {ca}\ncertfile {cert}\nkeyfile {key}\nrequire_certificate true\nallow_anonymous true\npersistence false\n",
                ca = pki.ca.display(),
                cert = pki.server_cert.display(),
                key = pki.server_key.display(),
            ),
        )
        .unwrap();
        let binary = ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/bin/mosquitto"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap();
        let child =
            Command::new(binary).arg("-c").arg(&conf).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        assert!(wait_listening(port, Duration::from_secs(10)), "the hall's Mosquitto listens on {port}");
        Self { port, child }
    }
}

impl Drop for HallBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_daemon_publishes_to_a_broker_that_requires_client_certificates() {
    if !tools_present() {
        return;
    }
    let hall = Hall::new("tls-client-cert");
    let pki = make_pki(&hall.dir.join("pki"));
    let broker = HallBroker::start(&hall.dir, &pki);
    let mqtt = format!(
        "[mqtt]\nbridge_id = \"hall\"\nurl = \"mqtts://127.0.0.1:{port}\"\nca_file = \"{ca}\"\nclient_cert_file = \"{cert}\"\nclient_key_file = \"{key}\"\n",
        port = broker.port,
        ca = pki.ca.display(),
        cert = pki.client_cert.display(),
        key = pki.client_key.display(),
    );
    hall.config_with_mqtt(&["b1"], &mqtt);
    let runtime = runtime();
    // The test's own reader shows the client certificate too.
    let mut options = MqttOptions::new("hall-display", "127.0.0.1", broker.port);
    options.set_transport(Transport::Tls(tls(&pki, true)));
    let display = Subscriber::start_with(&runtime, options, "boardcast/v1/public/#");
    // Without a certificate the broker lets nobody in; with one, it does.
    let mut options = MqttOptions::new("no-certificate", "127.0.0.1", broker.port);
    options.set_transport(Transport::Tls(tls(&pki, false)));
    assert!(!let_in(&runtime, options), "no certificate, no entry");
    let mut options = MqttOptions::new("with-certificate", "127.0.0.1", broker.port);
    options.set_transport(Transport::Tls(tls(&pki, true)));
    assert!(let_in(&runtime, options), "the test CA's client certificate is accepted");

    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    assert!(display.wait_for(Duration::from_secs(60), moved), "the feed arrives: {}", hall.log());

    // ctl shows the configuration's client certificate: let in, its
    // command applied.
    let (code, said) = hall.ctl(&["--timeout-s", "10", "b1", "tag", "Annotator", "from the configuration"]);
    assert_eq!(code, 0, "{said}\n{}", hall.log());
    assert!(hall.pgn("b1").contains("[Annotator \"from the configuration\"]"), "{}", hall.pgn("b1"));
    // Without one it is refused, and says what to set.
    let text = std::fs::read_to_string(hall.dir.join("boardcast.toml")).unwrap();
    let bare: String = text.lines().filter(|l| !l.starts_with("client_")).map(|l| format!("{l}\n")).collect();
    let bare_config = hall.dir.join("ctl-without-certificate.toml");
    std::fs::write(&bare_config, bare).unwrap();
    let ctl = |extra: &[&str], tag: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["ctl", "--config"])
            .arg(&bare_config)
            .args(["--timeout-s", "10"])
            .args(extra)
            .args(["b1", "tag", "Annotator", tag])
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, said) = ctl(&[], "without a certificate");
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("the broker wants a client certificate and ctl showed none: set [mqtt] client_cert_file"),
        "{said}"
    );
    assert!(!hall.pgn("b1").contains("without a certificate"));
    // Or given on the command line.
    let (cert, key) = (pki.client_cert.display().to_string(), pki.client_key.display().to_string());
    let (code, said) = ctl(&["--client-cert-file", &cert, "--client-key-file", &key], "from the flags");
    assert_eq!(code, 0, "{said}\n{}", hall.log());
    assert!(hall.pgn("b1").contains("[Annotator \"from the flags\"]"), "{}", hall.pgn("b1"));

    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}

/// Whether `certutil` (libnss3-tools) is there to give the browser the
/// test CA; under CI it must be.
fn certutil_present() -> bool {
    let present = Command::new("certutil").arg("-H").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "under CI certutil must be installed (apt-get install libnss3-tools)"
        );
        eprintln!("skipped: certutil is not installed (apt-get install libnss3-tools)");
    }
    present
}

/// A display PC's home folder whose NSS database (`.pki/nssdb`, where
/// Chromium on Linux looks for the authorities its user trusts) trusts
/// `ca` for web sites: the commands of docs/security.md.
fn home_trusting(home: &Path, ca: &Path) -> PathBuf {
    let db = home.join(".pki/nssdb");
    std::fs::create_dir_all(&db).unwrap();
    let db = format!("sql:{}", db.display());
    let args = ["-d", &db, "-A", "-t", "C,,", "-n", "Hall CA", "-i", ca.to_str().unwrap()];
    let out = Command::new("certutil").args(args).stdin(Stdio::null()).output().unwrap();
    assert!(out.status.success(), "certutil {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    home.to_path_buf()
}

/// The pieces after each ply of game `index` of a vendored PGN file (the
/// start first), as the pages draw them: square name to FEN letter.
fn placements(pgn_file: &str, index: usize) -> Vec<serde_json::Value> {
    use shakmaty::Position;
    let path = format!("{}/tests/fixtures/games/{pgn_file}", env!("CARGO_MANIFEST_DIR"));
    let game = boardcast_sim::synth::read_games(&std::fs::read_to_string(path).unwrap()).unwrap().remove(index);
    let mut position = game.start;
    let placement = |p: &shakmaty::Chess| {
        p.board()
            .iter()
            .map(|(square, piece)| (square.to_string(), serde_json::json!(piece.char().to_string())))
            .collect()
    };
    let mut all = vec![placement(&position)];
    for m in &game.moves {
        position.play_unchecked(*m);
        all.push(placement(&position));
    }
    all
}

/// Whether a WebSocket upgrade asked in clear at `port` is accepted (an
/// HTTP 101 answer).
fn plain_websocket_accepted(port: u16) -> bool {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        stream,
        "GET /mqtt HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 101")
}

#[test]
fn the_display_pages_follow_a_game_over_wss_when_the_managed_broker_serves_tls() {
    if !tools_present() || !certutil_present() {
        return;
    }
    let hall = Hall::new("tls-displays");
    let pki = make_pki(&hall.dir.join("pki"));
    // The broker's certificate names 127.0.0.1 only (a hall's names the
    // broker's host): a page that reaches it as localhost is refused.
    issue(
        &hall.dir.join("pki"),
        "hall-broker",
        "4",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n",
    );
    let home = home_trusting(&hall.dir.join("display-pc"), &pki.ca);
    let Some(browser) = crate::displays::Browser::start_at_home(&hall.dir.join("chromium"), &home) else { return };
    let (port, ws, http) = (free_port(), free_port(), free_port());
    // No broker_ws_url: the daemon tells the pages the broker's port and
    // that it serves TLS; they make the URL themselves.
    let mqtt = format!(
        "[mqtt]\nbridge_id = \"hall\"\n[mqtt.embedded]\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"127.0.0.1:{ws}\"\n\
         tls_cert_file = \"{dir}/hall-broker.pem\"\ntls_key_file = \"{dir}/hall-broker.key\"\n",
        dir = hall.dir.join("pki").display(),
    );
    let config = hall.config_with_mqtt(&["b1"], &mqtt);
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[http]\nenabled = false\n", &format!("[http]\nlisten = \"127.0.0.1:{http}\"\n"));
    std::fs::write(&config, text).unwrap();
    let mut daemon = hall.run(&config);
    for listener in [http, ws] {
        assert!(wait_listening(listener, Duration::from_secs(20)), "{}", hall.log());
    }
    // The broker's only WebSocket listener speaks TLS: a page can have
    // followed the feed over nothing but wss.
    assert!(!plain_websocket_accepted(ws), "no WebSocket in clear on {ws}");

    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let sans = crate::support::live::game_san(GAMES, 0);
    let positions = placements(GAMES, 0);

    // The board page, opened by the address in the certificate: the moves
    // played, and the position after the last of them.
    let site = format!("http://127.0.0.1:{http}");
    browser.open(&format!("{site}/board.html?event=event&round=1&board=b1"));
    let shown = browser.wait_for(
        Duration::from_secs(40),
        "const moves = [...document.querySelectorAll('#moves li')]; \
         if (moves.length < 6 || moves.some(li => li.querySelector('.san').textContent == '…')) return null; \
         return [moves.map(li => [Number(li.dataset.ply), li.querySelector('.san').textContent]), null, \
                 document.getElementById('link').dataset.state]",
    );
    let moves = shown[0].as_array().unwrap();
    for m in moves {
        let ply = m[0].as_u64().unwrap() as usize;
        assert_eq!(m[1], sans[ply - 1].as_str(), "ply {ply} as played: {shown}");
    }
    let last = moves.last().unwrap()[0].as_u64().unwrap() as usize;
    assert_eq!(drawn_position(&browser, "#board", &positions[last]), positions[last], "the board after ply {last}");
    assert_eq!(shown[2], "connected");

    // The overview: the board's card with its last move and position.
    browser.open(&format!("{site}/overview.html"));
    let card = browser.wait_for(
        Duration::from_secs(20),
        "const c = document.querySelector('.card[data-board=\"b1\"]'); const last = c?.querySelector('.last').textContent; \
         return last && [last]",
    );
    let text = card[0].as_str().unwrap();
    let (number, san) = text.split_once(' ').unwrap();
    let ply = if let Some(n) = number.strip_suffix('.') {
        2 * n.parse::<usize>().unwrap() - 1
    } else {
        2 * number.trim_end_matches('…').parse::<usize>().unwrap()
    };
    assert_eq!(san, sans[ply - 1], "the overview's last move: {text}");
    let drawn = drawn_position(&browser, ".card[data-board=\"b1\"]", &positions[ply]);
    assert_eq!(drawn, positions[ply], "the overview's board after {text}");

    // What the browser itself opened: WebSockets to wss://, the broker's
    // address and port, each upgraded.
    let log = browser.network_log();
    let opened: Vec<(&Value, &str)> = log
        .iter()
        .filter(|e| e["method"] == "Network.webSocketCreated")
        .map(|e| (&e["params"]["requestId"], e["params"]["url"].as_str().unwrap()))
        .collect();
    assert!(opened.len() >= 2, "a connection for each page: {opened:?}");
    for (id, url) in &opened {
        assert_eq!(*url, format!("wss://127.0.0.1:{ws}/mqtt"));
        let upgraded = log.iter().any(|e| {
            e["method"] == "Network.webSocketHandshakeResponseReceived"
                && &e["params"]["requestId"] == *id
                && e["params"]["response"]["status"] == 101
        });
        assert!(upgraded, "{url} upgraded: {log:?}");
    }

    // Opened by a name the certificate does not have, the page gets no
    // feed: the browser checks the broker's certificate, and finds the
    // name wrong (not the authority: that one it trusts).
    browser.open(&format!("http://localhost:{http}/board.html?event=event&round=1&board=b1"));
    let end = std::time::Instant::now() + Duration::from_secs(20);
    let mut log = Vec::new();
    let refused = loop {
        log.extend(browser.network_log());
        let refused = log.iter().find_map(|e| {
            (e["method"] == "Network.webSocketFrameError").then(|| e["params"]["errorMessage"].as_str().unwrap_or(""))
        });
        if let Some(refused) = refused {
            break refused.to_owned();
        }
        assert!(
            std::time::Instant::now() < end,
            "the page by the wrong name was neither connected nor refused: {log:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(refused.ends_with("net::ERR_CERT_COMMON_NAME_INVALID"), "{refused}");
    let urls: Vec<&str> = log
        .iter()
        .filter(|e| e["method"] == "Network.webSocketCreated")
        .filter_map(|e| e["params"]["url"].as_str())
        .collect();
    assert_eq!(urls[0], format!("wss://localhost:{ws}/mqtt"), "the page asks the host it came from");
    let link = browser.wait_for(
        Duration::from_secs(10),
        "const l = document.getElementById('link'); return l.dataset.state == 'disconnected' && l.textContent",
    );
    assert_eq!(link, "no connection to the feed: retrying");
    assert_eq!(browser.run("return document.querySelectorAll('#moves li').length"), 0, "no moves without the feed");

    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}

/// The position chessground drew inside `within` (a CSS selector), as
/// `{square: letter}` with White's letters in capitals: each piece's square
/// worked out from where it stands on the board, not from what chessground
/// says. Read again for a few seconds until it is `expected`, as a move may
/// still be gliding to its square.
fn drawn_position(browser: &crate::displays::Browser, within: &str, expected: &Value) -> Value {
    let script = format!(
        "const b = document.querySelector('{within} cg-board'); if (!b) return null; \
         const r = b.getBoundingClientRect(); const white = !b.closest('.orientation-black'); const out = {{}}; \
         for (const p of b.querySelectorAll('piece')) {{ \
           if (p.classList.contains('ghost') || p.classList.contains('fading')) continue; \
           const m = new DOMMatrix(getComputedStyle(p).transform); \
           let file = Math.round(m.m41 / (r.width / 8)), rank = 7 - Math.round(m.m42 / (r.height / 8)); \
           if (!white) {{ file = 7 - file; rank = 7 - rank; }} \
           const role = ['king', 'queen', 'rook', 'bishop', 'knight', 'pawn'].find(x => p.classList.contains(x)); \
           const letter = {{king: 'k', queen: 'q', rook: 'r', bishop: 'b', knight: 'n', pawn: 'p'}}[role]; \
           out['abcdefgh'[file] + (rank + 1)] = p.classList.contains('white') ? letter.toUpperCase() : letter; }} \
         return out;"
    );
    let end = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let drawn = browser.run(&script);
        if &drawn == expected || std::time::Instant::now() > end {
            return drawn;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
