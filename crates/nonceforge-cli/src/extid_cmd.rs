//! `nonceforge extid`: external ids from internal ones, and back.

use crate::{CliError, key};
use clap::{Args, Subcommand};
use nonceforge::extid::{ExtIdCodec, ExtIdMode, Keyring, TextForm};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum ExtIdCommand {
    /// Print the external id of a sequence number. By default its random half
    /// is derived from the sequence number under the key — every face's call
    /// without a random half, so the same id as Rust's encode_seq, Go's
    /// EncodeSeq, Node's encode(seq), Elixir's encode/2 and PostgreSQL's
    /// extid_encode(type, seq). --rand N: the row's stored random half;
    /// --rand random: a fresh one, printed after the id (store it).
    ///
    /// Example:
    ///   NONCEFORGE_EXTID_KEY=$(head -c32 /dev/urandom | od -An -tx1 | tr -d ' \n') \
    ///     nonceforge extid encode --type user --seq 42 --format base32 --prefix
    #[command(verbatim_doc_comment)]
    Encode(EncodeArgs),
    /// Print the sequence number, random half and key version of an external
    /// id made by `extid encode` without --rand under these keys, refusing any
    /// other (exit 1). With --unverified, of any well-formed id (ids made with
    /// a stored random half), and whether its random half is the derived one.
    ///
    /// Example:
    ///   nonceforge extid decode --type user 0c9a…-…   (UUID, base64url or base32; refuses ids not made here)
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
    /// Feistel rounds (feistel-uuid): 2, or 4 for a strong pseudorandom permutation whatever the random half.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=4))]
    rounds: u8,
    /// UUID version of feistel-uuid ids: 8 or 4.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(4..=8))]
    uuid_version: u8,
    /// The master key's version (0..=15): the one new ids are made with (and,
    /// with --key-version-out-of-band, the one ids are decoded with).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=15))]
    key_version: u8,
    /// An older key version to decode with, as VERSION=PATH (a file holding
    /// that version's master key); repeat for each. After a rotation, ids made
    /// under these versions still decode.
    #[arg(long = "old-key", value_name = "VERSION=PATH", value_parser = parse_old_key)]
    old_keys: Vec<(u8, PathBuf)>,
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
    /// The random half: a number (the one stored with the row), or `random`
    /// for a fresh one from the OS (printed after the id: store it). Default:
    /// derived from --seq under the key (nothing to store).
    #[arg(long, value_name = "N|random", value_parser = parse_rand)]
    rand: Option<Rand>,
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
    /// Decode any well-formed id without checking it was made here: for ids
    /// made with a stored random half (`extid encode --rand`), whose rand you
    /// then compare with the row's. Without it, an id whose random half is
    /// not the derived one (not made by `extid encode` without --rand under
    /// these keys) is refused, exit 1.
    #[arg(long)]
    unverified: bool,
    /// The default since 0.2.0 (kept so scripts that pass it still run).
    #[arg(long, hide = true, conflicts_with = "unverified")]
    check_derived: bool,
    /// The id, in any text form.
    id: String,
}

/// --rand's value.
#[derive(Debug, Clone, Copy)]
pub enum Rand {
    Given(u64),
    Random,
}

fn parse_rand(s: &str) -> Result<Rand, String> {
    if s == "random" {
        return Ok(Rand::Random);
    }
    s.parse()
        .map(Rand::Given)
        .map_err(|_| format!("{s:?} is neither a number in 0..2^64 nor `random`"))
}

fn parse_old_key(s: &str) -> Result<(u8, PathBuf), String> {
    let (v, path) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: write VERSION=PATH, e.g. 0=/etc/keys/extid-0"))?;
    let v: u8 = v
        .parse()
        .ok()
        .filter(|v| *v <= 15)
        .ok_or_else(|| format!("{s:?}: the version must be in 0..=15"))?;
    if path.is_empty() {
        return Err(format!("{s:?}: the path is empty"));
    }
    Ok((v, PathBuf::from(path)))
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
    let mut ring = Keyring::new(args.key_version, &master)?;
    for (v, path) in &args.old_keys {
        let key = key::load(Some(path), key::EXTID_KEY_ENV)?
            .ok_or_else(|| CliError::Usage(format!("--old-key {v}={}: no key", path.display())))?;
        ring.add(*v, &key).map_err(|e| {
            CliError::Usage(format!(
                "--old-key {v}={}: {e} (the current key is version {})",
                path.display(),
                args.key_version
            ))
        })?;
    }
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
            if (a.prefix || a.check) && a.format != TextForm::Base32 {
                return Err(CliError::Usage(
                    "--prefix and --check go with --format base32".into(),
                ));
            }
            let (id, drawn) = match a.rand {
                None => (c.encode_seq(a.seq)?, None),
                Some(Rand::Given(r)) => (c.encode(a.seq, r)?, None),
                Some(Rand::Random) => {
                    let r = getrandom::u64().map_err(|e| {
                        CliError::Usage(format!("the OS random source failed: {e}"))
                    })? & c.max_rand();
                    (c.encode(a.seq, r)?, Some(r))
                }
            };
            let text = c.format(&id, a.format, a.prefix, a.check);
            match drawn {
                Some(r) => println!("{text} rand={r}"),
                None => println!("{text}"),
            }
            Ok(())
        }
        ExtIdCommand::Decode(a) => {
            let c = codec(&a.codec)?;
            let id = c.parse(a.id.trim())?;
            let d = if a.unverified {
                c.decode_unverified(&id)?
            } else {
                c.decode(&id)?
            };
            if let Some(max) = a.max_issued {
                d.check_issued(max)?;
            }
            let derived = c.is_derived(&d);
            println!(
                "seq={} rand={} key_version={} derived={derived}",
                d.seq, d.rand, d.key_version
            );
            Ok(())
        }
    }
}
