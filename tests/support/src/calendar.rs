//! Dates from the system clock for reports (the benchmarks stamp their tables with the day they
//! ran), by the engine's one civil-from-days conversion.

use std::time::{SystemTime, UNIX_EPOCH};

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
pub fn today_utc() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let stamp = annal_engine::rfc3339_from_seconds(i64::try_from(secs).unwrap_or(0)).unwrap_or_default();
    stamp.get(..10).unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn today_is_a_date() {
        let today = today_utc();
        assert!(annal_engine::is_rfc3339(&format!("{today}T00:00:00Z")), "{today}");
    }
}
