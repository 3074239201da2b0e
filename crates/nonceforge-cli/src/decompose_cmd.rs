//! `nonceforge decompose` (alias `inspect`): the parts of plain nonces given as hex.

use crate::CliError;
use clap::Args;
use nonceforge::layout::{DEFAULT_EPOCH_UNIX_MS, Layout};
use std::io::{BufRead, Write};

#[derive(Debug, Args)]
pub struct DecomposeArgs {
    /// Nonces as hex (16, 24 or 32 digits); none: read them from standard input, one a line.
    nonces: Vec<String>,
    /// The epoch they were made with, Unix milliseconds (default 2025-01-01).
    #[arg(long, default_value_t = DEFAULT_EPOCH_UNIX_MS)]
    epoch: u64,
    /// The layout they were made in: standard (9-bit machine id) or wide
    /// (16-bit machine id; 96 and 128 bits only). The bytes do not say which.
    #[arg(long, default_value = "standard", value_parser = crate::gen_cmd::parse_layout)]
    layout: Layout,
    /// One JSON object a line instead of text.
    #[arg(long)]
    json: bool,
}

fn line(args: &DecomposeArgs, text: &str, out: &mut impl Write) -> Result<(), CliError> {
    let text = text.trim();
    let bytes = hex::decode(text).map_err(|_| {
        CliError::Usage(format!(
            "{text:?} is not a nonce in hex: 16, 24 or 32 hex digits"
        ))
    })?;
    let p = args
        .layout
        .decompose(&bytes, args.epoch)
        .map_err(CliError::Nonce)?;
    let r = if args.json {
        writeln!(
            out,
            "{{\"nonce\":\"{text}\",\"bits\":{},\"unix_ms\":{},\"timestamp_ms\":{},\"machine_id\":{},\"counter\":{}}}",
            bytes.len() * 8,
            p.unix_ms,
            p.timestamp_ms,
            p.machine_id,
            p.counter
        )
    } else {
        writeln!(
            out,
            "{text}: unix_ms {} machine_id {} counter {}",
            p.unix_ms, p.machine_id, p.counter
        )
    };
    r.map_err(CliError::Io)
}

pub fn run(args: DecomposeArgs) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.nonces.is_empty() {
        for text in std::io::stdin().lock().lines() {
            let text = text.map_err(CliError::Io)?;
            if !text.trim().is_empty() {
                line(&args, &text, &mut out)?;
            }
        }
    } else {
        for text in &args.nonces {
            line(&args, text, &mut out)?;
        }
    }
    Ok(())
}
