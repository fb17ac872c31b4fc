//! The udev rules in `udev/70-boardcast.rules`: every line is well-formed
//! udev syntax, and a small simulation of udev shows that each kind of board
//! gets the access, names and ModemManager exclusion that `udev/README.md`
//! promises, while other devices are left alone. Where a `udevadm` with the
//! `verify` subcommand is installed, udev itself checks the file too.

use std::{collections::BTreeMap, process::Command};

use boardcast::shell::ports::bridge_name;

const RULES: &str = include_str!("../../udev/70-boardcast.rules");
const RULES_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/udev/70-boardcast.rules");

#[test]
fn every_rule_is_well_formed() {
    let rules = parse(RULES).unwrap_or_else(|e| panic!("{e}"));
    assert!(rules.len() >= 5, "only {} rules parsed", rules.len());
    let labels: Vec<(usize, &str)> = rules
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.items.iter().filter(|it| it.key == "LABEL").map(move |it| (i, it.value.as_str())))
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        let line = rule.line;
        for goto in rule.items.iter().filter(|it| it.key == "GOTO") {
            assert!(
                labels.iter().any(|&(at, label)| at > i && label == goto.value),
                "line {line}: GOTO=\"{}\" has no LABEL after it (udev only jumps forward)",
                goto.value
            );
        }
    }
}

