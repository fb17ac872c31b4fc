//! `boardcast manpages DIR` (hidden): writes a man page for the command and
//! one for each subcommand (`boardcast-config-check.1` …), made from the
//! same definitions as `--help`. The Debian package's build runs it
//! (pkg/deb/build); nobody else needs it, hence hidden from `--help`.

use std::{
    fs,
    io::Write as _,
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::Context as _;
use clap::{Args, CommandFactory};
use clap_mangen::{
    Man,
    roff::{Roff, bold, roman},
};

/// Writes the man pages into a folder (created if missing).
#[derive(Debug, Args)]
pub(crate) struct ManpagesArgs {
    /// The folder for the pages (section 1, uncompressed).
    dir: PathBuf,
}

pub(crate) fn run(args: ManpagesArgs) -> anyhow::Result<ExitCode> {
    fs::create_dir_all(&args.dir).with_context(|| format!("creating {}", args.dir.display()))?;
    let mut command = super::Cli::command().disable_help_subcommand(true);
    command.build();
    let mut written = Vec::new();
    write_pages(&command, &args.dir, true, &mut written)?;
    for page in &written {
        outln!("{}", page.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// One page for `command`, then one for each of its visible subcommands.
/// The top page also says where the package keeps its files.
fn write_pages(command: &clap::Command, dir: &Path, top: bool, written: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub, dir, false, written)?;
    }
    // The footer names the version without the commit: the long version
    // does not fit there (the VERSION section has it).
    let man =
        Man::new(command.clone()).source(concat!("boardcast ", env!("CARGO_PKG_VERSION"))).manual("boardcast manual");
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)?;
    if top {
        files_and_see_also().to_writer(&mut page)?;
    }
    let mut file = fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?;
    file.write_all(&page).with_context(|| format!("writing {}", path.display()))?;
    written.push(path);
    Ok(())
}

/// FILES and SEE ALSO for `boardcast(1)`: what `--help` cannot say.
fn files_and_see_also() -> Roff {
    let mut roff = Roff::default();
    roff.control("SH", ["FILES"]);
    let files = [
        (
            "/etc/boardcast/boardcast.toml",
            "The configuration boardcast run reads (then --config, then BOARDCAST__SECTION__KEY variables). \
             boardcast config check reads it and says what the daemon would do.",
        ),
        (
            "/var/lib/boardcast",
            "The service's working directory: relative paths in the configuration (the captures and pgn \
             folders, the operator key, the broker's mqtt-accounts) are under it.",
        ),
        ("/usr/lib/systemd/system/boardcast.service", "The service: systemctl enable --now boardcast."),
        (
            "/usr/lib/udev/rules.d/70-boardcast.rules",
            "Gives the boards' serial ports to the boardcast group and stable names under /dev/boardcast/.",
        ),
    ];
    for (file, what) in files {
        roff.control("TP", []);
        roff.text([bold(file)]);
        roff.text([roman(what)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(
        "boardcast-run(1), boardcast-config(1), boardcast-ctl(1), boardcast-accounts(1), systemctl(1), \
         journalctl(1). The guides (the service, the MQTT feed, the displays, security) are in \
         /usr/share/doc/boardcast/ in the package, and in docs/ in the source.",
    )]);
    roff
}
