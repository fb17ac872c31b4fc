//! Serial port discovery: which serial ports this machine has, and for USB
//! ports which bridge chip (vendor and product ID, serial number) sits behind
//! each. This is what `boardcast list-ports` starts from before it probes
//! each port for a chess board; the IDs alone never prove that a board is
//! there, since every board we know of uses a generic bridge chip.
//!
//! It reads sysfs directly instead of going through libudev: the few
//! attributes needed are plain files, and reading them keeps the daemon free
//! of a C library dependency. It also makes discovery testable against a fake
//! sysfs tree in a temporary directory, which is how the tests below work.

use std::{
    collections::BTreeMap,
    fs, io,
    path::{Path, PathBuf},
};

/// One serial port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// The device node: `<dev_root>/<name>`, e.g. `/dev/ttyACM0`.
    pub path: PathBuf,
    /// The kernel's name for the port, e.g. `ttyACM0`.
    pub name: String,
    /// The USB device the port belongs to, if it is on USB.
    pub usb: Option<UsbInfo>,
    /// An RFCOMM (classic Bluetooth serial) port, `rfcommN`. Its USB
    /// information, if the Bluetooth adapter is on USB, would describe the
    /// adapter and not the board, so `usb` is always `None` for these.
    pub bluetooth: bool,
}

impl PortInfo {
    /// On USB or Bluetooth, where boards are plugged in.
    pub fn may_be_a_board(&self) -> bool {
        self.usb.is_some() || self.bluetooth
    }
}

/// What a USB device says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsbInfo {
    /// Vendor ID (`idVendor`).
    pub vid: u16,
    /// Product ID (`idProduct`).
    pub pid: u16,
    /// Serial number string (`serial`), if the device reports one.
    pub serial: Option<String>,
    /// Manufacturer string (`manufacturer`), if the device reports one.
    pub manufacturer: Option<String>,
    /// Product string (`product`), if the device reports one.
    pub product: Option<String>,
}

/// Lists serial ports, sorted by name. `sys_root` is normally "/sys", `dev_root` "/dev".
///
/// A port is a `<sys_root>/class/tty` entry with a `device` link (real
/// hardware: virtual terminals and pseudo-terminals have none), or an
/// `rfcommN` node in `dev_root` (an RFCOMM port bound without an adapter
/// present has no `device` link). Legacy UART slots that the kernel
/// registers but found no chip for (`type` is 0, as for the dozens of
/// `ttyS*` on most PCs) are left out. Names sort with their numbers in
/// numeric order, so `ttyUSB2` comes before `ttyUSB10`.
///
/// A machine without serial ports, or without `<sys_root>/class/tty` at all,
/// gives an empty list; a port that disappears while it is being read is
/// left out. Attributes that cannot be read are `None`.
///
/// # Errors
///
/// Any other I/O error while reading either directory.
pub fn list_ports_in(sys_root: &Path, dev_root: &Path) -> io::Result<Vec<PortInfo>> {
    let mut ports = BTreeMap::new();
    let boundary = fs::canonicalize(sys_root).unwrap_or_else(|_| sys_root.to_path_buf());

    for entry in read_dir_if_present(&sys_root.join("class/tty"))? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        let tty = entry.path();
        let link = tty.join("device");
        match fs::symlink_metadata(&link) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        }
        if read_attr(&tty, "type").as_deref() == Some("0") {
            continue;
        }
        let bluetooth = is_rfcomm(&name);
        let usb = if bluetooth {
            None
        } else {
            match fs::canonicalize(&link) {
                Ok(device) => usb_device_of(&device, &boundary).and_then(|dir| read_usb(&dir)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
        };
        ports.insert(SortKey::new(&name), PortInfo { path: node_path(dev_root, &name), name, usb, bluetooth });
    }

    for entry in read_dir_if_present(dev_root)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        if is_rfcomm(&name) {
            ports.entry(SortKey::new(&name)).or_insert_with(|| PortInfo {
                path: entry.path(),
                name,
                usb: None,
                bluetooth: true,
            });
        }
    }

    Ok(ports.into_values().collect())
}

