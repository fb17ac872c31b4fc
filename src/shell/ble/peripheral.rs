//! A board's side of a Bluetooth LE link, for `boardcast simulate
//! --bluetooth`: the board is added to the mock BlueZ (the python-dbusmock
//! template in tests/fixtures/bluez-gatt, installed by the package under
//! /usr/share/boardcast/bluez-gatt) with its family's GATT service, its
//! bytes go out as notifications and what the host writes comes back.
//!
//! Only the mock can do this: BlueZ's D-Bus API lets a program be the
//! central that reads a board, not stand in for a remote board, so
//! against a real BlueZ this says what to start instead.

use std::collections::HashMap;

use boardcast_core::protocol::Bluetooth;
use futures_util::StreamExt;
use zbus::{
    Connection, MatchRule, Message, MessageStream,
    message::Type,
    zvariant::{OwnedObjectPath, OwnedValue},
};

const BLUEZ: &str = "org.bluez";
const MOCK: &str = "org.boardcast.Mock";
const DEVICE: &str = "org.bluez.Device1";
const CHARACTERISTIC: &str = "org.bluez.GattCharacteristic1";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// Where the docs tell how to start the mock.
const HOW: &str = "start the mock BlueZ on a private D-Bus and point DBUS_SYSTEM_BUS_ADDRESS at it, as docs/boards.md \
                   (\"Try a Bluetooth family without the board\") says";

/// Why a board cannot be played over Bluetooth LE.
#[derive(Debug, thiserror::Error)]
pub enum PeripheralError {
    /// No bus at all.
    #[error("no D-Bus to play the board on ({0}): {HOW}")]
    NoBus(zbus::Error),
    /// A bus, but nothing answers as BlueZ.
    #[error("nothing answers as BlueZ on the D-Bus ({0}): {HOW}")]
    NoBluez(zbus::Error),
    /// BlueZ answers, but it is not the mock.
    #[error("the BlueZ on the D-Bus is not the mock ({0}): a real BlueZ cannot stand in for a board; {HOW}")]
    NotTheMock(zbus::Error),
    /// The mock would not add the board.
    #[error("the mock BlueZ would not add the board at {address} ({error}); is one there already? Restart the mock")]
    Refused {
        /// The board's address.
        address: String,
        /// What the mock said.
        error: zbus::Error,
    },
    /// The bus failed later on.
    #[error("the D-Bus failed while playing the board ({0})")]
    Bus(#[from] zbus::Error),
}

/// Something the host did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// The host wrote these bytes to the board.
    Wrote(Vec<u8>),
    /// The host connected, disconnected, or started or stopped the
    /// notifications: see [`Peripheral::host_present`].
    Presence,
}

/// A board on the mock BlueZ.
#[derive(Debug)]
pub struct Peripheral {
    bus: Connection,
    address: String,
    device: OwnedObjectPath,
    notify: OwnedObjectPath,
    write: OwnedObjectPath,
    /// The signals under BlueZ's objects.
    signals: MessageStream,
    connected: bool,
    notifying: bool,
}

impl Peripheral {
    /// Adds a board at `address` advertising `name`, with the family's
    /// service and characteristics, to the mock BlueZ on the system bus
    /// (`DBUS_SYSTEM_BUS_ADDRESS`).
    ///
    /// # Errors
    ///
    /// No bus, no BlueZ, a BlueZ that is not the mock, or a board there
    /// already at that address.
    pub async fn add(address: &str, name: &str, bluetooth: &Bluetooth) -> Result<Self, PeripheralError> {
        let bus = Connection::system().await.map_err(PeripheralError::NoBus)?;
        // Listening before the board exists: a quick host's first moves
        // are not missed.
        let rule = MatchRule::builder().msg_type(Type::Signal).path_namespace("/org/bluez")?.build();
        let signals = MessageStream::for_match_rule(rule, &bus, Some(1024)).await?;
        let added = bus
            .call_method(
                Some(BLUEZ),
                "/",
                Some(MOCK),
                "AddBoard",
                &(address, name, bluetooth.service, bluetooth.notify, bluetooth.write),
            )
            .await;
        let device: OwnedObjectPath = match added {
            Ok(reply) => reply.body().deserialize()?,
            Err(error) => return Err(why_not_added(address, error)),
        };
        let reply = bus
            .call_method(Some(BLUEZ), "/", Some("org.freedesktop.DBus.ObjectManager"), "GetManagedObjects", &())
            .await?;
        let objects: HashMap<OwnedObjectPath, HashMap<String, HashMap<String, OwnedValue>>> =
            reply.body().deserialize()?;
        let characteristic = |uuid: &str| {
            objects
                .iter()
                .filter(|(path, _)| path.as_str().starts_with(device.as_str()))
                .find(|(_, interfaces)| {
                    interfaces
                        .get(CHARACTERISTIC)
                        .and_then(|props| props.get("UUID"))
                        .and_then(|value| <&str>::try_from(value).ok())
                        .is_some_and(|u| u.eq_ignore_ascii_case(uuid))
                })
                .map(|(path, _)| path.clone())
        };
        let missing = || zbus::Error::Failure("the mock made the board without its characteristics".into());
        let notify = characteristic(bluetooth.notify).ok_or_else(missing)?;
        let write = characteristic(bluetooth.write).ok_or_else(missing)?;
        Ok(Self {
            bus,
            address: address.to_owned(),
            device,
            notify,
            write,
            signals,
            connected: false,
            notifying: false,
        })
    }

