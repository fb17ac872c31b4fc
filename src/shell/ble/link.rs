//! The task that owns a Bluetooth LE board's connection, as `port.rs` owns
//! a serial board's port: it finds the board through BlueZ (by address or
//! advertised name, discovering while BlueZ does not know it), connects,
//! waits until BlueZ has read its services, subscribes to the family's
//! notify characteristic and hands each notification to the driver as the
//! bytes a serial board would send; what the driver sends is written to
//! the family's write characteristic. A link that drops (`Connected` goes
//! false, the device vanishes, a write fails, the board goes silent) is
//! reported as a pulled cable and made again with back-off. It decides
//! nothing about chess: the family's decoder and link in the core do.

use std::{path::PathBuf, time::Duration};

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;
use zbus::{
    Connection, MatchRule, MessageStream,
    message::Type,
    zvariant::{OwnedObjectPath, Value},
};

use super::bluez::{self, ManagedObjects, Properties};
use crate::{
    config::BluetoothTarget,
    shell::{
        clock::SessionClock,
        driver::{Input, InputBody, ToPort},
        port::{PortChannels, PortEvent},
        record::Recorded,
    },
};
use boardcast_core::protocol::{BoardInfo, Family};

/// How to reach a Bluetooth LE board.
#[derive(Clone, Debug)]
pub struct BleSettings {
    /// Which board.
    pub target: BluetoothTarget,
    /// Its family (the GATT service and characteristics to use).
    pub family: &'static Family,
    /// The longest wait between two attempts to connect.
    pub reconnect_max: Duration,
}

/// The first wait after a failed attempt; doubled after each until
/// `reconnect_max`.
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// How long BlueZ discovers before an attempt to find an unknown board
/// gives up (the next attempt discovers again).
const DISCOVER_FOR: Duration = Duration::from_secs(10);
/// How long `Connect` and reading the services may take.
const CONNECT_FOR: Duration = Duration::from_secs(30);
/// Notifications queued between two reads of the driver's side: a board
/// sends a few per move; a full queue would drop signals.
const QUEUED: usize = 4096;

/// Keeps the board connected until `shutdown`, reconnecting as needed.
pub async fn run(settings: BleSettings, mut io: PortChannels, clock: SessionClock, shutdown: CancellationToken) {
    let mut delay = FIRST_RETRY.min(settings.reconnect_max);
    let mut bus: Option<Connection> = None;
    loop {
        if shutdown.is_cancelled() {
            return;
        }
        let attempt = tokio::select! {
            attempt = connect(&settings, &mut bus) => attempt,
            () = shutdown.cancelled() => return,
        };
        let mut board = match attempt {
            Ok(board) => board,
            Err(error) => {
                // A bus that went away (dbus restarted) is not used again.
                bus = None;
                let _ = io.events.send(PortEvent::OpenFailed { error, retry_in: delay });
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = shutdown.cancelled() => return,
                }
                delay = (delay * 2).min(settings.reconnect_max);
                continue;
            }
        };
        delay = FIRST_RETRY.min(settings.reconnect_max);
        let _ = io.events.send(PortEvent::Opened { path: PathBuf::from(format!("Bluetooth LE {}", board.address)) });
        // Anything queued for the previous connection is stale: the session
        // sends the start-up sequence again.
        while io.from_driver.try_recv().is_ok() {}
        if io.inputs.send(Input { t: clock.now(), body: InputBody::Connected }).await.is_err() {
            return;
        }
        if let Some(percent) = board.battery
            && io
                .inputs
                .send(Input { t: clock.now(), body: InputBody::Info(BoardInfo::Battery(percent)) })
                .await
                .is_err()
        {
            return;
        }
        let reason = serve(&mut board, &mut io, &clock, &shutdown).await;
        bus = None;
        let _ = io.events.send(PortEvent::Closed { reason: reason.clone() });
        if io.inputs.send(Input { t: clock.now(), body: InputBody::Disconnected }).await.is_err() {
            return;
        }
        if shutdown.is_cancelled() {
            return;
        }
        // BlueZ needs a moment after a drop before it connects again.
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = shutdown.cancelled() => return,
        }
    }
}

/// A connected board: where its characteristics are, and the signals that
/// tell about it.
struct Connected {
    bus: Connection,
    address: String,
    device: String,
    notify: String,
    write: String,
    /// `command` (write without response) where the characteristic
    /// allows it, else `request`.
    write_type: &'static str,
    /// The least time between two writes (the family's).
    write_spacing: Duration,
    /// When the last write went out.
    last_write: Option<tokio::time::Instant>,
    /// What waits for its turn (spaced writes), oldest first.
    pending: std::collections::VecDeque<Vec<u8>>,
    battery: Option<u8>,
    /// Property changes of the device and its characteristics.
    changes: MessageStream,
    /// Objects coming and going (the device forgotten, its battery added).
    objects: MessageStream,
}