#[test]
fn the_parser_rejects_what_udev_would() {
    for (bad, why) in [
        (r#"SUBSYSTEM="tty", MODE="0660", GROUP="boardcast""#, "assignment to a match key"),
        (r#"SUBSYSTEM=="tty", MODE=="0660""#, "match on an assignment-only key"),
        (r#"SUBSYSTEM=="tty", MODE="660", GROUP="boardcast""#, "three-digit mode"),
        (r#"SUBSYSTEM=="tty", MODE="0660""#, "MODE without GROUP"),
        (r#"ATTRS{idVendor}=="045B""#, "uppercase hex: sysfs is lowercase, so it never matches"),
        (r#"ATTRS{idVendor}=="45b""#, "short ID"),
        (r#"SUBSYSTEM=="tty" GROUP="boardcast""#, "missing comma"),
        (r#"SUBSYSTEM=="tty", "#, "trailing comma"),
        (r#"SUBSYSTEM==tty"#, "unquoted value"),
        (r#"SUBSYSTEM=="tty"#, "unterminated value"),
        (r#"NAME="board""#, "unknown key"),
        (r#"ATTRS=="x""#, "ATTRS without an attribute"),
        (r#"KERNEL{x}=="x""#, "attribute on a key that takes none"),
        (r#"GROUP+="boardcast""#, "+= on a single-valued key"),
    ] {
        assert!(parse(bad).is_err(), "accepted {bad:?} ({why})");
    }
    assert!(parse("# comment only\n\n  # indented comment\n").unwrap().is_empty());
    let joined = parse("SUBSYSTEM==\"tty\", \\\n  TAG+=\"systemd\"\n").unwrap();
    assert_eq!(joined.len(), 1);
    assert_eq!(joined[0].items.len(), 2);
}

#[test]
fn each_board_gets_access_a_stable_name_and_no_modemmanager() {
    let rules = parse(RULES).unwrap();
    for (kernel, vid, pid, serial, link) in [
        ("ttyACM0", "045b", "8111", "DGT0042", "boardcast/dgt-usb-DGT0042"),
        ("ttyUSB0", "0403", "6001", "A50285BI", "boardcast/ftdi-A50285BI"),
        ("ttyUSB1", "10c4", "ea60", "0001", "boardcast/cp210x-0001"),
    ] {
        let device = Device { kernel, usb: Some(Usb { vid, pid, serial: Some(serial) }), ..Device::default() };
        let got = apply(&rules, &device);
        assert_eq!(got, Outcome::board(&[link]), "{vid}:{pid} on {kernel}");
    }
}

#[test]
fn a_usb_board_without_a_serial_number_gets_access_but_no_link() {
    let rules = parse(RULES).unwrap();
    for (vid, pid) in [("045b", "8111"), ("0403", "6001"), ("10c4", "ea60")] {
        for serial in [None, Some("")] {
            let device = Device { usb: Some(Usb { vid, pid, serial }), ..Device::default() };
            assert_eq!(apply(&rules, &device), Outcome::board(&[]), "{vid}:{pid} with serial {serial:?}");
        }
    }
}

#[test]
fn bluetooth_ports_get_access_and_no_modemmanager() {
    let rules = parse(RULES).unwrap();
    for kernel in ["rfcomm0", "rfcomm12"] {
        let device = Device { kernel, usb: None, ..Device::default() };
        assert_eq!(apply(&rules, &device), Outcome::board(&[]), "{kernel}");
    }
}

#[test]
fn other_devices_are_left_alone() {
    let rules = parse(RULES).unwrap();
    let dgt = Some(Usb { vid: "045b", pid: "8111", serial: Some("DGT0042") });
    let others = [
        ("an Arduino", Device { usb: Some(Usb { vid: "2341", pid: "0043", serial: Some("1") }), ..Device::default() }),
        ("an on-board UART", Device { kernel: "ttyS0", usb: None, ..Device::default() }),
        ("a virtual console", Device { kernel: "tty1", usb: None, ..Device::default() }),
        ("a board's USB device node itself", Device { subsystem: "usb", kernel: "1-2", usb: dgt, ..Device::default() }),
        ("a board being removed", Device { action: "remove", usb: dgt, ..Device::default() }),
        ("an rfcomm-like name", Device { kernel: "rfcommx", usb: None, ..Device::default() }),
    ];
    for (what, device) in others {
        assert_eq!(apply(&rules, &device), Outcome::default(), "{what}");
    }
}

#[test]
fn no_rule_gives_world_write_access() {
    for rule in parse(RULES).unwrap() {
        for mode in rule.items.iter().filter(|it| it.key == "MODE") {
            let bits = u32::from_str_radix(&mode.value, 8).unwrap();
            assert_eq!(bits & 0o002, 0, "line {}: MODE=\"{}\" lets anyone write", rule.line, mode.value);
        }
    }
}

#[test]
fn every_usb_id_in_the_rules_is_one_the_daemon_can_name() {
    for rule in parse(RULES).unwrap() {
        let id = |attr| rule.items.iter().find(|it| it.key == "ATTRS" && it.attr.as_deref() == Some(attr));
        if let (Some(vid), Some(pid)) = (id("idVendor"), id("idProduct")) {
            let (vid, pid) =
                (u16::from_str_radix(&vid.value, 16).unwrap(), u16::from_str_radix(&pid.value, 16).unwrap());
            assert!(bridge_name(vid, pid).is_some(), "line {}: {vid:04x}:{pid:04x} has no bridge_name", rule.line);
        }
    }
}

#[test]
fn udevadm_verify_accepts_the_rules() {
    let installed = Command::new("which").arg("udevadm").output().is_ok_and(|out| out.status.success());
    if !installed {
        println!("note: udevadm is not installed; skipped `udevadm verify`");
        return;
    }
    let supported = Command::new("udevadm").args(["verify", "--help"]).output().is_ok_and(|out| out.status.success());
    if !supported {
        println!("note: this udevadm has no `verify` subcommand (it came with systemd 254); skipped");
        return;
    }
    // The boardcast group need not exist on the machine running the tests.
    let out = Command::new("udevadm").args(["verify", "--resolve-names=never", RULES_PATH]).output().unwrap();
    assert!(
        out.status.success(),
        "udevadm verify failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------------------
// A parser for udev rule lines.

/// One rule: a line (joined across trailing backslashes) of comma-separated items.
#[derive(Debug)]
struct Rule {
    /// 1-based line number where the rule starts.
    line: usize,
    items: Vec<Item>,
}

/// `KEY{attr}OP"value"`.
#[derive(Debug)]
struct Item {
    key: String,
    attr: Option<String>,
    op: Op,
    value: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Equal,
    NotEqual,
    Assign,
    Add,
    Remove,
    AssignFinal,
}

impl Op {
    /// Longest first, so that `==` is not read as `=`.
    const ALL: [(&'static str, Self); 6] = [
        ("==", Self::Equal),
        ("!=", Self::NotEqual),
        ("+=", Self::Add),
        ("-=", Self::Remove),
        (":=", Self::AssignFinal),
        ("=", Self::Assign),
    ];

    fn is_match(self) -> bool {
        matches!(self, Self::Equal | Self::NotEqual)
    }
}

/// Whether a key takes `{attr}`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Attr {
    Required,
    Optional,
    Forbidden,
}

const MATCH: &[Op] = &[Op::Equal, Op::NotEqual];
const SINGLE: &[Op] = &[Op::Assign, Op::AssignFinal];
const LIST: &[Op] = &[Op::Assign, Op::Add, Op::Remove, Op::AssignFinal];
const MATCH_OR_LIST: &[Op] = &[Op::Equal, Op::NotEqual, Op::Assign, Op::Add, Op::Remove, Op::AssignFinal];
const MATCH_OR_SINGLE: &[Op] = &[Op::Equal, Op::NotEqual, Op::Assign, Op::AssignFinal];
const MATCH_OR_VALUE: &[Op] = &[Op::Equal, Op::NotEqual, Op::Assign, Op::Add, Op::AssignFinal];

/// The keys this file may use, whether each takes `{attr}`, and its operators.
const KEYS: &[(&str, Attr, &[Op])] = &[
    ("ACTION", Attr::Forbidden, MATCH),
    ("SUBSYSTEM", Attr::Forbidden, MATCH),
    ("KERNEL", Attr::Forbidden, MATCH),
    ("SUBSYSTEMS", Attr::Forbidden, MATCH),
    ("KERNELS", Attr::Forbidden, MATCH),
    ("DRIVERS", Attr::Forbidden, MATCH),
    ("ATTRS", Attr::Required, MATCH),
    ("PROGRAM", Attr::Forbidden, MATCH),
    ("ATTR", Attr::Required, MATCH_OR_SINGLE),
    ("ENV", Attr::Required, MATCH_OR_VALUE),
    ("TAG", Attr::Forbidden, MATCH_OR_LIST),
    ("SYMLINK", Attr::Forbidden, MATCH_OR_LIST),
    ("MODE", Attr::Forbidden, SINGLE),
    ("GROUP", Attr::Forbidden, SINGLE),
    ("OWNER", Attr::Forbidden, SINGLE),
    ("RUN", Attr::Optional, LIST),
    ("GOTO", Attr::Forbidden, &[Op::Assign]),
    ("LABEL", Attr::Forbidden, &[Op::Assign]),
];

/// Parses a rules file: comments and blank lines are skipped, a trailing
/// backslash continues a rule on the next line.
fn parse(text: &str) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        if joined.is_empty() && raw.trim_start().starts_with('#') {
            continue;
        }
        if let Some(head) = raw.strip_suffix('\\') {
            joined.push_str(head);
            pending = Some((start, joined));
            continue;
        }
        joined.push_str(raw);
        if joined.trim().is_empty() {
            continue;
        }
        let items = parse_rule(&joined).map_err(|e| format!("line {start}: {e}: {joined:?}"))?;
        rules.push(Rule { line: start, items });
    }
    if let Some((start, _)) = pending {
        return Err(format!("line {start}: the file ends inside a continued rule"));
    }
    Ok(rules)
}

fn parse_rule(line: &str) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let mut rest = line.trim();
    loop {
        let (item, after) = parse_item(rest)?;
        items.push(item);
        rest = after.trim_start();
        if rest.is_empty() {
            break;
        }
        rest = rest.strip_prefix(',').ok_or_else(|| format!("expected a comma before {rest:?}"))?.trim_start();
        if rest.is_empty() {
            return Err("trailing comma".into());
        }
    }
    let sets_mode = items.iter().any(|it| it.key == "MODE");
    let sets_group = items.iter().any(|it| it.key == "GROUP");
    if sets_mode && !sets_group {
        return Err("MODE without GROUP, so the mode would apply to whatever group the port had".into());
    }
    Ok(items)
}

fn parse_item(text: &str) -> Result<(Item, &str), String> {
    let key_len = text.find(|c: char| !(c.is_ascii_uppercase() || c == '_')).unwrap_or(text.len());
    let (key, mut rest) = text.split_at(key_len);
    let &(_, attr_rule, ops) =
        KEYS.iter().find(|(k, ..)| *k == key).ok_or_else(|| format!("unknown key {key:?} at {text:?}"))?;

    let attr = match rest.strip_prefix('{') {
        Some(inner) => {
            let end = inner.find('}').ok_or_else(|| format!("{key}: unclosed {{"))?;
            rest = &inner[end + 1..];
            Some(inner[..end].to_owned())
        }
        None => None,
    };
    match (attr_rule, &attr) {
        (Attr::Required, None) => return Err(format!("{key} needs {{attribute}}")),
        (Attr::Forbidden, Some(a)) => return Err(format!("{key} takes no {{attribute}}, got {{{a}}}")),
        (_, Some(a)) if a.is_empty() => return Err(format!("{key} has an empty {{}}")),
        _ => {}
    }

    let &(spelling, op) = Op::ALL
        .iter()
        .find(|(s, _)| rest.starts_with(s))
        .ok_or_else(|| format!("{key}: expected an operator at {rest:?}"))?;
    if !ops.contains(&op) {
        return Err(format!("{key} does not take {spelling}"));
    }
    rest = &rest[spelling.len()..];

    let quoted = rest.strip_prefix('"').ok_or_else(|| format!("{key}: the value must be in double quotes"))?;
    let end = quoted.find('"').ok_or_else(|| format!("{key}: unterminated value"))?;
    let value = quoted[..end].to_owned();
    rest = &quoted[end + 1..];

    if key == "MODE" && !(value.len() == 4 && value.bytes().all(|b| (b'0'..=b'7').contains(&b))) {
        return Err(format!("MODE=\"{value}\" is not four octal digits"));
    }
    let is_id = matches!(attr.as_deref(), Some("idVendor" | "idProduct"));
    if is_id && !(value.len() == 4 && value.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))) {
        return Err(format!("{key}{{{}}}==\"{value}\" is not four lowercase hex digits", attr.unwrap_or_default()));
    }
    Ok((Item { key: key.to_owned(), attr, op, value }, rest))
}

// ---------------------------------------------------------------------------
// A small udev: the subset of its matching and assignment these rules use.

/// A device event as udev sees it: the tty itself, and the USB device above it.
#[derive(Clone, Copy)]
struct Device<'a> {
    action: &'a str,
    subsystem: &'a str,
    kernel: &'a str,
    usb: Option<Usb<'a>>,
}

impl Default for Device<'_> {
    fn default() -> Self {
        Self { action: "add", subsystem: "tty", kernel: "ttyACM0", usb: None }
    }
}

/// The USB device's sysfs attributes, as the kernel writes them (lowercase hex).
#[derive(Clone, Copy)]
struct Usb<'a> {
    vid: &'a str,
    pid: &'a str,
    serial: Option<&'a str>,
}

impl Usb<'_> {
    fn attr(&self, name: &str) -> Option<&str> {
        match name {
            "idVendor" => Some(self.vid),
            "idProduct" => Some(self.pid),
            "serial" => self.serial,
            _ => None,
        }
    }
}

/// What the rules did to a device.
#[derive(Debug, Default, PartialEq, Eq)]
struct Outcome {
    mode: Option<String>,
    group: Option<String>,
    env: BTreeMap<String, String>,
    symlinks: Vec<String>,
    tags: Vec<String>,
}

impl Outcome {
    /// What every port that may be a board should get.
    fn board(symlinks: &[&str]) -> Self {
        Self {
            mode: Some("0660".into()),
            group: Some("boardcast".into()),
            env: BTreeMap::from([("ID_MM_DEVICE_IGNORE".into(), "1".into())]),
            symlinks: symlinks.iter().map(|s| (*s).to_owned()).collect(),
            tags: vec!["systemd".into()],
        }
    }
}

fn apply(rules: &[Rule], device: &Device<'_>) -> Outcome {
    let mut out = Outcome::default();
    let mut goto: Option<&str> = None;
    for rule in rules {
        if let Some(label) = goto {
            if rule.items.iter().any(|it| it.key == "LABEL" && it.value == label) {
                goto = None;
            }
            continue;
        }
        if !rule.items.iter().filter(|it| it.op.is_match()).all(|it| matches(it, device)) {
            continue;
        }
        for item in rule.items.iter().filter(|it| !it.op.is_match()) {
            let value = substitute(&item.value, device);
            match (item.key.as_str(), item.op) {
                ("MODE", _) => out.mode = Some(value),
                ("GROUP", _) => out.group = Some(value),
                ("ENV", _) => {
                    out.env.insert(item.attr.clone().unwrap(), value);
                }
                ("SYMLINK", Op::Add) => out.symlinks.push(value),
                ("TAG", Op::Add) => out.tags.push(value),
                ("GOTO", _) => goto = Some(&item.value),
                ("LABEL", _) => {}
                (key, op) => panic!("line {}: the simulation does not know {key} {op:?}", rule.line),
            }
        }
    }
    out
}

fn matches(item: &Item, device: &Device<'_>) -> bool {
    let actual = match (item.key.as_str(), item.attr.as_deref()) {
        ("ACTION", None) => Some(device.action),
        ("SUBSYSTEM", None) => Some(device.subsystem),
        ("KERNEL", None) => Some(device.kernel),
        ("ATTRS", Some(attr)) => device.usb.as_ref().and_then(|usb| usb.attr(attr)),
        (key, _) => panic!("the simulation does not know the match key {key}"),
    };
    let Some(actual) = actual else {
        // A missing attribute never satisfies ==; these rules use no != on attributes.
        assert_eq!(item.op, Op::Equal, "the simulation does not know {}!= on a missing value", item.key);
        return false;
    };
    let hit = item.value.split('|').any(|pattern| glob(pattern.as_bytes(), actual.as_bytes()));
    hit == (item.op == Op::Equal)
}

/// `$attr{name}` from the device the ATTRS keys matched (here, the USB device).
fn substitute(value: &str, device: &Device<'_>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("$attr{") {
        out.push_str(&rest[..at]);
        let name_end = rest[at..].find('}').expect("closed $attr{") + at;
        let name = &rest[at + "$attr{".len()..name_end];
        out.push_str(device.usb.as_ref().and_then(|usb| usb.attr(name)).unwrap_or_default());
        rest = &rest[name_end + 1..];
    }
    out.push_str(rest);
    assert!(!out.contains(['$', '%']), "the simulation does not know the substitution in {value:?}");
    out
}

/// Shell-style glob: `*`, `?` and `[a-z0-9]` classes.
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| glob(rest, &text[skip..])),
        Some((b'?', rest)) => !text.is_empty() && glob(rest, &text[1..]),
        Some((b'[', rest)) => {
            let close = rest.iter().position(|&b| b == b']').expect("closed [");
            let (class, rest) = (&rest[..close], &rest[close + 1..]);
            let Some((&c, text)) = text.split_first() else { return false };
            let mut hit = false;
            let mut i = 0;
            while i < class.len() {
                if i + 2 < class.len() && class[i + 1] == b'-' {
                    hit |= (class[i]..=class[i + 2]).contains(&c);
                    i += 3;
                } else {
                    hit |= class[i] == c;
                    i += 1;
                }
            }
            hit && glob(rest, text)
        }
        Some((&p, rest)) => text.first() == Some(&p) && glob(rest, &text[1..]),
    }
}