    /// Whether a host is connected and has started the notifications.
    pub const fn host_present(&self) -> bool {
        self.connected && self.notifying
    }

    /// Whether a host is connected.
    pub const fn connected(&self) -> bool {
        self.connected
    }

    /// Waits for the host to do something.
    ///
    /// # Errors
    ///
    /// When the bus fails.
    pub async fn heard(&mut self) -> Result<Heard, PeripheralError> {
        while let Some(message) = self.signals.next().await {
            if let Some(heard) = self.take(&message?) {
                return Ok(heard);
            }
        }
        Err(PeripheralError::Bus(zbus::Error::Failure("the D-Bus connection closed".into())))
    }

    /// What a signal says about this board's host, if anything.
    fn take(&mut self, message: &Message) -> Option<Heard> {
        let header = message.header();
        let path = header.path()?;
        let member = header.member()?;
        if *path == *self.write && member.as_str() == "Written" {
            let bytes: Vec<u8> = message.body().deserialize().ok()?;
            return Some(Heard::Wrote(bytes));
        }
        if member.as_str() != "PropertiesChanged" || header.interface().map(|i| i.as_str()) != Some(PROPERTIES) {
            return None;
        }
        let (interface, changed, _): (String, HashMap<String, OwnedValue>, Vec<String>) =
            message.body().deserialize().ok()?;
        let flag = |key: &str| changed.get(key).and_then(|value| bool::try_from(value).ok());
        if *path == *self.device && interface == DEVICE {
            let connected = flag("Connected")?;
            self.connected = connected;
            if !connected {
                self.notifying = false;
            }
            return Some(Heard::Presence);
        }
        if *path == *self.notify && interface == CHARACTERISTIC {
            self.notifying = flag("Notifying")?;
            return Some(Heard::Presence);
        }
        None
    }

    /// Sends `bytes` as one notification (lost, as on the air, when no
    /// host listens).
    ///
    /// # Errors
    ///
    /// When the bus fails.
    pub async fn notify(&self, bytes: &[u8]) -> Result<(), PeripheralError> {
        self.bus.call_method(Some(BLUEZ), "/", Some(MOCK), "Notify", &(self.address.as_str(), bytes)).await?;
        Ok(())
    }

    /// The board drops the link (the host sees it disconnect).
    ///
    /// # Errors
    ///
    /// When the bus fails.
    pub async fn drop_link(&self) -> Result<(), PeripheralError> {
        self.bus.call_method(Some(BLUEZ), "/", Some(MOCK), "Drop", &(self.address.as_str(),)).await?;
        Ok(())
    }
}

/// Why the mock did not add the board: by the error's name.
fn why_not_added(address: &str, error: zbus::Error) -> PeripheralError {
    let name = match &error {
        zbus::Error::MethodError(name, _, _) => name.as_str().to_owned(),
        _ => String::new(),
    };
    match name.as_str() {
        "org.freedesktop.DBus.Error.ServiceUnknown" | "org.freedesktop.DBus.Error.NameHasNoOwner" => {
            PeripheralError::NoBluez(error)
        }
        "org.freedesktop.DBus.Error.UnknownMethod"
        | "org.freedesktop.DBus.Error.UnknownInterface"
        | "org.freedesktop.DBus.Error.UnknownObject" => PeripheralError::NotTheMock(error),
        _ => PeripheralError::Refused { address: address.to_owned(), error },
    }
}
