//! Headless Chromium under chromedriver, one per test, each with an empty profile of its own;
//! stopped when the test is done.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use serde_json::json;

/// A browser session and the chromedriver that serves it.
pub(crate) struct Browser {
    pub(crate) client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

fn binary(variable: &str, default: &str) -> String {
    std::env::var(variable).unwrap_or_else(|_| default.to_owned())
}

impl Browser {
    /// Starts chromedriver and a 1280×800 headless Chromium; `javascript` false turns scripts off.
    pub(crate) async fn start(javascript: bool) -> Result<Browser, Box<dyn std::error::Error>> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let chromedriver = binary("ANNAL_CHROMEDRIVER", "chromedriver");
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| {
                format!("cannot start {chromedriver} (install Debian's chromium-driver): {err}")
            })?;
        let profile = tempfile::tempdir()?;
        let mut options = json!({
            "binary": binary("ANNAL_CHROMIUM", "/usr/bin/chromium"),
            // The flags a machine without network needs: no background connections, no sandbox
            // as root, no GPU.
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-quic", "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--window-size=1280,800",
                     format!("--user-data-dir={}", profile.path().display())],
        });
        if !javascript {
            options["prefs"] = json!({"profile.managed_default_content_settings.javascript": 2});
        }
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("browserName".into(), json!("chrome"));
        capabilities.insert("goog:chromeOptions".into(), options);
        let url = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector).capabilities(capabilities.clone()).connect(&url).await {
                Ok(client) => break client,
                Err(err) if started.elapsed() < Duration::from_secs(30) => {
                    let _ = err;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(err) => {
                    return Err(format!("chromedriver on {url} did not start a browser: {err}").into())
                }
            }
        };
        client.set_window_size(1280, 800).await?;
        Ok(Browser { client, driver, _profile: profile })
    }

    /// Saves the page as `target/ui-screenshots/NAME.png`.
    pub(crate) async fn screenshot(&self, name: &str) -> Result<(), Box<dyn std::error::Error>> {
        let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/ui-screenshots");
        std::fs::create_dir_all(&folder)?;
        std::fs::write(folder.join(format!("{name}.png")), self.client.screenshot().await?)?;
        Ok(())
    }

    /// Ends the browser session and chromedriver.
    pub(crate) async fn close(mut self) -> Result<(), Box<dyn std::error::Error>> {
        let closed = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        closed?;
        Ok(())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