/// Lists this machine's serial ports: `list_ports_in("/sys", "/dev")`.
///
/// # Errors
///
/// As [`list_ports_in`].
pub fn list_ports() -> io::Result<Vec<PortInfo>> {
    list_ports_in(Path::new("/sys"), Path::new("/dev"))
}

/// The ports a board may be on: this machine's USB and Bluetooth serial
/// ports, then `extra` (`[discovery] extra_ports` in the configuration:
/// on-board serial ports, or devices the kernel does not list as serial
/// ports, such as a simulated board's pseudo-terminal). On-board UARTs
/// (`ttyS*`) are left out unless listed: boards come on USB or Bluetooth,
/// and whatever is wired to a PC's own serial port (a UPS, a console) has
/// no business being asked. A listing that fails leaves only `extra`.
pub fn candidates(extra: &[PathBuf]) -> Vec<PortInfo> {
    let mut ports = list_ports().unwrap_or_default();
    ports.retain(PortInfo::may_be_a_board);
    for path in extra {
        if ports.iter().any(|p| &p.path == path) {
            continue;
        }
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        ports.push(PortInfo { path: path.clone(), name, usb: None, bluetooth: false });
    }
    ports
}

/// What a USB bridge chip usually is in this context, e.g. `Some("Renesas RL78
/// USB serial (current DGT USB boards; generic ID)")`, or `None` for an ID
/// that no supported board is known to use.
///
/// Every ID here is a chip maker's stock ID, shared with unrelated devices:
/// the answer is a hint for a person reading a port list, never proof that a
/// board is attached.
pub fn bridge_name(vid: u16, pid: u16) -> Option<&'static str> {
    match (vid, pid) {
        (0x045b, 0x8111) => Some("Renesas RL78 USB serial (current DGT USB boards; generic ID)"),
        (0x0403, 0x6001) => Some("FTDI FT232 USB serial (older DGT USB boards, or any FTDI adapter; generic ID)"),
        (0x10c4, 0xea60) => Some("Silicon Labs CP210x USB serial (Certabo boards; generic ID)"),
        _ => None,
    }
}

/// Orders port names with their trailing numbers compared as numbers.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct SortKey {
    stem: String,
    number: Option<u64>,
    name: String,
}

impl SortKey {
    fn new(name: &str) -> Self {
        let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
        Self { stem: stem.to_owned(), number: name[stem.len()..].parse().ok(), name: name.to_owned() }
    }
}

/// The entries of `dir`, or none if it does not exist.
fn read_dir_if_present(dir: &Path) -> io::Result<impl Iterator<Item = io::Result<fs::DirEntry>>> {
    match fs::read_dir(dir) {
        Ok(entries) => Ok(Some(entries).into_iter().flatten()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None.into_iter().flatten()),
        Err(e) => Err(e),
    }
}

