//! TLS (issue 16), through the real binary, the real Mosquitto and
//! certificates made by `openssl` at test time: the managed broker serves
//! the feed over mqtts (and wss) to a client that trusts the test's CA,
//! and a plain MQTT connection to its port gets nothing; `boardcast ctl`
//! reaches it over TLS; and the daemon publishes to an external Mosquitto
//! that asks every client for a certificate.

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

const GAMES: &str = "livechess-vestland-round1.pgn";
const PUBLIC_STATE: &str = "boardcast/v1/public/event/1/b1/state";

/// Whether the test can run: Mosquitto and openssl are needed. Under CI a
/// missing one fails the test; elsewhere it is skipped, saying why.
fn tools_present() -> bool {
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
struct Pki {
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl").current_dir(dir).args(args).output().unwrap();
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A key pair and a certificate signing request for `name`, then the
/// certificate the CA signs with `extensions`.
fn issue(dir: &Path, name: &str, serial: &str, extensions: &str) {
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

fn make_pki(dir: &Path) -> Pki {
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
    issue(
        dir,
        "server",
        "2",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
    );
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
fn tls(pki: &Pki, client: bool) -> TlsConfiguration {
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
fn let_in(runtime: &tokio::runtime::Runtime, options: MqttOptions) -> bool {
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
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}
