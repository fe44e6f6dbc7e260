//! Mail → Markdown with `mail-parser`: one message (`.eml`, RFC 5322) or a mailbox (`.mbox`,
//! messages after `From ` lines). A message's text part (else its HTML part as text), its
//! subject as a heading, from, to, cc and date as lines above the text, its attachments listed
//! by name. A single message also gets front matter (title, author, date) so the document's
//! title, author and date are the message's. A mailbox file (`.mbox`) is split by [`parts`]
//! into one document per message, each converted like a single message; any other mail file
//! that holds a mailbox is one document with a section per message, in file order.

use super::records::{into_parts, Part, Record};
use super::{non_empty_title, not_a_heading, ConvertError, Converted};
use mail_parser::mailbox::mbox::MessageIterator;
use mail_parser::{Address, Message, MessageParser, MimeHeaders};
use serde::Serialize;
use std::collections::HashMap;

/// A mailbox's messages past this many are left out (the file is still indexed).
const MAX_MESSAGES: usize = 10_000;

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    if bytes.starts_with(b"From ") {
        mailbox(bytes)
    } else {
        single(bytes)
    }
}

/// The name of the `position`th (1-based) message of a mailbox, as the last segment of its
/// document's path.
fn part_key(position: usize) -> String {
    format!("{position:05}.eml")
}

/// A message of a mailbox, as it sits there.
struct Entry(Vec<u8>);

impl Record for Entry {
    fn raw(&self) -> &[u8] {
        &self.0
    }

    fn convert(&self) -> Result<Converted, ConvertError> {
        single(&self.0)
    }
}

/// A mailbox's messages, in file order, each converted on its own unless `indexed` (source
/// hashes by key) says that key holds those bytes already. An error when the file is not a
/// mailbox or no message in it is readable.
pub fn parts(bytes: &[u8], indexed: &HashMap<String, String>) -> Result<Vec<Part>, ConvertError> {
    if !bytes.starts_with(b"From ") {
        return Err(ConvertError::Mail("a mailbox starts with a 'From ' line".into()));
    }
    let mut entries = Vec::new();
    for (i, entry) in MessageIterator::new(bytes).take(MAX_MESSAGES).enumerate() {
        let entry = entry.map_err(|e| ConvertError::Mail(e.to_string()))?;
        entries.push((part_key(i + 1), Entry(entry.contents().to_vec())));
    }
    into_parts(entries, indexed, || ConvertError::Mail("the mailbox holds no readable message".into()))
}

/// One message: front matter, then the message under its subject.
fn single(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let message = parse(bytes)?;
    let subject = message.subject().and_then(non_empty_title);
    let front = FrontMatter {
        title: subject.clone(),
        author: message.from().and_then(first_address),
        date: message.date().map(|d| d.to_rfc3339()),
    };
    let yaml = serde_norway::to_string(&front).map_err(|e| ConvertError::Mail(e.to_string()))?;
    let mut text = format!("---\n{yaml}---\n\n");
    text.push_str(&render(&message, 1));
    Ok(Converted { title: subject, text })
}

/// A mailbox: a section per message.
fn mailbox(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut text = String::new();
    let mut count = 0usize;
    for entry in MessageIterator::new(bytes).take(MAX_MESSAGES) {
        let entry = entry.map_err(|e| ConvertError::Mail(e.to_string()))?;
        // A message the parser cannot read is skipped, not the mailbox.
        let Some(message) = MessageParser::default().parse(entry.contents()) else { continue };
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&render(&message, 2));
        count += 1;
    }
    if count == 0 {
        return Err(ConvertError::Mail("the mailbox holds no readable message".into()));
    }
    Ok(Converted { title: None, text })
}

fn parse(bytes: &[u8]) -> Result<Message<'_>, ConvertError> {
    let message =
        MessageParser::default().parse(bytes).ok_or_else(|| ConvertError::Mail("no message headers found".into()))?;
    // A file of plain text parses as a message without headers: not mail.
    if message.subject().is_none() && message.from().is_none() && message.date().is_none() {
        return Err(ConvertError::Mail("no Subject, From or Date header".into()));
    }
    Ok(message)
}

#[derive(Serialize)]
struct FrontMatter {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    author: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    date: Option<String>,
}

/// `Name <address>`, or whichever of the two there is, of an address list's first entry.
fn first_address(list: &Address<'_>) -> Option<String> {
    list.first().and_then(|a| person(a.name(), a.address()))
}

fn person(name: Option<&str>, address: Option<&str>) -> Option<String> {
    match (name.map(str::trim).filter(|n| !n.is_empty()), address.map(str::trim).filter(|a| !a.is_empty())) {
        (Some(n), Some(a)) => Some(format!("{n} <{a}>")),
        (Some(n), None) => Some(n.to_string()),
        (None, Some(a)) => Some(a.to_string()),
        (None, None) => None,
    }
}

fn all_addresses(list: Option<&Address<'_>>) -> Option<String> {
    let people: Vec<String> = list?.iter().filter_map(|a| person(a.name(), a.address())).collect();
    (!people.is_empty()).then(|| people.join(", "))
}

