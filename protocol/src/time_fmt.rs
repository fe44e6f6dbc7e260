//! Timestamps: ISO 8601 for documents, epoch milliseconds for jobs.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub fn now_ms() -> i64 {
    (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

pub fn now_iso() -> String {
    ms_to_iso(now_ms())
}

/// RFC 3339 in UTC with millisecond precision, e.g. `2024-03-01T10:00:00.000Z`.
pub fn ms_to_iso(ms: i64) -> String {
    let t = OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let t = t.replace_nanosecond((ms.rem_euclid(1000) as u32) * 1_000_000).unwrap_or(t);
    t.format(&Rfc3339).unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

/// Epoch milliseconds of an RFC 3339 string.
pub fn iso_to_ms(s: &str) -> Option<i64> {
    OffsetDateTime::parse(s, &Rfc3339).ok().map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let ms = 1_709_287_200_123;
        let iso = ms_to_iso(ms);
        assert_eq!(iso, "2024-03-01T10:00:00.123Z");
        assert_eq!(iso_to_ms(&iso), Some(ms));
        assert_eq!(iso_to_ms("2024-03-01T00:00:00Z"), Some(1_709_251_200_000));
    }
}