/// Finds the board, connects it, and subscribes to its notifications;
/// the error says why not, in words for the log.
async fn connect(settings: &BleSettings, bus: &mut Option<Connection>) -> Result<Connected, String> {
    let connection = match bus {
        Some(connection) => connection.clone(),
        None => {
            let connection = Connection::system().await.map_err(|e| {
                format!("no system D-Bus to reach BlueZ through ({e}); install and start dbus and bluez")
            })?;
            *bus = Some(connection.clone());
            connection
        }
    };
    let no_bluez = |e: zbus::Error| {
        format!("BlueZ did not answer on the system bus ({e}); is bluetoothd running (`systemctl status bluetooth`)?")
    };
    let objects = bluez::managed_objects(&connection).await.map_err(no_bluez)?;
    let (device, address) = match find_device(&objects, &settings.target) {
        Some(found) => found,
        None => discover(&connection, &objects, &settings.target).await?,
    };
    let changes = stream(
        &connection,
        MatchRule::builder()
            .msg_type(Type::Signal)
            .sender(bluez::BLUEZ)
            .and_then(|r| r.interface(bluez::PROPERTIES))
            .and_then(|r| r.member("PropertiesChanged"))
            .and_then(|r| r.path_namespace(device.as_str())),
    )
    .await?;
    let objects_stream = stream(
        &connection,
        MatchRule::builder()
            .msg_type(Type::Signal)
            .sender(bluez::BLUEZ)
            .and_then(|r| r.interface(bluez::OBJECT_MANAGER))
            .and_then(|r| r.path("/")),
    )
    .await?;
    let target = &settings.target;
    let connected = bluez::property(&connection, &device, bluez::DEVICE, "Connected")
        .await
        .ok()
        .and_then(|value| bool::try_from(&value).ok())
        .unwrap_or(false);
    if !connected {
        match tokio::time::timeout(CONNECT_FOR, bluez::call(&connection, &device, bluez::DEVICE, "Connect", &())).await
        {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(format!(
                    "BlueZ could not connect to {target} ({e}); is it switched on, in range, and not connected to a phone or another program?"
                ));
            }
            Err(_) => return Err(format!("connecting to {target} took more than {} s", CONNECT_FOR.as_secs())),
        }
    }
    wait_services(&connection, &device, target).await?;
    let objects = bluez::managed_objects(&connection).await.map_err(no_bluez)?;
    let gatt = settings
        .family
        .bluetooth
        .as_ref()
        .ok_or_else(|| format!("{} boards have no Bluetooth LE", settings.family.name))?;
    let service = objects
        .iter()
        .find(|(_, i)| {
            i.get(bluez::SERVICE).is_some_and(|s| {
                bluez::path(s, "Device").as_deref() == Some(device.as_str())
                    && bluez::text(s, "UUID").is_some_and(|u| u.eq_ignore_ascii_case(gatt.service))
            })
        })
        .map(|(path, _)| path.to_string())
        .ok_or_else(|| {
            format!(
                "{target} has no GATT service {} ({} boards have it): is it a {}? (`boardcast list-ports` shows the boards in range)",
                gatt.service, settings.family.name, settings.family.title
            )
        })?;
    let characteristic = |uuid: &str| {
        objects.iter().find_map(|(path, i)| {
            let c = i.get(bluez::CHARACTERISTIC)?;
            (bluez::path(c, "Service").as_deref() == Some(service.as_str())
                && bluez::text(c, "UUID").is_some_and(|u| u.eq_ignore_ascii_case(uuid)))
            .then(|| (path.to_string(), c))
        })
    };
    let missing = |uuid: &str, what: &str| {
        format!("{target} has no {what} characteristic {uuid} in its service {}", gatt.service)
    };
    let (notify, _) = characteristic(gatt.notify).ok_or_else(|| missing(gatt.notify, "notify"))?;
    let (write, write_props) = characteristic(gatt.write).ok_or_else(|| missing(gatt.write, "write"))?;
    let write_type = if bluez::texts(write_props, "Flags").iter().any(|f| f == "write-without-response") {
        "command"
    } else {
        "request"
    };
    let battery = objects
        .get(&OwnedObjectPath::try_from(device.as_str()).map_err(|e| e.to_string())?)
        .and_then(|i| i.get(bluez::BATTERY))
        .and_then(|b| bluez::byte(b, "Percentage"));
    bluez::call(&connection, &notify, bluez::CHARACTERISTIC, "StartNotify", &())
        .await
        .map_err(|e| format!("{target} would not notify on {} ({e})", gatt.notify))?;
    Ok(Connected {
        bus: connection,
        address,
        device,
        notify,
        write,
        write_type,
        write_spacing: gatt.write_spacing,
        last_write: None,
        pending: std::collections::VecDeque::new(),
        battery,
        changes,
        objects: objects_stream,
    })
}

