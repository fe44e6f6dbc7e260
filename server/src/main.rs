//! `svc-server`: the supervisor and the gateway of `svc serve`, which hands over to it.
//!
//! It links only the `supervisor`, `gateway` and `protocol` crates: the index code (LanceDB,
//! tantivy, ONNX Runtime) lives in the `svc` binary, which the supervisor starts as the
//! worker. Not for direct use.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "svc-server", version, about = "The supervisor and gateway of `svc serve` (started by it)")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Supervise the gateway (this binary) and the worker (`--worker-exe internal worker`).
    Serve {
        #[arg(long)]
        port: u16,
        #[arg(long)]
        detach: bool,
        /// The `svc` binary.
        #[arg(long)]
        worker_exe: PathBuf,
    },
    /// Process roles started by the supervisor.
    #[command(subcommand)]
    Internal(InternalCmd),
    /// Print the gateway-worker protocol version (svc checks it before handing over).
    ProtocolVersion,
}

#[derive(Subcommand)]
enum InternalCmd {
    Gateway {
        #[arg(long)]
        port: u16,
        #[arg(long, default_value_t = 3)]
        listen_fd: i32,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let dirs = protocol::Dirs::from_env();
    if !matches!(cli.command, Cmd::ProtocolVersion) {
        supervisor::init_logging("info");
    }
    let result = match cli.command {
        Cmd::Serve { port, detach, worker_exe } => {
            std::env::current_exe().map_err(|e| e.to_string()).and_then(|gateway_exe| {
                supervisor::serve(supervisor::ServeOptions { port, detach, dirs, gateway_exe, worker_exe })
                    .map_err(|e| e.to_string())
            })
        }
        Cmd::ProtocolVersion => {
            println!("{}", protocol::PROTOCOL_VERSION);
            Ok(())
        }
        Cmd::Internal(InternalCmd::Gateway { port, listen_fd }) => {
            gateway::role::run_inherited(dirs, port, listen_fd).map_err(|e| e.to_string())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
