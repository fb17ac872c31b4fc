//! Finding Bluetooth LE boards in range: BlueZ is asked to discover LE
//! devices for a while, then lists every device it knows (the object
//! manager's `GetManagedObjects`); a device is a board of the family whose
//! advertised name it carries (`Chessnut Air` → `chessnut`). The name, not
//! the service, decides: the Nordic UART service a DGT Pegasus uses is
//! used by other boards too (Square Off, iChessOne, ChessUp).

use std::{collections::HashMap, time::Duration};

use boardcast_core::protocol::{FAMILIES, Family};
use zbus::{Connection, zvariant::Value};

use super::bluez::{ADAPTER, DEVICE, Properties, adapters, call, managed_objects};

/// Why no scan could be made.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// No system bus (no D-Bus daemon, or `DBUS_SYSTEM_BUS_ADDRESS` wrong).
    #[error("no system D-Bus to reach BlueZ through ({0}); install and start dbus and bluez")]
    NoBus(zbus::Error),
    /// The bus is there, BlueZ is not.
    #[error("BlueZ did not answer on the system bus ({0}); is bluetoothd running (`systemctl status bluetooth`)?")]
    NoBlueZ(zbus::Error),
    /// BlueZ has no adapter.
    #[error("BlueZ has no Bluetooth adapter; plug one in, or unblock it (`rfkill list`)")]
    NoAdapter,
    /// The adapter refused to discover.
    #[error("the Bluetooth adapter {adapter} would not scan ({error}); is it powered (`bluetoothctl power on`)?")]
    Discovery {
        /// The adapter's object path.
        adapter: String,
        /// What BlueZ said.
        error: zbus::Error,
    },
}

/// A board in range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InRange {
    /// Its Bluetooth address (`AA:BB:CC:DD:EE:FF`).
    pub address: String,
    /// The name it advertises.
    pub name: String,
    /// The signal strength BlueZ last saw, in dBm, if it says.
    pub rssi: Option<i16>,
    /// Its family.
    pub family: &'static Family,
}

impl std::fmt::Display for InRange {
    /// `AA:BB:CC:DD:EE:FF  "Chessnut Air"  Chessnut board (chessnut), RSSI -60 dBm`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}  {:?}  {} ({})", self.address, self.name, self.family.title, self.family.name)?;
        if let Some(rssi) = self.rssi {
            write!(f, ", RSSI {rssi} dBm")?;
        }
        Ok(())
    }
}

/// Discovers LE devices on every adapter for `wait`, and returns the
/// boards among the devices BlueZ then knows (also those it knew before,
/// paired or seen recently), by address.
///
/// # Errors
///
/// No system bus, no BlueZ, no adapter, or an adapter that will not scan.
pub async fn scan(wait: Duration) -> Result<Vec<InRange>, ScanError> {
    let bus = Connection::system().await.map_err(ScanError::NoBus)?;
    let objects = managed_objects(&bus).await.map_err(ScanError::NoBlueZ)?;
    let adapters = adapters(&objects);
    if adapters.is_empty() {
        return Err(ScanError::NoAdapter);
    }
    for adapter in &adapters {
        let discovery = |error| ScanError::Discovery { adapter: adapter.to_string(), error };
        // Only LE devices; BlueZ also refuses to start some adapters'
        // discovery before a filter is set.
        let filter = HashMap::from([("Transport", Value::from("le"))]);
        call(&bus, adapter, ADAPTER, "SetDiscoveryFilter", &(filter,)).await.map_err(discovery)?;
        call(&bus, adapter, ADAPTER, "StartDiscovery", &()).await.map_err(discovery)?;
    }
    tokio::time::sleep(wait).await;
    let objects = managed_objects(&bus).await.map_err(ScanError::NoBlueZ)?;
    for adapter in &adapters {
        // Best effort: BlueZ also stops a client's discovery when the
        // client leaves the bus, which this one does next.
        let _ = call(&bus, adapter, ADAPTER, "StopDiscovery", &()).await;
    }
    let mut found: Vec<InRange> = objects.values().filter_map(|interfaces| board_of(interfaces.get(DEVICE)?)).collect();
    found.sort_by(|a, b| a.address.cmp(&b.address));
    Ok(found)
}

/// The board a device is, if its name says so.
fn board_of(device: &Properties) -> Option<InRange> {
    let text = |key: &str| device.get(key).and_then(|value| <&str>::try_from(value).ok()).map(str::to_owned);
    let address = text("Address")?;
    let name = text("Name").or_else(|| text("Alias"))?;
    let family =
        FAMILIES.into_iter().find(|family| family.bluetooth.as_ref().is_some_and(|b| b.advertised_by(&name)))?;
    let rssi = device.get("RSSI").and_then(|value| i16::try_from(value).ok());
    Some(InRange { address, name, rssi, family })
}
