//! `boardcast synth`: captures generated from real games, for testing
//! displays, broadcast set-ups and the daemon itself without a board.

use std::{fs, path::PathBuf, process::ExitCode};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

use boardcast::{
    protocol::Protocol,
    synth::{DgtForm, Style, dgt_capture, events_capture, header, play, read_games, read_san_lines, rng_for},
};

/// Turns games from a PGN file into sensor captures, as a board would have
/// reported them: pieces lifted and placed in every order the Laws allow,
/// sliding pieces, scan-order swaps, sensor flicker, quick replies, clock
/// presses and the result gesture, chosen at random from the seed.
///
/// Writes one capture per game to standard output (one after another), or
/// files `game-N.jsonl` into --out.
#[derive(Debug, Args)]
pub(crate) struct SynthArgs {
    /// A PGN file (or a file of bare SAN lines, one game per line).
    #[arg(value_name = "PGN")]
    pgn: PathBuf,
    /// Only this game (1 for the first).
    #[arg(long, value_name = "N")]
    game: Option<usize>,
    /// Seed for the random choices; the same seed gives the same capture.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The capture's protocol.
    #[arg(long, value_enum, default_value_t = Form::Events)]
    protocol: Form,
    /// Calm players on a board with a clock: no slides, flicker or quick
    /// replies.
    #[arg(long)]
    calm: bool,
    /// Write `game-N.jsonl` files into this folder.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Form {
    Events,
    Dgt,
}

pub(crate) fn run(args: SynthArgs) -> anyhow::Result<ExitCode> {
    let text = fs::read_to_string(&args.pgn).with_context(|| format!("reading {}", args.pgn.display()))?;
    let games = if text.contains('[') || text.contains("1.") { read_games(&text) } else { read_san_lines(&text) }
        .with_context(|| format!("reading the games in {}", args.pgn.display()))?;
    if games.is_empty() {
        bail!("{} holds no games", args.pgn.display());
    }
    let chosen: Vec<usize> = match args.game {
        Some(n) if n == 0 || n > games.len() => bail!("--game {n}: the file holds games 1 to {}", games.len()),
        Some(n) => vec![n - 1],
        None => (0..games.len()).collect(),
    };
    if let Some(dir) = &args.out {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    for index in chosen {
        let game = &games[index];
        let mut rng = rng_for(args.seed, index);
        let style = if args.calm { Style::calm() } else { Style::varied(&mut rng) };
        let stream = play(game, &style, &mut rng);
        let board = format!("synth-{}", index + 1);
        let capture = match args.protocol {
            Form::Events => events_capture(&header(game, Protocol::Events, &board), &stream.events),
            Form::Dgt => {
                let form = DgtForm::varied(&mut rng);
                dgt_capture(&header(game, Protocol::Dgt, &board), &stream.events, form, &mut rng)
            }
        };
        match &args.out {
            Some(dir) => {
                let path = dir.join(format!("game-{}.jsonl", index + 1));
                fs::write(&path, capture).with_context(|| format!("writing {}", path.display()))?;
            }
            None => out!("{capture}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