/// A message as Markdown: its subject as a heading of `level`, its headers as lines, its
/// text, its attachments' names.
fn render(message: &Message<'_>, level: usize) -> String {
    let subject = message.subject().map(crate::index::ingest::collapse_whitespace);
    let mut out =
        format!("{} {}\n\n", "#".repeat(level), subject.filter(|s| !s.is_empty()).as_deref().unwrap_or("(no subject)"));
    let headers = [
        ("From", all_addresses(message.from())),
        ("To", all_addresses(message.to())),
        ("Cc", all_addresses(message.cc())),
        ("Date", message.date().map(|d| d.to_rfc3339())),
    ];
    for (name, value) in headers {
        if let Some(v) = value {
            out.push_str(&format!("{name}: {v}  \n"));
        }
    }
    let attachments: Vec<&str> = message.attachments().filter_map(|a| a.attachment_name()).collect();
    if !attachments.is_empty() {
        out.push_str(&format!("Attachments: {}  \n", attachments.join(", ")));
    }
    let body = message.body_text(0).unwrap_or_default();
    let body = body.trim();
    if !body.is_empty() {
        out.push('\n');
        for line in body.lines() {
            out.push_str(&not_a_heading(line.trim_end()));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = "From: Ann Example <ann@example.org>\r\nTo: bob@example.org, Cy <cy@example.org>\r\nSubject: Pangolin survey: results\r\nDate: Tue, 3 Mar 2026 09:15:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nWe counted 41 pangolins.\r\n# not a heading\r\n--b1\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"counts.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0=\r\n--b1--\r\n";

    #[test]
    fn one_message_with_front_matter_headers_text_and_attachments() {
        let c = convert(ONE.as_bytes()).expect("converts");
        assert_eq!(c.title.as_deref(), Some("Pangolin survey: results"));
        assert_eq!(
            c.text,
            "---\ntitle: 'Pangolin survey: results'\nauthor: Ann Example <ann@example.org>\ndate: 2026-03-03T09:15:00Z\n---\n\n# Pangolin survey: results\n\nFrom: Ann Example <ann@example.org>  \nTo: bob@example.org, Cy <cy@example.org>  \nDate: 2026-03-03T09:15:00Z  \nAttachments: counts.pdf  \n\nWe counted 41 pangolins.\n\\# not a heading\n"
        );
    }

    #[test]
    fn a_mailbox_is_a_section_per_message() {
        let second = "From: Bob <bob@example.org>\nSubject: Re: survey\nDate: Wed, 4 Mar 2026 10:00:00 +0000\n\nGreat news.\n>From the field: more soon.\n";
        let mbox = format!("From ann@example.org Tue Mar  3 09:15:00 2026\n{}\nFrom bob@example.org Wed Mar  4 10:00:00 2026\n{second}", ONE.replace("\r\n", "\n"));
        let c = convert(mbox.as_bytes()).expect("converts");
        assert_eq!(c.title, None);
        assert!(c.text.starts_with("## Pangolin survey: results\n\nFrom: Ann Example"), "{}", c.text);
        assert!(c.text.contains("\n## Re: survey\n\nFrom: Bob <bob@example.org>  \nDate: 2026-03-04T10:00:00Z  \n\nGreat news.\nFrom the field: more soon.\n"), "{}", c.text);
    }

    #[test]
    fn a_mailbox_splits_into_a_message_per_part_each_converted_alone() {
        let unreadable = "X-Nothing: here\n\njust words\n";
        let second =
            "From: Bob <bob@example.org>\nSubject: Re: survey\nDate: Wed, 4 Mar 2026 10:00:00 +0000\n\nGreat news.\n";
        let mbox = format!(
            "From ann@example.org Tue Mar  3 09:15:00 2026\n{}\nFrom x Wed Mar  4 09:00:00 2026\n{unreadable}\nFrom bob@example.org Wed Mar  4 10:00:00 2026\n{second}",
            ONE.replace("\r\n", "\n")
        );
        let none = HashMap::new();
        let parts = parts(mbox.as_bytes(), &none).expect("splits");
        let keys: Vec<&str> = parts.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["00001.eml", "00002.eml", "00003.eml"]);
        let first = parts[0].converted.as_ref().and_then(|c| c.as_ref().ok()).expect("converts");
        assert_eq!(first.title.as_deref(), Some("Pangolin survey: results"));
        assert!(
            first.text.starts_with("---\ntitle: 'Pangolin survey: results'\nauthor: Ann Example"),
            "{}",
            first.text
        );
        assert!(matches!(parts[1].converted, Some(Err(_))), "a message without headers is that part's error");
        let third = parts[2].converted.as_ref().and_then(|c| c.as_ref().ok()).expect("converts");
        assert!(third.text.contains("# Re: survey\n\nFrom: Bob <bob@example.org>  \n"), "{}", third.text);
        assert_eq!(parts[2].size, second.len() as u64);
        assert_eq!(parts[2].source_hash, crate::digest::sha256_hex(second.as_bytes()));
        assert_ne!(parts[0].source_hash, parts[2].source_hash);
        // Bytes already indexed at their key are not converted again; at another key they are.
        let indexed = HashMap::from([
            ("00001.eml".to_string(), parts[0].source_hash.clone()),
            ("00002.eml".to_string(), parts[2].source_hash.clone()),
        ]);
        let again = super::parts(mbox.as_bytes(), &indexed).expect("splits");
        assert!(again[0].converted.is_none() && again[2].converted.is_some());
        assert!(matches!(super::parts(b"Subject: hi\n\nno mailbox", &none), Err(ConvertError::Mail(_))));
        let junk = format!("From x\n{unreadable}");
        assert!(matches!(super::parts(junk.as_bytes(), &none), Err(ConvertError::Mail(_))));
    }

    #[test]
    fn text_that_is_not_mail_is_an_error() {
        assert!(matches!(convert(b"just some words\nand more"), Err(ConvertError::Mail(_))));
        assert!(matches!(convert(b"From nobody\n"), Err(ConvertError::Mail(_))));
        assert!(matches!(convert(b""), Err(ConvertError::Mail(_))));
    }
}
