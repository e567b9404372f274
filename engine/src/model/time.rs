//! Time as records carry it: RFC 3339 text in UTC, checked, and written from a Unix time by
//! the one civil-from-days conversion of the workspace (after Howard Hinnant's public-domain
//! algorithm, proleptic Gregorian), so no date-time dependency is needed.

/// Whether `text` is an RFC 3339 date-time (`2026-01-02T03:04:05Z`, fractions and offsets allowed).
pub fn is_rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    let digits =
        |range: std::ops::Range<usize>| b.get(range).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() < 20 || !digits(0..4) || b[4] != b'-' || !digits(5..7) || b[7] != b'-' || !digits(8..10) {
        return false;
    }
    if !matches!(b[10], b'T' | b't' | b' ')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let mut at = 19;
    if b[at] == b'.' {
        at += 1;
        let start = at;
        while at < b.len() && b[at].is_ascii_digit() {
            at += 1;
        }
        if at == start {
            return false;
        }
    }
    match &b[at..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()),
        _ => false,
    }
}

/// RFC 3339 text of a Unix time in milliseconds (`1970-01-01T00:00:00.000Z`); `None` outside
/// years 0 to 9999, which RFC 3339's four-digit years cannot write.
pub fn rfc3339_from_millis(millis: i64) -> Option<String> {
    if !(-62_167_219_200_000..=253_402_300_799_999).contains(&millis) {
        return None;
    }
    let (date, in_day) = date_and_seconds(millis.div_euclid(1000));
    let ms = millis.rem_euclid(1000);
    Some(format!("{date}T{:02}:{:02}:{:02}.{ms:03}Z", in_day / 3600, in_day % 3600 / 60, in_day % 60))
}

/// RFC 3339 text of a Unix time in whole seconds (`1970-01-01T00:00:00Z`); `None` outside years
/// 0 to 9999.
pub fn rfc3339_from_seconds(seconds: i64) -> Option<String> {
    if !(-62_167_219_200..=253_402_300_799).contains(&seconds) {
        return None;
    }
    let (date, in_day) = date_and_seconds(seconds);
    Some(format!("{date}T{:02}:{:02}:{:02}Z", in_day / 3600, in_day % 3600 / 60, in_day % 60))
}

/// `YYYY-MM-DD` of a Unix time, and the seconds into that day.
fn date_and_seconds(seconds: i64) -> (String, i64) {
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    (format!("{year:04}-{month:02}-{day:02}"), seconds.rem_euclid(86_400))
}

/// Days since 1970-01-01 to (year, month, day).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_to_rfc3339() {
        assert_eq!(rfc3339_from_millis(0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(rfc3339_from_millis(1_771_210_919_109).as_deref(), Some("2026-02-16T03:01:59.109Z"));
        assert_eq!(rfc3339_from_millis(951_782_400_000).as_deref(), Some("2000-02-29T00:00:00.000Z"));
        assert_eq!(rfc3339_from_millis(-1).as_deref(), Some("1969-12-31T23:59:59.999Z"));
        assert_eq!(rfc3339_from_millis(i64::MAX), None);
        assert_eq!(rfc3339_from_seconds(0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(rfc3339_from_seconds(1_772_442_720).as_deref(), Some("2026-03-02T09:12:00Z"));
        assert_eq!(rfc3339_from_seconds(951_782_400).as_deref(), Some("2000-02-29T00:00:00Z"));
        assert_eq!(rfc3339_from_seconds(i64::MIN), None);
        for millis in [-62_167_219_200_000, 0, 1_771_210_919_109, 253_402_300_799_999] {
            assert!(rfc3339_from_millis(millis).is_some_and(|t| is_rfc3339(&t)), "{millis}");
        }
    }
}
