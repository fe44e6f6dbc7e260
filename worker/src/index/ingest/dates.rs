//! Date parsing for front matter values and date-like key detection.

use std::sync::OnceLock;

use regex::Regex;
use time::macros::format_description;
use time::{Date, Month, PrimitiveDateTime, Time, UtcOffset};

fn date_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:(?:[Tt]|\s+)(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(?:([Zz])|([+-])(\d{1,2})(?::?(\d{2}))?)?$",
        )
        .expect("constant regex is valid")
    })
}

fn date_key_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(^|_)(date|time|created|updated|published|modified|deadline|expires|expiry|start|end)(_|$)")
            .expect("constant regex is valid")
    })
}

/// Parses "2024-03-01", "2024-03-01 10:00", "2024-03-01T10:00:00+02:00",
/// "2024-03-01T10:00:00Z" (also "/" date separators, fractional seconds,
/// "+0200" offsets) into RFC 3339 UTC ("2024-03-01T08:00:00Z").
/// Date-only means midnight UTC; no offset means UTC.
pub(super) fn parse_date(s: &str) -> Option<String> {
    let s = s.trim();
    if s.len() > 64 {
        return None;
    }
    let caps = date_re().captures(s)?;
    let num = |i: usize| -> Option<u32> { caps.get(i).and_then(|m| m.as_str().parse().ok()) };
    let year = i32::try_from(num(1)?).ok()?;
    let month = Month::try_from(u8::try_from(num(2)?).ok()?).ok()?;
    let day = u8::try_from(num(3)?).ok()?;
    let date = Date::from_calendar_date(year, month, day).ok()?;
    let (h, m, sec) = match num(4) {
        Some(h) => (h, num(5)?, num(6).unwrap_or(0)),
        None => (0, 0, 0),
    };
    let time = Time::from_hms(u8::try_from(h).ok()?, u8::try_from(m).ok()?, u8::try_from(sec).ok()?).ok()?;
    let offset = if caps.get(8).is_some() {
        UtcOffset::UTC
    } else if let Some(sign) = caps.get(9) {
        let oh = i8::try_from(num(10)?).ok().filter(|h| *h <= 18)?;
        let om = i8::try_from(num(11).unwrap_or(0)).ok()?;
        let (oh, om) = if sign.as_str() == "-" { (-oh, -om) } else { (oh, om) };
        UtcOffset::from_hms(oh, om, 0).ok()?
    } else {
        UtcOffset::UTC
    };
    let utc = PrimitiveDateTime::new(date, time).assume_offset(offset).checked_to_offset(UtcOffset::UTC)?;
    if !(0..=9999).contains(&utc.year()) {
        return None;
    }
    utc.format(format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z")).ok()
}

/// camelCase -> snake_case, lowercased; '-' and spaces become '_'.
pub(super) fn snake_key(key: &str) -> String {
    let chars: Vec<char> = key.trim().chars().collect();
    let mut out = String::with_capacity(key.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = if i > 0 { chars.get(i - 1).copied() } else { None };
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_uppercase() => next.is_some_and(|n| n.is_lowercase()),
                _ => false,
            };
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if c == '-' || c.is_whitespace() {
            out.push('_');
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Whether a (snake_case) key names a date-like field.
pub(super) fn is_date_key(snake: &str) -> bool {
    date_key_re().is_match(snake)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Option<String> {
        parse_date(s)
    }

    #[test]
    fn formats() {
        assert_eq!(p("2024-03-01").as_deref(), Some("2024-03-01T00:00:00Z"));
        assert_eq!(p("2024-03-01 10:00").as_deref(), Some("2024-03-01T10:00:00Z"));
        assert_eq!(p("2024-03-01T10:00:00+02:00").as_deref(), Some("2024-03-01T08:00:00Z"));
        assert_eq!(p("2024-03-01T10:00:00Z").as_deref(), Some("2024-03-01T10:00:00Z"));
        assert_eq!(p("2024-03-01t10:00:00.123z").as_deref(), Some("2024-03-01T10:00:00Z"));
        assert_eq!(p("2024-03-01 01:30:00 -05:00").as_deref(), Some("2024-03-01T06:30:00Z"));
        assert_eq!(p("2024-03-01T00:30:00+0100").as_deref(), Some("2024-02-29T23:30:00Z"));
        assert_eq!(p("2001-12-14 21:59:43.10 -5").as_deref(), Some("2001-12-15T02:59:43Z"));
        assert_eq!(p("2024/3/1").as_deref(), Some("2024-03-01T00:00:00Z"));
        assert_eq!(p(" 2024-03-01 ").as_deref(), Some("2024-03-01T00:00:00Z"));
    }

    #[test]
    fn invalid() {
        for s in [
            "",
            "yesterday",
            "2024-13-01",
            "2024-02-30",
            "2024-03-01 25:00",
            "2024-03-01T10:00+25:00",
            "10:00",
            "2024",
            "2024-03-01x",
            "99999-01-01",
        ] {
            assert_eq!(p(s), None, "{s}");
        }
    }

    #[test]
    fn out_of_range_offset_does_not_panic() {
        assert_eq!(p("9999-12-31T23:00:00-05:00"), None);
        assert_eq!(p("0000-01-01T00:00:00+05:00"), None);
        assert_eq!(p("0000-01-01").as_deref(), Some("0000-01-01T00:00:00Z"));
    }

    #[test]
    fn snake() {
        assert_eq!(snake_key("dueDate"), "due_date");
        assert_eq!(snake_key("createdAt"), "created_at");
        assert_eq!(snake_key("published_at"), "published_at");
        assert_eq!(snake_key("HTMLDate"), "html_date");
        assert_eq!(snake_key("Date"), "date");
        assert_eq!(snake_key("start-date"), "start_date");
        assert_eq!(snake_key("updated2Time"), "updated2_time");
    }

    #[test]
    fn date_keys() {
        for k in ["date", "due_date", "created_at", "end", "start_time", "expiry", "last_modified"] {
            assert!(is_date_key(k), "{k}");
        }
        for k in ["title", "dated", "timeline", "endpoint", "backend", "update"] {
            assert!(!is_date_key(k), "{k}");
        }
    }
}
