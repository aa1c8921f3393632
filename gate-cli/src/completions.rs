//! `gate completions`: a shell completion script, so that subcommands, flags
//! and their values (`--format`, `--outcome`) complete on Tab.

use std::process::ExitCode;

use clap::CommandFactory;

use crate::{Cli, UsageError};

/// Arguments of `gate completions`.
#[derive(clap::Args)]
#[command(
    after_help = "Installing: each shell loads the script from a directory of its own when it starts.
  bash: bash-completion's user directory, ~/.local/share/bash-completion/completions
  zsh:  a directory on $fpath, as _gate; for ~/.zfunc, put `fpath=(~/.zfunc $fpath)`
        in ~/.zshrc before `compinit` runs
  fish: ~/.config/fish/completions

Examples:
  mkdir -p ~/.local/share/bash-completion/completions && gate completions bash > ~/.local/share/bash-completion/completions/gate
  mkdir -p ~/.zfunc && gate completions zsh > ~/.zfunc/_gate
  mkdir -p ~/.config/fish/completions && gate completions fish > ~/.config/fish/completions/gate.fish"
)]
pub(crate) struct Args {
    /// The shell to complete in.
    shell: Shell,
}

/// The shells gate prints a script for.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl From<Shell> for clap_complete::Shell {
    fn from(shell: Shell) -> Self {
        match shell {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
        }
    }
}

/// Prints the script. It is generated in memory first: clap_complete panics
/// on a write error, and a closed pipe (`gate completions bash | head`) must
/// end the command quietly, as every other output does.
pub(crate) fn run(args: Args) -> Result<ExitCode, UsageError> {
    let mut script = Vec::new();
    clap_complete::generate(
        clap_complete::Shell::from(args.shell),
        &mut Cli::command(),
        "gate",
        &mut script,
    );
    out!("{}", String::from_utf8(script)?);
    Ok(ExitCode::SUCCESS)
}
