//! Where a machine's agents keep their files: the home, configuration and data folders, and the
//! agents' own environment overrides, read once so that discovery is a pure function of them
//! (and tests give a made-up home).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

/// The variables every agent's locations may read besides its own overrides (the registry
/// names those): the XDG folders.
const SHARED_VARS: [&str; 2] = ["XDG_DATA_HOME", "XDG_STATE_HOME"];

/// The folders discovery starts from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Environment {
    /// The user's home folder.
    pub home: Option<PathBuf>,
    /// The platform's configuration folder (`~/.config`, `~/Library/Application Support`).
    pub config_dir: Option<PathBuf>,
    /// The platform's data folder (`~/.local/share`, `~/Library/Application Support`).
    pub data_dir: Option<PathBuf>,
    /// The agents' overrides that are set (the registry names each agent's).
    pub vars: BTreeMap<String, OsString>,
}

impl Environment {
    /// This process's environment.
    pub fn from_process() -> Environment {
        let vars = SHARED_VARS
            .into_iter()
            .chain(super::table::overrides())
            .filter_map(|name| std::env::var_os(name).filter(|v| !v.is_empty()).map(|v| (name.to_owned(), v)))
            .collect();
        Environment {
            home: dirs::home_dir(),
            config_dir: dirs::config_dir(),
            data_dir: dirs::data_dir(),
            vars,
        }
    }

    /// An environment rooted at `home`, laid out as on Linux, with no overrides.
    pub fn with_home(home: impl Into<PathBuf>) -> Environment {
        let home = home.into();
        Environment {
            config_dir: Some(home.join(".config")),
            data_dir: Some(home.join(".local/share")),
            home: Some(home),
            vars: BTreeMap::new(),
        }
    }

    /// Sets an override, as if the variable were set.
    #[must_use]
    pub fn var(mut self, name: &str, value: impl Into<OsString>) -> Environment {
        self.vars.insert(name.to_owned(), value.into());
        self
    }

    /// An override's value as a folder.
    pub(crate) fn dir_var(&self, name: &str) -> Option<PathBuf> {
        self.vars.get(name).map(PathBuf::from)
    }

    /// `home/rest`, if there is a home.
    pub(crate) fn in_home(&self, rest: &str) -> Option<PathBuf> {
        self.home.as_ref().map(|home| home.join(rest))
    }

    /// The XDG data folder: `$XDG_DATA_HOME`, else `~/.local/share` (the layout several
    /// agents use on every platform), plus the platform's own data folder when it differs.
    pub(crate) fn data_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        let xdg = self.dir_var("XDG_DATA_HOME").or_else(|| self.in_home(".local/share"));
        dirs.extend(xdg);
        if let Some(platform) = &self.data_dir {
            if !dirs.contains(platform) {
                dirs.push(platform.clone());
            }
        }
        dirs
    }
}
