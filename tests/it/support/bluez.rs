//! A mock BlueZ for the Bluetooth LE tests: a private D-Bus daemon with
//! python-dbusmock serving `tests/fixtures/bluez-gatt/bluez_gatt.py`. Each
//! test starts its own, so they run in parallel; a binary under test is
//! pointed at it through `DBUS_SYSTEM_BUS_ADDRESS`.

use std::{fs, path::PathBuf, process::Command};

/// A fresh folder under the target directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A private D-Bus with python-dbusmock serving BlueZ's API from
/// `tests/fixtures/bluez-gatt/bluez_gatt.py` (an adapter, and boards the
/// test adds with their GATT services). Each test has its own bus, so
/// tests run in parallel; the daemon is pointed at it through
/// `DBUS_SYSTEM_BUS_ADDRESS`.
pub struct MockBluez {
    /// The test's folder (the binary runs in it).
    pub dir: PathBuf,
    /// The private bus's address.
    pub address: String,
    bus: std::process::Child,
    bluez: std::process::Child,
}

impl MockBluez {
    /// `None` (with a message) where dbus-daemon or Debian's
    /// python3-dbusmock is missing; under CI that fails the test.
    pub fn start(name: &str) -> Option<Self> {
        let python = "/usr/bin/python3";
        let present = std::path::Path::new("/usr/bin/dbus-daemon").exists()
            && Command::new(python).args(["-c", "import dbusmock"]).output().is_ok_and(|o| o.status.success());
        if !present {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "dbus-daemon and python3-dbusmock are needed under CI"
            );
            eprintln!(
                "skipped: dbus-daemon or python3-dbusmock missing (apt-get install dbus-daemon python3-dbusmock)"
            );
            return None;
        }
        let dir = scratch(name);
        let address = format!("unix:path={}", dir.join("bus").display());
        let bus = Command::new("/usr/bin/dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile", &format!("--address={address}")])
            .stdout(std::process::Stdio::null())
            // It complains when it may not raise its file limit, harmlessly.
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("dbus-daemon starts");
        wait_for(|| dir.join("bus").exists(), "the private bus");
        let template = format!("{}/tests/fixtures/bluez-gatt/bluez_gatt.py", env!("CARGO_MANIFEST_DIR"));
        let bluez = Command::new(python)
            .args(["-m", "dbusmock", "--system", "-t", &template])
            .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("dbusmock starts");
        let mock = Self { dir, address, bus, bluez };
        wait_for(
            || {
                mock.send("/", "org.freedesktop.DBus", "org.freedesktop.DBus.NameHasOwner", &["string:org.bluez"])
                    .is_ok_and(|reply| reply.contains("boolean true"))
            },
            "BlueZ on the private bus",
        );
        Some(mock)
    }

    /// `dbus-send` on the private bus; the reply as printed.
    pub fn send(&self, path: &str, dest: &str, method: &str, args: &[&str]) -> Result<String, String> {
        let out = Command::new("dbus-send")
            .args([&format!("--bus={}", self.address), "--print-reply", &format!("--dest={dest}"), path, method])
            .args(args)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// A board advertising `name`, with `family`'s service and
    /// characteristics.
    pub fn add_board(&self, address: &str, name: &str, service: &str, notify: &str, write: &str) {
        let args = [address, name, service, notify, write].map(|a| format!("string:{a}"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.send("/", "org.bluez", "org.boardcast.Mock.AddBoard", &args).expect("the board is added");
    }

    /// `boardcast` with the private bus as the system bus.
    pub fn boardcast(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(args)
            .env("DBUS_SYSTEM_BUS_ADDRESS", &self.address)
            .current_dir(&self.dir)
            .output()
            .expect("the binary runs")
    }
}

impl Drop for MockBluez {
    fn drop(&mut self) {
        for child in [&mut self.bluez, &mut self.bus] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub fn wait_for(mut ready: impl FnMut() -> bool, what: &str) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !ready() {
        assert!(std::time::Instant::now() < until, "{what} did not come up within 20 s");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
