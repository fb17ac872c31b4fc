//! MQTT in tests: a real Mosquitto as a child process on free ports, a TCP
//! proxy that can cut the link, and a subscriber that records everything it
//! receives. Nothing here assumes port 1883 is free (a machine may run its
//! own broker there).

use std::{
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::Value;

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something accepts connections on `port`.
pub fn wait_listening(port: u16, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// A Mosquitto broker run by the test, stopped when dropped.
pub struct Mosquitto {
    /// Its MQTT port.
    pub port: u16,
    /// Its WebSocket port, when started with [`Mosquitto::start_with_websockets`].
    pub ws_port: Option<u16>,
    dir: PathBuf,
    child: Option<Child>,
}

impl Mosquitto {
    /// Starts Mosquitto on a free port, its files in `dir`, keeping its
    /// sessions and retained messages across a clean restart when
    /// `persistent`. `None` (with the reason printed) when Mosquitto is not
    /// installed and the tests are not running under CI; under CI a missing
    /// Mosquitto fails the test, so that "no broker" never passes as "no
    /// loss".
    pub fn start(dir: &Path, persistent: bool) -> Option<Self> {
        Self::start_with(dir, persistent, None, "")
    }

    /// Like [`Mosquitto::start`] (not persistent), with a second listener
    /// speaking MQTT over WebSocket on a free port, as browsers do.
    pub fn start_with_websockets(dir: &Path) -> Option<Self> {
        Self::start_with(dir, false, Some(free_port()), "")
    }

    /// Like [`Mosquitto::start_with_websockets`], bridged from the broker
    /// on `upstream` as docs/service.md sets up a display-side replica:
    /// everything under `boardcast/v1/` comes in at QoS 1.
    pub fn start_bridged(dir: &Path, upstream: u16) -> Option<Self> {
        let bridge = format!(
            "connection hall-feed\naddress 127.0.0.1:{upstream}\ntopic boardcast/v1/# in 1\n\
             cleansession true\nrestart_timeout 1 5\n"
        );
        Self::start_with(dir, false, Some(free_port()), &bridge)
    }

    fn start_with(dir: &Path, persistent: bool, ws_port: Option<u16>, extra: &str) -> Option<Self> {
        let binary = mosquitto_binary();
        if Command::new(&binary).arg("-h").stdout(Stdio::null()).stderr(Stdio::null()).status().is_err() {
            let why = format!(
                "Mosquitto is not installed ({binary} not found; `apt-get install mosquitto`, or set MOSQUITTO_BIN)"
            );
            assert!(std::env::var_os("CI").is_none(), "{why}: under CI the MQTT tests must run");
            eprintln!("skipped: {why}");
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let port = free_port();
        let config = dir.join("mosquitto.conf");
        let mut text = format!(
            "set_tcp_nodelay true\nlistener {port} 127.0.0.1\nallow_anonymous true\nlog_dest file {log}\nlog_type all\n\
             max_queued_messages 100000\n",
            log = dir.join("mosquitto.log").display()
        );
        if let Some(ws) = ws_port {
            text.push_str(&format!("listener {ws} 127.0.0.1\nprotocol websockets\n"));
        }
        if persistent {
            text.push_str(&format!("persistence true\npersistence_location {}/\n", dir.display()));
        } else {
            text.push_str("persistence false\n");
        }
        text.push_str(extra);
        std::fs::write(&config, text).unwrap();
        let mut broker = Self { port, ws_port, dir: dir.to_path_buf(), child: None };
        broker.launch();
        Some(broker)
    }

    fn launch(&mut self) {
        let child = Command::new(mosquitto_binary())
            .arg("-c")
            .arg(self.dir.join("mosquitto.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        assert!(wait_listening(self.port, Duration::from_secs(10)), "Mosquitto listens on {}", self.port);
        if let Some(ws) = self.ws_port {
            assert!(wait_listening(ws, Duration::from_secs(10)), "Mosquitto listens for WebSocket on {ws}");
        }
    }

    /// Stops the broker as a service manager does (SIGTERM: it saves its
    /// sessions if persistent).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        self.launch();
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn mosquitto_binary() -> String {
    std::env::var("MOSQUITTO_BIN").unwrap_or_else(|_| {
        ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/bin/mosquitto"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap_or("mosquitto")
            .to_owned()
    })
}

/// A TCP proxy in front of a broker that can cut every connection through
/// it and refuse new ones, as a pulled network cable does, or swallow what
/// the client sends while keeping the connection open, as a congested or
/// half-broken link does (the client's messages are then in flight, never
/// acknowledged).
pub struct Proxy {
    /// The port to connect to instead of the broker's.
    pub port: u16,
    cut: Arc<AtomicBool>,
    swallow: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Proxy {
    /// A proxy to `upstream`, served on `runtime`.
    pub fn start(runtime: &tokio::runtime::Runtime, upstream: u16) -> Self {
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let swallow = Arc::new(AtomicBool::new(false));
        let (generation, _) = tokio::sync::watch::channel(0u64);
        let generation = Arc::new(generation);
        let (cut2, swallow2, generation2) = (cut.clone(), swallow.clone(), generation.clone());
        runtime.spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { continue };
                if cut2.load(Ordering::SeqCst) || swallow2.load(Ordering::SeqCst) {
                    continue; // dropped: refused
                }
                let mut cancelled = generation2.subscribe();
                let swallow = swallow2.clone();
                tokio::spawn(async move {
                    let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await else { return };
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let up = async {
                        let mut buf = [0u8; 4096];
                        loop {
                            let n = match tokio::io::AsyncReadExt::read(&mut client_read, &mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => n,
                            };
                            if swallow.load(Ordering::SeqCst) {
                                continue;
                            }
                            if tokio::io::AsyncWriteExt::write_all(&mut server_write, &buf[..n]).await.is_err() {
                                return;
                            }
                        }
                    };
                    let down = tokio::io::copy(&mut server_read, &mut client_write);
                    tokio::select! {
                        () = up => {}
                        _ = down => {}
                        _ = cancelled.changed() => {}
                    }
                });
            }
        });
        Self { port, cut, swallow, generation }
    }

    /// Cuts every connection and refuses new ones.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    /// Keeps connections open but swallows what clients send.
    pub fn swallow(&self) {
        self.swallow.store(true, Ordering::SeqCst);
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
        self.swallow.store(false, Ordering::SeqCst);
    }
}

/// A message as a subscriber got it.
#[derive(Clone, Debug)]
pub struct Received {
    /// The topic.
    pub topic: String,
    /// The payload as JSON (`Null` for an empty one).
    pub json: Value,
    /// Whether the broker marked it retained (sent on subscribing).
    pub retained: bool,
    /// When it arrived.
    pub at: Instant,
}

/// A subscriber recording every message on `filter`, subscribing again at
/// every (re)connection with a persistent session at QoS 1, so that a
/// broker that kept its session delivers what came meanwhile.
pub struct Subscriber {
    received: Arc<Mutex<Vec<Received>>>,
    connections: Arc<Mutex<u32>>,
    /// Subscriptions the broker acknowledged (one per connection).
    subscribed: Arc<Mutex<u32>>,
}

impl Subscriber {
    /// Subscribes on `runtime` to `filter` at the broker on `port`.
    pub fn start(runtime: &tokio::runtime::Runtime, port: u16, filter: &str, id: &str) -> Self {
        Self::start_with(runtime, MqttOptions::new(id, "127.0.0.1", port), filter)
    }

    /// The same, logged in as `user` with `password`.
    pub fn start_as(
        runtime: &tokio::runtime::Runtime,
        port: u16,
        filter: &str,
        id: &str,
        user: &str,
        password: &str,
    ) -> Self {
        let mut options = MqttOptions::new(id, "127.0.0.1", port);
        options.set_credentials(user, password);
        Self::start_with(runtime, options, filter)
    }

    /// The same over WebSocket, as a browser display connects.
    pub fn start_ws(runtime: &tokio::runtime::Runtime, port: u16, filter: &str, id: &str) -> Self {
        let mut options = MqttOptions::new(id, format!("ws://127.0.0.1:{port}/mqtt"), port);
        options.set_transport(rumqttc::Transport::Ws);
        Self::start_with(runtime, options, filter)
    }

    /// Subscribes with these options (TLS, a client certificate…).
    pub fn start_with(runtime: &tokio::runtime::Runtime, mut options: MqttOptions, filter: &str) -> Self {
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(Mutex::new(0));
        let subscribed = Arc::new(Mutex::new(0));
        options.set_max_packet_size(1 << 20, 1 << 20).set_clean_session(false).set_keep_alive(Duration::from_secs(5));
        let (client, mut eventloop) = AsyncClient::new(options, 64);
        let (received2, connections2, subscribed2, filter) =
            (received.clone(), connections.clone(), subscribed.clone(), filter.to_owned());
        runtime.spawn(async move {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        *connections2.lock().unwrap() += 1;
                        let _ = client.subscribe(filter.clone(), QoS::AtLeastOnce).await;
                    }
                    Ok(Event::Incoming(Packet::SubAck(_))) => *subscribed2.lock().unwrap() += 1,
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let json = if p.payload.is_empty() {
                            Value::Null
                        } else {
                            serde_json::from_slice(&p.payload).unwrap()
                        };
                        received2.lock().unwrap().push(Received {
                            topic: p.topic.clone(),
                            json,
                            retained: p.retain,
                            at: Instant::now(),
                        });
                    }
                    Ok(_) => {}
                    Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                }
            }
        });
        Self { received, connections, subscribed }
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// How many times it connected.
    pub fn connections(&self) -> u32 {
        *self.connections.lock().unwrap()
    }

    /// Waits until the broker has acknowledged the subscription, up to
    /// `limit`: what is published after that reaches this subscriber (a
    /// message that is not retained and came before would be missed).
    pub fn wait_subscribed(&self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if *self.subscribed.lock().unwrap() > 0 {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Waits until `done` holds for what was received, up to `limit`.
    pub fn wait_for(&self, limit: Duration, done: impl Fn(&[Received]) -> bool) -> bool {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if done(&self.received()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

/// The game a subscriber saw on a board's `moves` topic: duplicates (same
/// session, game and seq) dropped, then made, amended, retracted and completed
/// applied in seq order. Returns the SAN of every ply and how many
/// duplicates there were.
pub fn game_from_moves(received: &[Received], topic: &str) -> (Vec<String>, usize) {
    let mut seen = std::collections::BTreeMap::new();
    let mut duplicates = 0;
    for r in received.iter().filter(|r| r.topic == topic) {
        let key = (
            r.json["session"].as_str().unwrap().to_owned(),
            r.json["game"].as_u64().unwrap(),
            r.json["seq"].as_u64().unwrap(),
        );
        if seen.insert(key, r.json.clone()).is_some() {
            duplicates += 1;
        }
    }
    let mut plies: Vec<String> = Vec::new();
    for message in seen.values() {
        let ply = message["ply"].as_u64().unwrap() as usize;
        let san = message["san"].as_str().unwrap().to_owned();
        match message["kind"].as_str().unwrap() {
            "made" => {
                assert_eq!(plies.len() + 1, ply, "made ply {ply} follows ply {}: {message}", plies.len());
                plies.push(san);
            }
            "amended" => plies[ply - 1] = san,
            "retracted" => {
                assert_eq!(plies.len(), ply, "the last ply is retracted: {message}");
                plies.pop();
            }
            "completed" => assert_eq!(plies.get(ply - 1), Some(&san), "ply {ply} completed as made: {message}"),
            other => panic!("unknown kind {other}"),
        }
    }
    (plies, duplicates)
}

/// The address a test's embedded broker listens on.
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}
