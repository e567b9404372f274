//! `annal sync --install-service`: the user service that keeps `annal sync --watch` running,
//! a systemd user unit on Linux or a launchd agent on macOS. It is printed first, for review,
//! and written only when confirmed (or with `--yes`); enabling it is left to the user, with the
//! command printed.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::SyncArgs;
use crate::output::Out;
use crate::store::StoreLocation;

/// The service's name: the systemd unit and the launchd label.
const NAME: &str = "annal-sync";

pub(super) fn install(location: &StoreLocation, args: &SyncArgs, out: &mut Out) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("cannot find the annal binary to run")?;
    // The service starts in another folder than this shell: every path must be absolute.
    let db = std::path::absolute(location.path()).context("cannot make the store's path absolute")?;
    let mut command = vec![exe.display().to_string(), "--db".into(), db.display().to_string()];
    command.extend(["sync".into(), "--watch".into()]);
    for (flag, values) in [("--only", &args.only), ("--exclude", &args.exclude)] {
        if !values.is_empty() {
            command.extend([flag.to_owned(), values.join(",")]);
        }
    }
    for path in &args.paths {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        command.extend(["--path".into(), path.display().to_string()]);
    }
    // A service does not read the shell's profile: the agents' overrides set here go with it.
    let env: Vec<(String, String)> = annal::sync::Environment::from_process()
        .vars
        .into_iter()
        .filter_map(|(name, value)| value.into_string().ok().map(|value| (name, value)))
        .collect();
    let home = dirs::home_dir().context("cannot find the home folder to install the service in")?;
    let (file, text, enable) = if cfg!(target_os = "macos") {
        let file = home.join(format!("Library/LaunchAgents/dev.annal.{NAME}.plist"));
        let enable = format!("launchctl load -w {}", file.display());
        (file, launchd(&command, &env), enable)
    } else {
        let config = dirs::config_dir().unwrap_or_else(|| home.join(".config"));
        let file = config.join(format!("systemd/user/{NAME}.service"));
        (file, systemd(&command, &env), format!("systemctl --user enable --now {NAME}.service"))
    };
    writeln!(out, "# {}\n{text}", file.display())?;
    out.flush()?;
    if !args.yes && !confirm(&file)? {
        bail!("not written; run again with --yes to write {}", file.display());
    }
    write(&file, &text)?;
    writeln!(out, "wrote {}; start it with: {enable}", file.display())?;
    Ok(())
}

/// Asks on the terminal; without one, the answer is no.
fn confirm(file: &Path) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!("annal: write {}? [y/N] ", file.display());
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn write(file: &PathBuf, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(file, text).with_context(|| format!("cannot write {}", file.display()))
}

/// A systemd user unit; arguments quoted as systemd splits them, `%` and `$` escaped so that
/// systemd expands neither.
pub(super) fn systemd(command: &[String], env: &[(String, String)]) -> String {
    // `Environment=` expands `%` specifiers but not variables; `ExecStart=` expands both.
    let quote = |a: &str, variables: bool| {
        let escaped = a.replace('\\', "\\\\").replace('"', "\\\"").replace('%', "%%");
        let escaped = if variables { escaped.replace('$', "$$") } else { escaped };
        format!("\"{escaped}\"")
    };
    let quoted: Vec<String> = command.iter().map(|a| quote(a, true)).collect();
    let environment: String =
        env.iter().map(|(k, v)| format!("Environment={}\n", quote(&format!("{k}={v}"), false))).collect();
    format!(
        "[Unit]\nDescription=annal: capture every agent session as it is written\n\n\
         [Service]\n{environment}ExecStart={}\nRestart=on-failure\nRestartSec=10\nNice=10\n\n\
         [Install]\nWantedBy=default.target\n",
        quoted.join(" ")
    )
}

/// A launchd agent property list.
pub(super) fn launchd(command: &[String], env: &[(String, String)]) -> String {
    let escape = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let arguments: String = command.iter().map(|a| format!("    <string>{}</string>\n", escape(a))).collect();
    let variables: String = env
        .iter()
        .map(|(k, v)| format!("    <key>{}</key>\n    <string>{}</string>\n", escape(k), escape(v)))
        .collect();
    let environment = match env.is_empty() {
        true => String::new(),
        false => format!("  <key>EnvironmentVariables</key>\n  <dict>\n{variables}  </dict>\n"),
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <plist version=\"1.0\">\n<dict>\n  <key>Label</key>\n  <string>dev.annal.{NAME}</string>\n\
         \x20 <key>ProgramArguments</key>\n  <array>\n{arguments}  </array>\n{environment}\
         \x20 <key>RunAtLoad</key>\n  <true/>\n  <key>KeepAlive</key>\n  <true/>\n\
         \x20 <key>ProcessType</key>\n  <string>Background</string>\n</dict>\n</plist>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_files_quote_their_arguments() {
        let command = vec!["/opt/an nal/annal".to_owned(), "--path".into(), "a\"b<c 100%$HOME".into()];
        let env = [("CODEX_HOME".to_owned(), "/srv/codex home".to_owned())];
        let unit = systemd(&command, &env);
        assert!(
            unit.contains("ExecStart=\"/opt/an nal/annal\" \"--path\" \"a\\\"b<c 100%%$$HOME\""),
            "{unit}"
        );
        assert!(unit.contains("Environment=\"CODEX_HOME=/srv/codex home\"\n"), "{unit}");
        let plist = launchd(&command, &env);
        assert!(plist.contains("<string>a\"b&lt;c 100%$HOME</string>"), "{plist}");
        assert!(plist.contains("<key>CODEX_HOME</key>\n    <string>/srv/codex home</string>"), "{plist}");
        assert!(plist.contains("<key>KeepAlive</key>"));
    }
}
