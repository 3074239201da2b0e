//! `nonceforge extid`: external ids from internal ones, and back.

use crate::{CliError, key};
use clap::{Args, Subcommand};
use nonceforge::extid::{ExtIdCodec, ExtIdMode, Keyring, TextForm};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum ExtIdCommand {
    /// Print the external id of a sequence number (and random half).
    ///
    /// Example:
    ///   NONCEFORGE_EXTID_KEY=$(head -c32 /dev/urandom | xxd -p -c64) \
    ///     nonceforge extid encode --type user --seq 42 --rand 12345 --format base32 --prefix
    #[command(verbatim_doc_comment)]
    Encode(EncodeArgs),
    /// Print the sequence number and random half of an external id.
    ///
    /// Example:
    ///   nonceforge extid decode --type user 0c9a…-…   (any text form: UUID, base64url, base32)
    #[command(verbatim_doc_comment)]
    Decode(DecodeArgs),
}

#[derive(Debug, Args)]
pub struct CodecArgs {
    /// The id type (table): 1 to 63 of a-z and _, starting and ending with a letter.
    #[arg(long = "type", value_name = "TYPE")]
    type_name: String,
    /// The construction.
    #[arg(long, default_value = "feistel-uuid", value_parser = parse_mode)]
    mode: ExtIdMode,
    /// Feistel rounds (feistel-uuid): 2, or 4 for the full pseudorandom-permutation margin.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=4))]
    rounds: u8,
    /// UUID version of feistel-uuid ids: 8 or 4.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(4..=8))]
    uuid_version: u8,
    /// The master key's version (0..=15): the one new ids are made with.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=15))]
    key_version: u8,
    /// Keep the key version out of the id (feistel-uuid: 60-bit sequence numbers).
    #[arg(long)]
    key_version_out_of_band: bool,
    /// File holding the master key (hex or base64, at least 32 bytes).
    /// Default: the environment variable NONCEFORGE_EXTID_KEY.
    #[arg(long, value_name = "PATH")]
    key_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct EncodeArgs {
    #[command(flatten)]
    codec: CodecArgs,
    /// The sequence number (the internal id).
    #[arg(long)]
    seq: u64,
    /// The random half kept with the row (default: fresh from the OS).
    #[arg(long)]
    rand: Option<u64>,
    /// Text form.
    #[arg(long, default_value = "uuid", value_parser = parse_form)]
    format: TextForm,
    /// base32: start with the type and _ (TypeID-like: user_…).
    #[arg(long)]
    prefix: bool,
    /// base32: end with a check character.
    #[arg(long)]
    check: bool,
}

#[derive(Debug, Args)]
pub struct DecodeArgs {
    #[command(flatten)]
    codec: CodecArgs,
    /// Refuse ids whose sequence number is above this (never issued).
    #[arg(long, value_name = "N")]
    max_issued: Option<u64>,
    /// The id, in any text form.
    id: String,
}

fn parse_mode(s: &str) -> Result<ExtIdMode, String> {
    s.parse().map_err(|e: nonceforge::Error| e.to_string())
}

fn parse_form(s: &str) -> Result<TextForm, String> {
    s.parse().map_err(|e: nonceforge::Error| e.to_string())
}

fn codec(args: &CodecArgs) -> Result<ExtIdCodec, CliError> {
    if args.rounds == 3 {
        return Err(CliError::Usage("--rounds: 2 or 4".into()));
    }
    if !matches!(args.uuid_version, 4 | 8) {
        return Err(CliError::Usage("--uuid-version: 8 or 4".into()));
    }
    let master = key::load(args.key_file.as_deref(), key::EXTID_KEY_ENV)?.ok_or_else(|| {
        CliError::Usage(format!(
            "external ids need a master key of at least 32 bytes: pass --key-file PATH or set {} (hex or base64)",
            key::EXTID_KEY_ENV
        ))
    })?;
    let ring = Keyring::new(args.key_version, &master)?;
    Ok(ExtIdCodec::builder(&ring, &args.type_name)
        .mode(args.mode)
        .rounds(args.rounds)
        .uuid_version(args.uuid_version)
        .key_version_in_band(!args.key_version_out_of_band)
        .build()?)
}

pub fn run(cmd: ExtIdCommand) -> Result<(), CliError> {
    match cmd {
        ExtIdCommand::Encode(a) => {
            let c = codec(&a.codec)?;
            let rand = match a.rand {
                Some(r) => r,
                None => {
                    getrandom::u64()
                        .map_err(|e| CliError::Usage(format!("the OS random source failed: {e}")))?
                        & c.max_rand()
                }
            };
            let id = c.encode(a.seq, rand)?;
            if (a.prefix || a.check) && a.format != TextForm::Base32 {
                return Err(CliError::Usage(
                    "--prefix and --check go with --format base32".into(),
                ));
            }
            println!("{}", c.format(&id, a.format, a.prefix, a.check));
            Ok(())
        }
        ExtIdCommand::Decode(a) => {
            let c = codec(&a.codec)?;
            let id = c.parse(a.id.trim())?;
            let d = c.decode(&id)?;
            if let Some(max) = a.max_issued {
                d.check_issued(max)?;
            }
            println!(
                "seq={} rand={} key_version={}",
                d.seq, d.rand, d.key_version
            );
            Ok(())
        }
    }
}