/// A stream of the signals `rule` picks, subscribed now (before the calls
/// whose effects it is to see).
async fn stream(
    connection: &Connection,
    rule: zbus::Result<zbus::match_rule::Builder<'_>>,
) -> Result<MessageStream, String> {
    let rule = rule.map_err(|e| e.to_string())?.build();
    MessageStream::for_match_rule(rule, connection, Some(QUEUED))
        .await
        .map_err(|e| format!("cannot follow BlueZ's signals ({e})"))
}

/// The device BlueZ knows as `target`: its object path and address.
fn find_device(objects: &ManagedObjects, target: &BluetoothTarget) -> Option<(String, String)> {
    let mut found: Vec<(String, String)> = objects
        .iter()
        .filter_map(|(path, interfaces)| {
            let device = interfaces.get(bluez::DEVICE)?;
            let address = bluez::text(device, "Address")?;
            let matches = match target {
                BluetoothTarget::Address(wanted) => address.eq_ignore_ascii_case(wanted),
                BluetoothTarget::Name(wanted) => ["Name", "Alias"]
                    .iter()
                    .any(|key| bluez::text(device, key).is_some_and(|name| name.trim().eq_ignore_ascii_case(wanted))),
            };
            matches.then(|| (path.to_string(), address))
        })
        .collect();
    // Two adapters may know the same board: the first, always the same.
    found.sort();
    found.into_iter().next()
}

/// Discovers LE devices until BlueZ knows `target` or [`DISCOVER_FOR`]
/// has passed.
async fn discover(
    connection: &Connection,
    objects: &ManagedObjects,
    target: &BluetoothTarget,
) -> Result<(String, String), String> {
    let adapters = bluez::adapters(objects);
    if adapters.is_empty() {
        return Err("BlueZ has no Bluetooth adapter; plug one in, or unblock it (`rfkill list`)".into());
    }
    for adapter in &adapters {
        // Only LE devices; some adapters will not discover before a filter
        // is set.
        let filter = std::collections::HashMap::from([("Transport", Value::from("le"))]);
        let started = async {
            bluez::call(connection, adapter, bluez::ADAPTER, "SetDiscoveryFilter", &(filter,)).await?;
            bluez::call(connection, adapter, bluez::ADAPTER, "StartDiscovery", &()).await
        };
        if let Err(e) = started.await {
            return Err(format!(
                "the Bluetooth adapter {adapter} would not scan ({e}); is it powered (`bluetoothctl power on`)?"
            ));
        }
    }
    let until = tokio::time::Instant::now() + DISCOVER_FOR;
    let found = loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if let Ok(objects) = bluez::managed_objects(connection).await
            && let Some(found) = find_device(&objects, target)
        {
            break Some(found);
        }
        if tokio::time::Instant::now() >= until {
            break None;
        }
    };
    // Connecting while discovering is slow or fails on many adapters.
    for adapter in &adapters {
        let _ = bluez::call(connection, adapter, bluez::ADAPTER, "StopDiscovery", &()).await;
    }
    found.ok_or_else(|| {
        format!(
            "no Bluetooth LE device {target} in range after {} s of scanning; is it switched on? (`boardcast list-ports` shows the boards in range)",
            DISCOVER_FOR.as_secs()
        )
    })
}

