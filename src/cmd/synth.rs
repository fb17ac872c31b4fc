//! `boardcast synth`: captures generated from real games, for testing
//! displays, broadcast set-ups and the daemon itself without a board; with
//! `--profile irregular` or `mixed`, a corpus of games with irregularities
//! and the labels that say what the arbiter must be told (docs/alerts.md).

use std::{fs, path::PathBuf, process::ExitCode};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

use boardcast_core::protocol::Protocol;
use boardcast_sim::synth::{
    DgtForm, MillenniumForm, Profile, ReportForm, SourceGame, chessnut_capture, dgt_capture, events_capture, generate,
    header, link_capture, millennium_capture, pegasus_capture, read_games, read_san_lines, rng_for,
};

/// Turns games from PGN files into sensor captures, as a board would have
/// reported them: pieces lifted and placed in every order the Laws allow,
/// sliding pieces, scan-order swaps, sensor flicker, quick replies, clock
/// presses and the result gesture, chosen at random from the seed.
///
/// Writes one capture per game to standard output (one after another), or
/// files `game-N.jsonl` into --out. With `--profile irregular` or `mixed`,
/// irregularities (touch-move, illegal moves, presses without a move,
/// displaced pieces, released pieces moved on, pawns not replaced) are
/// made in the games, and each capture gets `game-N.labels.jsonl` beside
/// it saying what the Laws expect the arbiter to be told, plus an index
/// `corpus.jsonl`.
#[derive(Debug, Args)]
pub(crate) struct SynthArgs {
    /// PGN files (or files of bare SAN lines, one game per line); their
    /// games are taken in order.
    #[arg(value_name = "PGN", required = true)]
    pgn: Vec<PathBuf>,
    /// Only this game (1 for the first).
    #[arg(long, value_name = "N", conflicts_with = "count")]
    game: Option<usize>,
    /// Make N captures, from games spread evenly over the files (again from
    /// the first when N is larger than the number of games).
    #[arg(long, value_name = "N")]
    count: Option<usize>,
    /// Seed for the random choices; the same seed gives the same capture.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The capture's protocol; `mixed` alternates `events` and `dgt`.
    /// `chessnut`, `pegasus`, `squareoff`, `ichessone` and `chessup` are the
    /// Bluetooth LE boards' notifications (messages cut over
    /// notifications; a Pegasus and a Square Off tell only occupancy), and
    /// `millennium` a Millennium board's frames (as over Bluetooth LE: no
    /// line noise), without a clock.
    #[arg(long, value_enum, default_value_t = Form::Events)]
    protocol: Form,
    /// The players: `clean` (calm, with a clock), `noisy` (every physical
    /// variation, with or without a clock), `irregular` (noisy, with 3 to 5
    /// irregularities per game), `mixed` (a quarter clean, a quarter noisy,
    /// half irregular). `irregular` and `mixed` need --out.
    #[arg(long, value_enum, default_value_t = ProfileArg::Noisy)]
    profile: ProfileArg,
    /// The same as `--profile clean`.
    #[arg(long, conflicts_with = "profile")]
    calm: bool,
    /// Write `game-N.jsonl` files into this folder.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Form {
    Events,
    Dgt,
    Chessnut,
    Pegasus,
    Squareoff,
    Ichessone,
    Chessup,
    Millennium,
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ProfileArg {
    Clean,
    Noisy,
    Irregular,
    Mixed,
}

pub(crate) fn run(args: SynthArgs) -> anyhow::Result<ExitCode> {
    let mut games: Vec<(String, SourceGame)> = Vec::new();
    for path in &args.pgn {
        let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let read = if text.contains('[') || text.contains("1.") { read_games(&text) } else { read_san_lines(&text) }
            .with_context(|| format!("reading the games in {}", path.display()))?;
        let file = path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into_owned());
        games.extend(read.into_iter().enumerate().map(|(i, g)| (format!("{file}#{}", i + 1), g)));
    }
    if games.is_empty() {
        bail!("{} holds no games", args.pgn.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    }
    let profile = if args.calm { ProfileArg::Clean } else { args.profile };
    let labelled = matches!(profile, ProfileArg::Irregular | ProfileArg::Mixed);
    if labelled && args.out.is_none() {
        bail!("--profile irregular and mixed write a labels file beside each capture: give a folder with --out DIR");
    }
    // (capture number, game index)
    let chosen: Vec<(usize, usize)> = match (args.game, args.count) {
        (Some(n), _) if n == 0 || n > games.len() => bail!("--game {n}: the files hold games 1 to {}", games.len()),
        (Some(n), _) => vec![(n - 1, n - 1)],
        (None, Some(count)) if count <= games.len() => (0..count).map(|k| (k, k * games.len() / count)).collect(),
        (None, Some(count)) => (0..count).map(|k| (k, k % games.len())).collect(),
        (None, None) => (0..games.len()).map(|k| (k, k)).collect(),
    };
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut index = String::new();
    for (k, g) in chosen {
        let (source, game) = &games[g];
        let mut rng = rng_for(args.seed, k);
        let profile = match profile {
            ProfileArg::Clean => Profile::Clean,
            ProfileArg::Noisy => Profile::Noisy,
            ProfileArg::Irregular => Profile::Irregular,
            ProfileArg::Mixed => [Profile::Clean, Profile::Noisy, Profile::Irregular, Profile::Irregular][k % 4],
        };
        let form = match args.protocol {
            Form::Mixed if (k / 2) % 2 == 1 => Form::Dgt,
            Form::Mixed => Form::Events,
            form => form,
        };
        let generated = generate(game, profile, &mut rng);
        let board = format!("synth-{}", k + 1);
        let events = &generated.stream.events;
        let protocol = match form {
            Form::Dgt => Protocol::DGT,
            Form::Chessnut => Protocol::CHESSNUT,
            Form::Pegasus => Protocol::PEGASUS,
            Form::Squareoff => Protocol::SQUAREOFF,
            Form::Ichessone => Protocol::ICHESSONE,
            Form::Chessup => Protocol::CHESSUP,
            Form::Millennium => Protocol::MILLENNIUM,
            Form::Events | Form::Mixed => Protocol::EVENTS,
        };
        let capture = match form {
            Form::Dgt => {
                let form = DgtForm::varied(&mut rng);
                dgt_capture(&header(game, Protocol::DGT, &board), events, form, &mut rng)
            }
            Form::Chessnut => {
                let form = ReportForm { every: std::time::Duration::from_millis(50), ..ReportForm::varied(&mut rng) };
                chessnut_capture(&header(game, Protocol::CHESSNUT, &board), events, form, &mut rng)
            }
            Form::Pegasus => pegasus_capture(&header(game, Protocol::PEGASUS, &board), events, &mut rng),
            Form::Squareoff | Form::Ichessone | Form::Chessup => {
                let form = ReportForm { every: std::time::Duration::from_millis(50), ..ReportForm::varied(&mut rng) };
                link_capture(&header(game, protocol, &board), events, form, &mut rng)
            }
            Form::Millennium => {
                let form = MillenniumForm { noise: 0.0, ..MillenniumForm::varied(&mut rng) };
                millennium_capture(&header(game, Protocol::MILLENNIUM, &board), events, form, &mut rng)
            }
            Form::Events | Form::Mixed => events_capture(&header(game, Protocol::EVENTS, &board), events),
        };
        let Some(dir) = &args.out else {
            out!("{capture}");
            continue;
        };
        let name = format!("game-{}", k + 1);
        let path = dir.join(format!("{name}.jsonl"));
        fs::write(&path, capture).with_context(|| format!("writing {}", path.display()))?;
        if labelled {
            let mut labels = String::new();
            for label in &generated.labels {
                labels.push_str(&label.to_json().to_string());
                labels.push('\n');
            }
            let path = dir.join(format!("{name}.labels.jsonl"));
            fs::write(&path, labels).with_context(|| format!("writing {}", path.display()))?;
            let entry = serde_json::json!({
                "capture": format!("{name}.jsonl"),
                "labels": format!("{name}.labels.jsonl"),
                "source": source,
                "profile": profile.name(),
                "protocol": protocol.name(),
                "clock": generated.style.clock.is_some(),
                "plies": generated.stream.expected.uci.len(),
                "expected_alerts": generated.labels.len(),
            });
            index.push_str(&entry.to_string());
            index.push('\n');
        }
    }
    if let Some(dir) = args.out.as_ref().filter(|_| labelled) {
        let path = dir.join("corpus.jsonl");
        fs::write(&path, index).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
