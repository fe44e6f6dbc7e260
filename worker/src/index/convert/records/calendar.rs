//! Calendars (`.ics`, RFC 5545, read with the `ical` crate): a document per event (`VEVENT`).
//! Its summary is its title and heading; when (start – end, with the time zone named), where,
//! the organizer, the attendees (by name where the calendar gives one), how it repeats, its
//! status and address are lines; its description is its text; its start is the document's
//! date and its categories its tags. An event's key is its UID (with its recurrence id for a
//! changed occurrence of a repeating event), else its position (`event-00003.ics`).

use super::{key_from_id, unique_keys, FrontMatter, Record, Rendered};
use crate::index::convert::{non_empty_title, ConvertError, Converted};
use ical::parser::ical::component::IcalEvent;
use ical::property::Property;

/// An event's properties, and the text its hash is taken of (each property as a line).
pub(in crate::index::convert) struct Event {
    properties: Vec<Property>,
    raw: String,
}

impl Record for Event {
    fn raw(&self) -> &[u8] {
        self.raw.as_bytes()
    }

    fn convert(&self) -> Result<Converted, ConvertError> {
        render(&self.properties).into_converted()
    }
}

/// The calendar's events (of every `VCALENDAR` in the file), keyed.
pub(in crate::index::convert) fn records(bytes: &[u8]) -> Result<Vec<(String, Event)>, ConvertError> {
    // Unfolded as bytes before decoding: a fold may split a UTF-8 character (RFC 5545 3.1),
    // and the parser's own unfolding trims the space a fold may sit after.
    let unfolded = unfold(bytes);
    let text = crate::index::ingest::decode_text(&unfolded).map_err(|e| ConvertError::Records(e.to_string()))?;
    let mut events: Vec<IcalEvent> = Vec::new();
    for calendar in ical::IcalParser::new(text.as_bytes()) {
        let calendar = calendar.map_err(|e| ConvertError::Records(format!("not a readable calendar: {e}")))?;
        events.extend(calendar.events);
        if events.len() >= super::MAX_RECORDS {
            break;
        }
    }
    let records = events
        .into_iter()
        .take(super::MAX_RECORDS)
        .enumerate()
        .map(|(i, event)| {
            let raw = event.properties.iter().map(property_line).collect::<Vec<_>>().join("\n");
            let uid = value(&event.properties, "UID").map(|uid| match value(&event.properties, "RECURRENCE-ID") {
                Some(rid) => format!("{uid}-{rid}"),
                None => uid,
            });
            let key = uid.and_then(|u| key_from_id(&u, "ics")).unwrap_or_else(|| format!("event-{:05}.ics", i + 1));
            (key, Event { properties: event.properties, raw })
        })
        .collect();
    Ok(unique_keys(records))
}

/// Content lines joined: a line break followed by one space or tab is removed (RFC 5545 3.1).
fn unfold(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let brk = match bytes[i..] {
            [b'\r', b'\n', b' ' | b'\t', ..] => 3,
            [b'\n', b' ' | b'\t', ..] => 2,
            _ => 0,
        };
        if brk > 0 {
            i += brk;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// A property as its line in the file (unfolded).
fn property_line(p: &Property) -> String {
    let mut line = p.name.clone();
    for (name, values) in p.params.iter().flatten() {
        line.push_str(&format!(";{name}={}", values.join(",")));
    }
    line.push(':');
    line.push_str(p.value.as_deref().unwrap_or(""));
    line
}

fn property<'p>(props: &'p [Property], name: &str) -> Option<&'p Property> {
    props.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// A property's value as text (RFC 5545 escapes undone), when it has a non-empty one.
fn value(props: &[Property], name: &str) -> Option<String> {
    property(props, name).and_then(|p| p.value.as_deref()).map(unescape).filter(|v| !v.trim().is_empty())
}

fn param<'p>(p: &'p Property, name: &str) -> Option<&'p str> {
    p.params
        .iter()
        .flatten()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.first())
        .map(String::as_str)
}

