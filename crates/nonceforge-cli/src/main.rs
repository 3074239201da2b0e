//! `nonceforge`: make nonces from the command line, and measure them.

mod bench;
mod decompose_cmd;
mod extid_cmd;
mod gen_cmd;
mod key;
mod lease;
mod stats_json;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Values that must never repeat: nonces unique across a cluster.
#[derive(Debug, Parser)]
#[command(name = "nonceforge", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print nonces, one a line.
    ///
    /// Examples:
    ///   nonceforge gen counter --bits 96 -n 3 --machine-id 12
    ///   NONCEFORGE_MACHINE_ID=12 nonceforge gen sortable --bits 64 --format int
    ///   NONCEFORGE_KEY=$(head -c32 /dev/urandom | od -An -tx1 | tr -d ' \n') \
    ///     nonceforge gen encrypted --bits 128 --machine-id 12
    ///
    /// Nonce kinds need this machine's id, chosen on purpose (--machine-id,
    /// --machine-id-env, --hosts, --lease or NONCEFORGE_MACHINE_ID): there is no
    /// default, since two generators on one id make the same nonces.
    #[command(verbatim_doc_comment)]
    Gen(gen_cmd::GenArgs),
    /// External ids: opaque, UUID-shaped ids from internal sequential ids, and back.
    ///
    /// The master key comes from --key-file or NONCEFORGE_EXTID_KEY, never from a flag's value.
    #[command(subcommand)]
    Extid(extid_cmd::ExtIdCommand),
    /// Measure every kind of nonce, with the OS random source and the uuid crate
    /// measured in the same run as baselines.
    ///
    /// Examples:
    ///   nonceforge bench
    ///   nonceforge bench --json --threads 1,2 --seconds 2 --filter counter
    #[command(verbatim_doc_comment)]
    Bench(bench::BenchArgs),
    /// Machine-id leases in PostgreSQL, Redis or etcd: take, list, free.
    ///
    /// Examples:
    ///   nonceforge lease acquire --backend redis://127.0.0.1:6379 --for 1m
    ///   nonceforge lease status --backend etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379
    ///   nonceforge lease release --backend postgres://app@db/app --id 12
    ///   nonceforge gen sortable --bits 64 -n 1000 --lease postgres://app@db/app
    #[command(subcommand, verbatim_doc_comment)]
    Lease(lease::LeaseCommand),
    /// Take plain nonces apart: time, machine id, counter (one a line, as hex;
    /// or read from standard input). Any face's nonces: same layout everywhere.
    ///
    /// Examples:
    ///   nonceforge decompose 0014c0ba6b20e001
    ///   nonceforge gen sortable --bits 96 -n 3 --machine-id 12 | nonceforge decompose --json
    ///
    /// (`inspect`, its earlier name, still works.)
    #[command(verbatim_doc_comment, alias = "inspect")]
    Decompose(decompose_cmd::DecomposeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen(args) => gen_cmd::run(args),
        Command::Extid(cmd) => extid_cmd::run(cmd),
        Command::Bench(args) => bench::run(args),
        Command::Lease(cmd) => lease::run(cmd),
        Command::Decompose(args) => decompose_cmd::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.is_broken_pipe() {
                // `nonceforge gen ... | head` is normal use, not an error.
                return ExitCode::SUCCESS;
            }
            eprintln!("nonceforge: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// An error from a subcommand, with the exit status it maps to.
#[derive(Debug)]
pub enum CliError {
    /// Bad input from the user (exit status 2, as clap uses).
    Usage(String),
    /// An error from the library.
    Nonce(nonceforge::Error),
    /// Writing the output failed.
    Io(std::io::Error),
    /// A machine-id lease could not be taken or kept.
    Lease(nonceforge_lease::LeaseError),
    /// A leased generator stopped, or the store refused what was asked (the
    /// message says why): exit status 1.
    Stopped(String),
}

impl CliError {
    fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Nonce(_) | CliError::Io(_) | CliError::Lease(_) | CliError::Stopped(_) => 1,
        }
    }
    fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Usage(m) => f.write_str(m),
            CliError::Nonce(e) => e.fmt(f),
            CliError::Io(e) => write!(f, "writing output: {e}"),
            CliError::Lease(e) => e.fmt(f),
            CliError::Stopped(m) => f.write_str(m),
        }
    }
}

impl From<nonceforge::Error> for CliError {
    fn from(e: nonceforge::Error) -> Self {
        CliError::Nonce(e)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Io(e)
    }
}
