//! `boardcast list-ports`: the machine's serial ports, the USB IDs behind
//! them, and what answered when asked, and the Bluetooth LE boards in
//! range. A port another program has open
//! (the daemon itself, or other board software) is reported and left alone.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use anyhow::Context;
use clap::Args;

use boardcast::shell::{
    ble,
    ports::{PortInfo, bridge_name, candidates, list_ports},
    probe::{Probed, probe},
};

use super::settings;

/// Lists the serial ports and what answers on each: board kind, serial
/// number and firmware. The USB IDs boards use belong to generic bridge
/// chips, so a board is identified by asking it (a DGT board is asked for
/// its version and serial number, which changes nothing on it), never by
/// its USB IDs. Ports another program has open are not touched.
///
/// Bluetooth LE boards in range are listed too (through BlueZ, by the
/// name they advertise), with their address and signal strength: give the
/// address as the board's `bluetooth = "…"` (docs/boards.md).
///
/// Use the serial number in a board's configuration (`serial = "…"`) to
/// find it wherever it is plugged in, or the stable name the udev rules
/// give (`/dev/boardcast/…`) as its `port`.
#[derive(Debug, Args)]
pub(crate) struct ListPortsArgs {
    /// Also probe the configuration's `[discovery] extra_ports`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// List the ports without asking them anything.
    #[arg(long)]
    no_probe: bool,
    /// How long to wait for a board's answer, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 600)]
    wait_ms: u64,
    /// How long to look for Bluetooth LE boards (through BlueZ), in
    /// milliseconds; 0 for not at all.
    #[arg(long, value_name = "MS", default_value_t = 4000)]
    scan_ms: u64,
}

pub(crate) fn run(args: ListPortsArgs) -> anyhow::Result<ExitCode> {
    let extra = match &args.config {
        Some(_) => settings::load(args.config.as_deref())?.config.discovery.extra_ports,
        None => Vec::new(),
    };
    let ports = candidates(&extra);
    let onboard: Vec<PortInfo> = list_ports().unwrap_or_default().into_iter().filter(|p| !ports.contains(p)).collect();
    if ports.is_empty() && onboard.is_empty() {
        outln!("no serial ports found (is the board plugged in? `dmesg | tail` shows what the kernel saw)");
    }
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the event loop")?;
    let (found, in_range): (Vec<Option<Probed>>, _) = if args.no_probe {
        (vec![None; ports.len()], None)
    } else {
        let wait = Duration::from_millis(args.wait_ms);
        // All at once: each probe mostly waits for an answer, and so does
        // the Bluetooth scan.
        runtime.block_on(async {
            let scan = (args.scan_ms > 0).then(|| tokio::spawn(ble::scan::scan(Duration::from_millis(args.scan_ms))));
            let probes = ports.iter().map(|port| {
                let path = port.path.clone();
                tokio::spawn(async move { probe(&path, wait).await })
            });
            let mut found = Vec::new();
            for probe in probes.collect::<Vec<_>>() {
                found.push(probe.await.ok());
            }
            let in_range = match scan {
                Some(scan) => scan.await.ok(),
                None => None,
            };
            (found, in_range)
        })
    };
    for (port, found) in ports.iter().zip(found) {
        outln!("{}", describe(port));
        if let Some(found) = found {
            outln!("    {found}");
        }
    }
    for port in &onboard {
        outln!("{}", describe(port));
        outln!("    on-board serial port, not asked (list it in [discovery] extra_ports to have it probed)");
    }
    match in_range {
        None => {}
        Some(Ok(boards)) if boards.is_empty() => outln!("Bluetooth LE: no board in range"),
        Some(Ok(boards)) => {
            for board in boards {
                outln!("Bluetooth LE {board}");
            }
        }
        Some(Err(why)) => outln!("Bluetooth LE: not scanned: {why}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `/dev/ttyACM0  045b:8111 Renesas RL78 USB serial (…), USB serial 1234`.
fn describe(port: &PortInfo) -> String {
    let mut line = port.path.display().to_string();
    if port.bluetooth {
        line.push_str("  Bluetooth serial (rfcomm)");
    }
    if let Some(usb) = &port.usb {
        line.push_str(&format!("  USB {:04x}:{:04x}", usb.vid, usb.pid));
        match bridge_name(usb.vid, usb.pid) {
            Some(bridge) => line.push_str(&format!(" {bridge}")),
            None => {
                let names: Vec<&str> =
                    [&usb.manufacturer, &usb.product].into_iter().flatten().map(String::as_str).collect();
                if !names.is_empty() {
                    line.push_str(&format!(" {}", names.join(" ")));
                }
            }
        }
        if let Some(serial) = &usb.serial {
            line.push_str(&format!(", USB serial {serial}"));
        }
    }
    line
}