/// `rfcomm` followed by a number.
fn is_rfcomm(name: &str) -> bool {
    name.strip_prefix("rfcomm").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The device node for a sysfs name: sysfs spells a `/` in a device name as
/// `!` (`/dev/foo/bar` is `foo!bar`).
fn node_path(dev_root: &Path, name: &str) -> PathBuf {
    dev_root.join(name.replace('!', "/"))
}

/// The nearest directory at or above `device`, and inside `boundary`, that
/// is a USB device (has `idVendor` and `idProduct`). A tty's own device is a
/// USB interface (CDC-ACM) or a usb-serial port below one (FTDI, CP210x).
fn usb_device_of(device: &Path, boundary: &Path) -> Option<PathBuf> {
    device
        .ancestors()
        .take_while(|dir| dir.starts_with(boundary) && *dir != boundary)
        .find(|dir| dir.join("idVendor").is_file() && dir.join("idProduct").is_file())
        .map(Path::to_path_buf)
}

/// The IDs and strings of the USB device at `dir`; `None` if the IDs are not
/// hexadecimal numbers.
fn read_usb(dir: &Path) -> Option<UsbInfo> {
    let id = |attr| u16::from_str_radix(&read_attr(dir, attr)?, 16).ok();
    Some(UsbInfo {
        vid: id("idVendor")?,
        pid: id("idProduct")?,
        serial: read_attr(dir, "serial"),
        manufacturer: read_attr(dir, "manufacturer"),
        product: read_attr(dir, "product"),
    })
}

/// A sysfs attribute, trimmed; `None` if it cannot be read or is empty.
fn read_attr(dir: &Path, attr: &str) -> Option<String> {
    let bytes = fs::read(dir.join(attr)).ok()?;
    let value = String::from_utf8_lossy(&bytes).trim().to_owned();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use std::{
        os::unix::fs::symlink,
        sync::atomic::{AtomicU32, Ordering},
        time::{SystemTime, UNIX_EPOCH},
    };

    use super::*;

    /// A temporary directory, removed when dropped (also when a test fails).
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(label: &str) -> Self {
            static COUNTER: AtomicU32 = AtomicU32::new(0);
            let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("boardcast-{label}-{}-{nanos}-{n}", std::process::id()));
            fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn write(path: &Path, contents: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    /// A tty in the fake sysfs as the kernel lays it out: the real directory
    /// `devices/<parent>/tty/<name>` with `device` pointing at `parent`, and
    /// `class/tty/<name>` a link to it. `parent` `None` is a virtual tty.
    fn add_tty(sys: &Path, name: &str, parent: Option<&str>) -> PathBuf {
        let dir = match parent {
            Some(parent) => sys.join("devices").join(parent).join("tty").join(name),
            None => sys.join("devices/virtual/tty").join(name),
        };
        fs::create_dir_all(&dir).unwrap();
        if parent.is_some() {
            symlink("../..", dir.join("device")).unwrap();
        }
        fs::create_dir_all(sys.join("class/tty")).unwrap();
        symlink(&dir, sys.join("class/tty").join(name)).unwrap();
        dir
    }

    /// USB device attributes, each written with the newline sysfs ends them with.
    fn add_usb_device(dir: &Path, attrs: &[(&str, &str)]) {
        for (attr, value) in attrs {
            write(&dir.join(attr), &format!("{value}\n"));
        }
    }

    #[test]
    fn finds_usb_bluetooth_and_uart_ports_and_skips_virtual_ones() {
        let tmp = TempDir::new("ports");
        let (sys, dev) = (tmp.0.join("sys"), tmp.0.join("dev"));
        let hub = "pci0000:00/0000:00:14.0/usb1";

        // A DGT USB board: CDC-ACM, the tty hangs off the interface 1-2:1.0.
        add_usb_device(
            &sys.join("devices").join(hub).join("1-2"),
            &[("idVendor", "045b"), ("idProduct", "8111"), ("serial", "  DGT0042  "), ("product", "DGT Board")],
        );
        write(&sys.join("devices").join(hub).join("1-2/1-2:1.0/bInterfaceClass"), "02\n");
        add_tty(&sys, "ttyACM0", Some(&format!("{hub}/1-2/1-2:1.0")));

        // An FTDI adapter: the tty hangs off a usb-serial port below the interface.
        add_usb_device(
            &sys.join("devices").join(hub).join("1-3"),
            &[
                ("idVendor", "0403"),
                ("idProduct", "6001"),
                ("serial", "A50285BI"),
                ("manufacturer", "FTDI"),
                ("product", "FT232R USB UART"),
            ],
        );
        add_tty(&sys, "ttyUSB0", Some(&format!("{hub}/1-3/1-3:1.0/ttyUSB0")));

        // A second FTDI port with an unreadable serial (a directory, not a
        // file) and no strings: numbered to check numeric order.
        add_usb_device(&sys.join("devices").join(hub).join("1-4"), &[("idVendor", "0403"), ("idProduct", "6001")]);
        fs::create_dir_all(sys.join("devices").join(hub).join("1-4/serial")).unwrap();
        add_tty(&sys, "ttyUSB10", Some(&format!("{hub}/1-4/1-4:1.0/ttyUSB10")));

        // A real on-board UART and an empty legacy slot (type 0).
        let uart = add_tty(&sys, "ttyS0", Some("pnp0/00:04"));
        write(&uart.join("type"), "4\n");
        let slot = add_tty(&sys, "ttyS5", Some("platform/serial8250"));
        write(&slot.join("type"), "0\n");

        // Virtual ttys: no device link.
        add_tty(&sys, "tty1", None);
        add_tty(&sys, "ptmx", None);

        // A bound RFCOMM port without a sysfs device link, and unrelated nodes.
        write(&dev.join("rfcomm0"), "");
        write(&dev.join("rfcomm"), "");
        write(&dev.join("null"), "");

        let ports = list_ports_in(&sys, &dev).unwrap();
        let expected = vec![
            PortInfo { path: dev.join("rfcomm0"), name: "rfcomm0".into(), usb: None, bluetooth: true },
            PortInfo {
                path: dev.join("ttyACM0"),
                name: "ttyACM0".into(),
                usb: Some(UsbInfo {
                    vid: 0x045b,
                    pid: 0x8111,
                    serial: Some("DGT0042".into()),
                    manufacturer: None,
                    product: Some("DGT Board".into()),
                }),
                bluetooth: false,
            },
            PortInfo { path: dev.join("ttyS0"), name: "ttyS0".into(), usb: None, bluetooth: false },
            PortInfo {
                path: dev.join("ttyUSB0"),
                name: "ttyUSB0".into(),
                usb: Some(UsbInfo {
                    vid: 0x0403,
                    pid: 0x6001,
                    serial: Some("A50285BI".into()),
                    manufacturer: Some("FTDI".into()),
                    product: Some("FT232R USB UART".into()),
                }),
                bluetooth: false,
            },
            PortInfo {
                path: dev.join("ttyUSB10"),
                name: "ttyUSB10".into(),
                usb: Some(UsbInfo { vid: 0x0403, pid: 0x6001, serial: None, manufacturer: None, product: None }),
                bluetooth: false,
            },
        ];
        assert_eq!(ports, expected);
    }

    #[test]
    fn rfcomm_with_a_device_link_is_bluetooth_not_the_adapters_usb() {
        let tmp = TempDir::new("ports-rfcomm");
        let (sys, dev) = (tmp.0.join("sys"), tmp.0.join("dev"));
        // A USB Bluetooth dongle's hci0: its USB IDs say nothing about the board.
        let dongle = "pci0000:00/0000:00:14.0/usb1/1-5";
        add_usb_device(&sys.join("devices").join(dongle), &[("idVendor", "8087"), ("idProduct", "0a2b")]);
        add_tty(&sys, "rfcomm1", Some(&format!("{dongle}/1-5:1.0/bluetooth/hci0")));
        write(&dev.join("rfcomm1"), "");

        let ports = list_ports_in(&sys, &dev).unwrap();
        assert_eq!(
            ports,
            vec![PortInfo { path: dev.join("rfcomm1"), name: "rfcomm1".into(), usb: None, bluetooth: true }]
        );
    }

    #[test]
    fn a_machine_without_serial_ports_has_none() {
        let tmp = TempDir::new("ports-empty");
        let ports = list_ports_in(&tmp.0.join("sys"), &tmp.0.join("dev")).unwrap();
        assert_eq!(ports, vec![]);
    }

    #[test]
    fn a_tty_whose_device_vanished_is_left_out() {
        let tmp = TempDir::new("ports-vanished");
        let sys = tmp.0.join("sys");
        let dir = add_tty(&sys, "ttyACM1", Some("pci0000:00/usb1/1-6/1-6:1.0"));
        fs::remove_file(dir.join("device")).unwrap();
        symlink("../../gone", dir.join("device")).unwrap();
        assert_eq!(list_ports_in(&sys, &tmp.0.join("dev")).unwrap(), vec![]);
    }

    #[test]
    fn the_ids_boards_use_have_names_and_others_do_not() {
        assert_eq!(bridge_name(0x045b, 0x8111), Some("Renesas RL78 USB serial (current DGT USB boards; generic ID)"));
        assert!(bridge_name(0x0403, 0x6001).unwrap().contains("DGT"));
        assert!(bridge_name(0x10c4, 0xea60).unwrap().contains("Certabo"));
        assert_eq!(bridge_name(0x2341, 0x0043), None);
    }
}
