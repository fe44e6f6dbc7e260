//! `since` / `until`: ISO dates and times, or relative tokens, into epoch milliseconds.

use protocol::ApiError;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime, PrimitiveDateTime, Time};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    Since,
    Until,
}

fn ms(t: OffsetDateTime) -> i64 {
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

fn day_start(d: Date) -> OffsetDateTime {
    d.with_time(Time::MIDNIGHT).assume_utc()
}

/// `[start, end)` of a relative token, in UTC; weeks start on Monday.
fn relative(token: &str, now: OffsetDateTime) -> Option<(OffsetDateTime, OffsetDateTime)> {
    let today = now.date();
    let week_start = today - Duration::days(today.weekday().number_days_from_monday() as i64);
    let month_start = today.replace_day(1).ok()?;
    let prev_month_start = (month_start - Duration::days(1)).replace_day(1).ok()?;
    Some(match token {
        "today" => (day_start(today), day_start(today) + Duration::days(1)),
        "yesterday" => (day_start(today) - Duration::days(1), day_start(today)),
        "this week" => (day_start(week_start), day_start(week_start) + Duration::days(7)),
        "last week" => (day_start(week_start) - Duration::days(7), day_start(week_start)),
        "this month" => (day_start(month_start), now + Duration::days(1)),
        "last month" => (day_start(prev_month_start), day_start(month_start)),
        "recent" => (now - Duration::days(30), now),
        _ => return None,
    })
}

/// Parses one bound. A bare date means the start of that day for `since` and its end for
/// `until`; a relative token means the start or end of its period.
pub fn parse_bound(raw: &str, bound: Bound, now: OffsetDateTime) -> Result<i64, ApiError> {
    let s = raw.trim();
    let lower = s.to_lowercase();
    let pick = |(start, end): (OffsetDateTime, OffsetDateTime)| match bound {
        Bound::Since => ms(start),
        Bound::Until => ms(end) - 1,
    };
    if let Some(r) = relative(&lower, now) {
        return Ok(pick(r));
    }
    if let Ok(t) = OffsetDateTime::parse(s, &Rfc3339) {
        return Ok(ms(t));
    }
    for f in [
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second]"),
        format_description!("[year]-[month]-[day]T[hour]:[minute]"),
        format_description!("[year]-[month]-[day] [hour]:[minute]"),
    ] {
        if let Ok(t) = PrimitiveDateTime::parse(s, f) {
            return Ok(ms(t.assume_utc()));
        }
    }
    if let Ok(d) = Date::parse(s, format_description!("[year]-[month]-[day]")) {
        return Ok(pick((day_start(d), day_start(d) + Duration::days(1))));
    }
    Err(ApiError::validation(format!(
        "Invalid {} value {raw:?}: use an ISO 8601 date or time, or today, yesterday, this week, last week, this month, last month, recent",
        if bound == Bound::Since { "since" } else { "until" }
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn parses_dates_times_and_tokens() {
        let now = datetime!(2026-11-18 12:00 UTC); // a Wednesday
        assert_eq!(parse_bound("2024-03-01", Bound::Since, now).unwrap(), 1_709_251_200_000);
        assert_eq!(parse_bound("2024-03-01", Bound::Until, now).unwrap(), 1_709_337_599_999);
        assert_eq!(parse_bound("2024-03-01T10:00:00Z", Bound::Since, now).unwrap(), 1_709_287_200_000);
        assert_eq!(parse_bound("2024-03-01 10:00", Bound::Since, now).unwrap(), 1_709_287_200_000);
        let week = parse_bound("this week", Bound::Since, now).unwrap();
        assert_eq!(week, ms(datetime!(2026-11-16 0:00 UTC)));
        assert_eq!(parse_bound("Last Month", Bound::Since, now).unwrap(), ms(datetime!(2026-10-01 0:00 UTC)));
        assert!(parse_bound("not a date", Bound::Since, now).is_err());
        assert!(parse_bound("2024-13-01", Bound::Since, now).is_err());
    }
}