/// `\n`, `\,`, `\;` and `\\` as the characters they stand for.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n' | 'N') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// An iCalendar date (`20261204`) or date-time (`20261204T100000`, `…Z`) as ISO 8601
/// (`2026-12-04`, `2026-12-04T10:00:00`, `…Z`); other values as they are.
fn iso(v: &str) -> String {
    let v = v.trim();
    let b = v.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    if b.len() >= 8 && digits(0..8) {
        let date = format!("{}-{}-{}", &v[0..4], &v[4..6], &v[6..8]);
        if b.len() >= 15 && b[8] == b'T' && digits(9..15) {
            let zone = if v.ends_with('Z') { "Z" } else { "" };
            return format!("{date}T{}:{}:{}{zone}", &v[9..11], &v[11..13], &v[13..15]);
        }
        return date;
    }
    v.to_string()
}

/// A time as a person reads it: `2026-12-04 10:00`, with its zone when the calendar names one.
fn readable(p: &Property) -> Option<String> {
    let v = iso(p.value.as_deref()?);
    let mut out = v.replacen('T', " ", 1);
    // A date-time `iso` made (ASCII, `T` at 10): its seconds are dropped.
    if (out.len() == 19 || out.len() == 20) && v.is_ascii() && v.as_bytes().get(10) == Some(&b'T') {
        // Seconds dropped: `2026-12-04 10:00:00Z` → `2026-12-04 10:00 UTC`.
        let utc = out.ends_with('Z');
        out.truncate(16);
        if utc {
            out.push_str(" UTC");
        }
    }
    if let Some(zone) = param(p, "TZID") {
        out.push_str(&format!(" ({zone})"));
    }
    Some(out)
}

/// A calendar user: their common name, else their address without `mailto:`.
fn person(p: &Property) -> Option<String> {
    let address = p.value.as_deref().map(|v| v.trim().trim_start_matches("mailto:").trim_start_matches("MAILTO:"));
    param(p, "CN").map(|n| n.trim_matches('"').to_string()).or(address.map(String::from)).filter(|s| !s.is_empty())
}