/// Waits until BlueZ has read the device's services.
async fn wait_services(connection: &Connection, device: &str, target: &BluetoothTarget) -> Result<(), String> {
    let until = tokio::time::Instant::now() + CONNECT_FOR;
    loop {
        let resolved = bluez::property(connection, device, bluez::DEVICE, "ServicesResolved")
            .await
            .ok()
            .and_then(|value| bool::try_from(&value).ok());
        if resolved == Some(true) {
            return Ok(());
        }
        if tokio::time::Instant::now() >= until {
            return Err(format!("BlueZ did not read {target}'s services within {} s", CONNECT_FOR.as_secs()));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Moves bytes until the link drops, the driver asks to reconnect, or
/// shutdown. Returns why it stopped.
async fn serve(
    board: &mut Connected,
    io: &mut PortChannels,
    clock: &SessionClock,
    shutdown: &CancellationToken,
) -> String {
    loop {
        let (next_write, writing) = (board.next_write(), !board.pending.is_empty());
        tokio::select! {
            change = board.changes.next() => {
                let Some(Ok(message)) = change else { return "the D-Bus connection to BlueZ closed".into() };
                let Some(path) = message.header().path().map(ToString::to_string) else { continue };
                let Ok((interface, changed, _)) =
                    message.body().deserialize::<(String, Properties, Vec<String>)>()
                else {
                    continue;
                };
                let input = match interface.as_str() {
                    bluez::CHARACTERISTIC if path == board.notify => {
                        match bluez::bytes(&changed, "Value").filter(|b| !b.is_empty()) {
                            // The driver records what it is given (so the
                            // capture holds the session's inputs in order).
                            Some(bytes) => InputBody::Rx(bytes),
                            None => continue,
                        }
                    }
                    bluez::DEVICE if path == board.device => {
                        if changed.contains_key("Connected") && !bluez::flag(&changed, "Connected") {
                            return "the Bluetooth LE link dropped (out of range, switched off, or its battery is flat)".into();
                        }
                        continue;
                    }
                    bluez::BATTERY if path == board.device => match bluez::byte(&changed, "Percentage") {
                        Some(percent) => InputBody::Info(BoardInfo::Battery(percent)),
                        None => continue,
                    },
                    _ => continue,
                };
                if io.inputs.send(Input { t: clock.now(), body: input }).await.is_err() {
                    return "shutting down".into();
                }
            }
            object = board.objects.next() => {
                let Some(Ok(message)) = object else { return "the D-Bus connection to BlueZ closed".into() };
                let member = message.header().member().map(ToString::to_string);
                match member.as_deref() {
                    Some("InterfacesRemoved") => {
                        if let Ok((path, interfaces)) = message.body().deserialize::<(OwnedObjectPath, Vec<String>)>()
                            && path.as_str() == board.device
                            && interfaces.iter().any(|i| i == bluez::DEVICE)
                        {
                            return "BlueZ no longer knows the board (removed, or out of range for long)".into();
                        }
                    }
                    Some("InterfacesAdded") => {
                        if let Ok((path, interfaces)) =
                            message.body().deserialize::<(OwnedObjectPath, std::collections::HashMap<String, Properties>)>()
                            && path.as_str() == board.device
                            && let Some(percent) = interfaces.get(bluez::BATTERY).and_then(|b| bluez::byte(b, "Percentage"))
                        {
                            let body = InputBody::Info(BoardInfo::Battery(percent));
                            if io.inputs.send(Input { t: clock.now(), body }).await.is_err() {
                                return "shutting down".into();
                            }
                        }
                    }
                    _ => {}
                }
            }
            command = io.from_driver.recv() => match command {
                Some(ToPort::Send(bytes)) => board.pending.push_back(bytes),
                Some(ToPort::Reconnect) => {
                    hang_up(board).await;
                    return "the board went silent".into();
                }
                None => {
                    hang_up(board).await;
                    return "shutting down".into();
                }
            },
            // A board that wants its frames spaced (a Millennium) drops
            // what comes too soon after the last: each write waits for its
            // turn here, while notifications go on being read.
            () = tokio::time::sleep_until(next_write), if writing => {
                let bytes = board.pending.pop_front().expect("checked by the guard");
                board.last_write = Some(tokio::time::Instant::now());
                let options = std::collections::HashMap::from([("type", Value::from(board.write_type))]);
                if let Err(error) =
                    bluez::call(&board.bus, &board.write, bluez::CHARACTERISTIC, "WriteValue", &(&bytes, options)).await
                {
                    hang_up(board).await;
                    return format!("writing failed: {error}");
                }
                if let Some(recorder) = &io.recorder {
                    let _ = recorder.send(Recorded::Tx(bytes).at(clock.now()).into());
                }
            }
            () = shutdown.cancelled() => {
                hang_up(board).await;
                return "shutting down".into();
            }
        }
    }
}

impl Connected {
    /// When the next write may go out.
    fn next_write(&self) -> tokio::time::Instant {
        let now = tokio::time::Instant::now();
        self.last_write.map_or(now, |last| (last + self.write_spacing).max(now))
    }
}

/// Ends the connection (best effort: BlueZ may have ended it already), so
/// that the board can be connected again, by this daemon or another.
async fn hang_up(board: &Connected) {
    let _ = bluez::call(&board.bus, &board.notify, bluez::CHARACTERISTIC, "StopNotify", &()).await;
    let _ = bluez::call(&board.bus, &board.device, bluez::DEVICE, "Disconnect", &()).await;
}
