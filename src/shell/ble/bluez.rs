//! The few BlueZ D-Bus calls the Bluetooth LE link and the scan make, and
//! how to read what BlueZ answers: its object tree (`GetManagedObjects`),
//! a device's, service's or characteristic's properties.

use std::collections::HashMap;

use zbus::{
    Connection,
    zvariant::{DynamicType, OwnedObjectPath, OwnedValue},
};

/// BlueZ's name on the bus.
pub const BLUEZ: &str = "org.bluez";
/// An adapter (`/org/bluez/hci0`).
pub const ADAPTER: &str = "org.bluez.Adapter1";
/// A device BlueZ knows (`/org/bluez/hci0/dev_C0_FF_EE_00_00_01`).
pub const DEVICE: &str = "org.bluez.Device1";
/// A GATT service of a connected device.
pub const SERVICE: &str = "org.bluez.GattService1";
/// A GATT characteristic of a service.
pub const CHARACTERISTIC: &str = "org.bluez.GattCharacteristic1";
/// The battery level BlueZ reads from a device's battery service.
pub const BATTERY: &str = "org.bluez.Battery1";
/// Where property changes are signalled.
pub const PROPERTIES: &str = "org.freedesktop.DBus.Properties";
/// Where objects coming and going are signalled.
pub const OBJECT_MANAGER: &str = "org.freedesktop.DBus.ObjectManager";

/// One object's properties, by interface.
pub type Interfaces = HashMap<String, Properties>;
/// One interface's properties.
pub type Properties = HashMap<String, OwnedValue>;
/// What `GetManagedObjects` returns: each object's interfaces and their
/// properties.
pub type ManagedObjects = HashMap<OwnedObjectPath, Interfaces>;

/// Every object BlueZ has: adapters, devices, their services and
/// characteristics.
///
/// # Errors
///
/// BlueZ is not on the bus, or answered something else.
pub async fn managed_objects(bus: &Connection) -> zbus::Result<ManagedObjects> {
    let reply = bus.call_method(Some(BLUEZ), "/", Some(OBJECT_MANAGER), "GetManagedObjects", &()).await?;
    reply.body().deserialize()
}

/// Calls `method` of BlueZ's object `path`, interface `interface`.
///
/// # Errors
///
/// What BlueZ answered (`org.bluez.Error.Failed: …`), or no BlueZ.
pub async fn call<B>(bus: &Connection, path: &str, interface: &str, method: &str, body: &B) -> zbus::Result<()>
where
    B: serde::Serialize + DynamicType,
{
    bus.call_method(Some(BLUEZ), path, Some(interface), method, body).await.map(|_| ())
}

/// One property of BlueZ's object `path`.
///
/// # Errors
///
/// No such object or property, or no BlueZ.
pub async fn property(bus: &Connection, path: &str, interface: &str, name: &str) -> zbus::Result<OwnedValue> {
    let reply = bus.call_method(Some(BLUEZ), path, Some(PROPERTIES), "Get", &(interface, name)).await?;
    reply.body().deserialize()
}

/// A text property (`Address`, `Name`, `UUID`).
pub fn text(properties: &Properties, key: &str) -> Option<String> {
    properties.get(key).and_then(|value| <&str>::try_from(value).ok()).map(str::to_owned)
}

/// An object-path property (`Device`, `Service`).
pub fn path(properties: &Properties, key: &str) -> Option<String> {
    properties
        .get(key)
        .and_then(|value| zbus::zvariant::ObjectPath::try_from(value.clone()).ok())
        .map(|path| path.to_string())
}

/// A boolean property (`Connected`); absent is false.
pub fn flag(properties: &Properties, key: &str) -> bool {
    properties.get(key).and_then(|value| bool::try_from(value).ok()).unwrap_or(false)
}

/// A list-of-text property (`Flags`).
pub fn texts(properties: &Properties, key: &str) -> Vec<String> {
    properties.get(key).and_then(|value| Vec::<String>::try_from(value.clone()).ok()).unwrap_or_default()
}

/// A byte-array property (a characteristic's `Value`).
pub fn bytes(properties: &Properties, key: &str) -> Option<Vec<u8>> {
    properties.get(key).and_then(|value| Vec::<u8>::try_from(value.clone()).ok())
}

/// A byte property (`Battery1.Percentage`).
pub fn byte(properties: &Properties, key: &str) -> Option<u8> {
    properties.get(key).and_then(|value| u8::try_from(value).ok())
}

/// The adapters BlueZ has.
pub fn adapters(objects: &ManagedObjects) -> Vec<String> {
    let mut found: Vec<String> = objects
        .iter()
        .filter(|(_, interfaces)| interfaces.contains_key(ADAPTER))
        .map(|(path, _)| path.to_string())
        .collect();
    found.sort();
    found
}
