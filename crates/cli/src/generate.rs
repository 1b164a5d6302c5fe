//! Man pages and shell completions, generated from a binary's own clap definition: every binary
//! takes a hidden `--generate KIND` (ripgrep's design), so a packager runs the binary it ships
//! and gets documentation that matches it, with no separate tool to build or keep in step.
//!
//! The option is added to the command at parse time only, so that what it generates never
//! mentions it (clap_complete would offer even a hidden option).

use std::io::Write;
use std::process::ExitCode;

use clap::Arg;
use clap_complete::Shell;

/// What `--generate` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// A man page (roff, section 1).
    Man,
    CompleteBash,
    CompleteZsh,
    CompleteFish,
    CompletePowershell,
    CompleteElvish,
}

/// The option's id and long name.
const GENERATE: &str = "generate";

/// Parses the command line as `A`, after the options of its config file (`crawler.toml`,
/// `config.rs`: a bad file exits 2, naming the key and line); given `--generate KIND` instead,
/// prints KIND for `A` on stdout and returns the exit code. A bad command line exits 2 with clap's message, as
/// `A::parse()` does.
pub fn parse_args<A: clap::Parser>() -> Result<A, ExitCode> {
    let generate = Arg::new(GENERATE)
        .long(GENERATE)
        .value_name("KIND")
        .value_parser(clap::value_parser!(Kind))
        .hide(true);
    let command = crate::config::with_arg(A::command());
    let args = crate::config::with_config(&command, std::env::args_os().collect(), |name| {
        std::env::var(name).ok()
    });
    let args = match args {
        Ok(args) => args,
        Err(error) => return Err(crate::process::usage_error(&error)),
    };
    let mut matches = command.arg(generate).get_matches_from(args);
    if let Some(&kind) = matches.get_one::<Kind>(GENERATE) {
        let mut out = std::io::stdout().lock();
        let command = crate::config::with_arg(A::command());
        return Err(match write(command, kind, &mut out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => crate::process::runtime_error(&error),
        });
    }
    A::from_arg_matches_mut(&mut matches).map_err(|error| error.format(&mut A::command()).exit())
}

/// Writes `kind` for `command` to `out`.
fn write(mut command: clap::Command, kind: Kind, out: &mut impl Write) -> std::io::Result<()> {
    let shell = match kind {
        Kind::Man => return clap_mangen::Man::new(command).render(out),
        Kind::CompleteBash => Shell::Bash,
        Kind::CompleteZsh => Shell::Zsh,
        Kind::CompleteFish => Shell::Fish,
        Kind::CompletePowershell => Shell::PowerShell,
        Kind::CompleteElvish => Shell::Elvish,
    };
    let name = command.get_name().to_owned();
    clap_complete::generate(shell, &mut command, name, out);
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// A binary with one option.
    #[derive(clap::Parser)]
    #[command(name = "crawler-example", version)]
    struct Args {
        /// Where to look.
        #[arg(long)]
        place: Option<String>,
    }

    fn generated(kind: Kind) -> String {
        let mut out = Vec::new();
        write(Args::command(), kind, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_man_page_names_the_binary_and_documents_its_options() {
        let man = generated(Kind::Man);
        assert!(man.contains(".TH crawler-example 1"), "{man}");
        assert!(
            man.contains("\\-\\-place") && man.contains("Where to look"),
            "{man}"
        );
    }

    #[test]
    fn each_shell_completes_the_binarys_options() {
        for kind in [
            Kind::CompleteBash,
            Kind::CompleteZsh,
            Kind::CompleteFish,
            Kind::CompletePowershell,
            Kind::CompleteElvish,
        ] {
            let script = generated(kind);
            assert!(
                script.contains("crawler-example") && script.contains("place"),
                "{kind:?}: {script}"
            );
        }
    }
}