fn render(props: &[Property]) -> Rendered {
    let title = value(props, "SUMMARY").and_then(|s| non_empty_title(&s));
    let start = property(props, "DTSTART");
    let mut fields = Vec::new();
    if let Some(begin) = start.and_then(readable) {
        let when = match property(props, "DTEND").or_else(|| property(props, "DUE")).and_then(readable) {
            Some(end) => format!("{begin} – {end}"),
            None => begin,
        };
        fields.push(("When".to_string(), when));
    }
    let lines = [("Where", value(props, "LOCATION")), ("Organizer", property(props, "ORGANIZER").and_then(person))];
    fields.extend(lines.into_iter().filter_map(|(n, v)| Some((n.to_string(), v?))));
    let attendees: Vec<String> =
        props.iter().filter(|p| p.name.eq_ignore_ascii_case("ATTENDEE")).filter_map(person).collect();
    if !attendees.is_empty() {
        fields.push(("Attendees".to_string(), attendees.join(", ")));
    }
    let more = [("Repeats", value(props, "RRULE")), ("Status", value(props, "STATUS")), ("Link", value(props, "URL"))];
    fields.extend(more.into_iter().filter_map(|(n, v)| Some((n.to_string(), v?))));
    let tags = props
        .iter()
        .filter(|p| p.name.eq_ignore_ascii_case("CATEGORIES"))
        .filter_map(|p| p.value.as_deref())
        .flat_map(|v| v.split(',').map(|t| unescape(t).trim().to_string()).collect::<Vec<_>>())
        .filter(|t| !t.is_empty())
        .collect();
    Rendered {
        front: FrontMatter {
            title: title.clone(),
            author: property(props, "ORGANIZER").and_then(person),
            date: start.and_then(|p| p.value.as_deref()).map(iso),
            tags,
        },
        heading: title.unwrap_or_else(|| "(event)".to_string()),
        fields,
        text: value(props, "DESCRIPTION").unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const CAL: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\n\
BEGIN:VEVENT\r\nUID:standup-42@example.com\r\nDTSTAMP:20261201T080000Z\r\n\
DTSTART;TZID=Europe/Berlin:20261204T100000\r\nDTEND;TZID=Europe/Berlin:20261204T101500\r\n\
SUMMARY:Team standup\\, search\r\nLOCATION:Room 4\r\n\
ORGANIZER;CN=Ann Lee:mailto:ann@example.com\r\n\
ATTENDEE;CN=Bob:mailto:bob@example.com\r\nATTENDEE:mailto:carol@example.com\r\n\
RRULE:FREQ=WEEKLY;BYDAY=FR\r\nCATEGORIES:team,search\r\n\
DESCRIPTION:We pick the keyword engine.\\nTantivy wins on \r\n speed.\r\n\
BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\n\
END:VEVENT\r\n\
BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20261224\r\nSUMMARY:Holiday\r\nEND:VEVENT\r\n\
END:VCALENDAR\r\n";

    #[test]
    fn an_event_per_vevent_with_its_when_where_and_who() {
        let parts = super::super::into_parts(records(CAL.as_bytes()).unwrap(), &HashMap::new(), || {
            ConvertError::Records("none".into())
        })
        .unwrap();
        let keys: Vec<&str> = parts.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["standup-42-example.com.ics", "event-00002.ics"]);
        let standup = parts[0].converted.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(standup.title.as_deref(), Some("Team standup, search"));
        let t = &standup.text;
        assert!(t.contains("date: 2026-12-04T10:00:00"), "{t}");
        assert!(t.contains("# Team standup, search\n"), "{t}");
        assert!(t.contains("When: 2026-12-04 10:00 (Europe/Berlin) – 2026-12-04 10:15 (Europe/Berlin)"), "{t}");
        assert!(t.contains("Where: Room 4"), "{t}");
        assert!(t.contains("Organizer: Ann Lee"), "{t}");
        assert!(t.contains("Attendees: Bob, carol@example.com"), "{t}");
        assert!(t.contains("Repeats: FREQ=WEEKLY;BYDAY=FR"), "{t}");
        assert!(t.contains("We pick the keyword engine.\nTantivy wins on speed."), "{t}");
        assert!(t.contains("- search"), "{t}");
        let holiday = parts[1].converted.as_ref().unwrap().as_ref().unwrap();
        assert!(holiday.text.contains("date: 2026-12-24\n"), "{}", holiday.text);
        assert!(holiday.text.contains("When: 2026-12-24"), "{}", holiday.text);
    }

    #[test]
    fn a_fold_inside_a_character_keeps_the_character() {
        let mut cal = b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nSUMMARY:Caf\xc3\r\n \xa9 au lait\r\n".to_vec();
        cal.extend_from_slice("DESCRIPTION:Gr\u{fc}\u{df}e\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n".as_bytes());
        let parts =
            super::super::into_parts(records(&cal).unwrap(), &HashMap::new(), || ConvertError::Records("none".into()))
                .unwrap();
        let c = parts[0].converted.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(c.title.as_deref(), Some("Caf\u{e9} au lait"));
        assert!(c.text.contains("Gr\u{fc}\u{df}e"), "{}", c.text);
    }

    #[test]
    fn not_a_calendar_is_an_error() {
        assert!(records(b"hello\nworld\n").is_err() || records(b"hello\nworld\n").is_ok_and(|r| r.is_empty()));
        assert_eq!(iso("20261204T100000Z"), "2026-12-04T10:00:00Z");
        assert_eq!(iso("garbage"), "garbage");
    }
}
