//! Whether a raw answer rests on its sources. A small generator answers from what it knows
//! when the notes do not hold the answer ("the default request timeout is 10 seconds"), takes
//! a number from a passage about something else ("Rust 1.41 or higher", another crate's), or
//! restates the question ("walkdir keeps open file descriptors at most"). Its draft is
//! withheld unless a sentence of it adds to the question what the sources it was shown hold:
//! at least half of the words it adds anywhere in them, and every number it adds in a
//! sentence about the question. Looser than verified mode, which wants all of a claim's
//! addition in one sentence about the question: a raw answer may join what two sentences say.

use super::claims::{self, Addition};
use super::relevance::Weighed;
use protocol::api::{DeclineReason, Declined};

/// `None` when `draft` rests on `shown` (the sources the generator was given, as `(title,
/// text)`), else why it is withheld.
pub fn check(draft: &str, question: &Weighed, shown: &[(&str, &str)]) -> Option<Declined> {
    let additions: Vec<Addition> = claims::split(draft)
        .iter()
        .filter(|c| c.is_substantive())
        .map(|c| Addition::of(&c.plain, question.question()))
        .filter(|a| !a.is_empty())
        .collect();
    let declined = |reason, not_in_sources| Some(Declined { reason, draft: draft.to_string(), not_in_sources });
    if additions.is_empty() {
        return declined(DeclineReason::AddsNothing, Vec::new());
    }
    let texts: Vec<String> = shown.iter().map(|(title, text)| format!("{title}\n{text}")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut missing: Vec<String> = Vec::new();
    for a in &additions {
        let absent = a.not_in(&texts);
        let off = a.numbers_off_the_question(question, shown);
        if absent.mostly_held() && off.is_empty() {
            return None;
        }
        for item in off.iter().chain(&absent.numbers).chain(&absent.names).chain(&absent.words) {
            if !missing.contains(item) {
                missing.push(item.clone());
            }
        }
    }
    declined(DeclineReason::NotInSources, missing)
}

/// The reply's answer for a withheld draft.
pub fn decline_text(declined: &Declined) -> String {
    match declined.reason {
        DeclineReason::AddsNothing => {
            "The notes do not say: the sources found speak of the question, but the answer drafted from them only restated it."
                .to_string()
        }
        DeclineReason::NotInSources => format!(
            "The notes do not say: the answer drafted from the sources found gave {}, which none of them holds.",
            declined.not_in_sources.iter().take(6).map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q() -> Weighed {
        super::super::relevance::weighed("What busy timeout does rusqlite set on a new Connection by default?", |w| {
            vec![1.0; w.len()]
        })
    }

    #[test]
    fn an_answer_from_the_sources_stands() {
        let shown = [("rusqlite", "A new Connection has a busy timeout of 5000 ms.")];
        assert_eq!(check("rusqlite sets a busy timeout of 5000 ms [1].", &q(), &shown), None);
        // Half of the added words anywhere in the sources is enough; the title counts.
        assert_eq!(check("A new Connection waits 5000 ms [1].", &q(), &shown), None);
    }

    #[test]
    fn a_number_no_source_holds_withholds_the_draft() {
        let shown = [("rusqlite", "Connections retry while the database is busy.")];
        let d = check("rusqlite sets a busy timeout of one second or 10 s [1].", &q(), &shown).expect("declined");
        assert_eq!(d.reason, DeclineReason::NotInSources);
        assert!(d.not_in_sources.contains(&"10".to_string()), "{d:?}");
        assert!(decline_text(&d).starts_with("The notes do not say"));
    }

    #[test]
    fn a_number_from_a_passage_about_something_else_withholds_the_draft() {
        let shown = [("walkdir", "Minimum supported rustc: 1.34.\n\nThe timeout of the walk is 20 s.")];
        let d = check("rusqlite sets a busy timeout of 20 s [1].", &q(), &shown).expect("declined");
        assert_eq!(d.not_in_sources.first().map(String::as_str), Some("20"), "{d:?}");
    }

    #[test]
    fn a_restated_question_answers_nothing() {
        let shown = [("rusqlite", "A new Connection has a busy timeout of 5000 ms.")];
        let d = check("rusqlite does set a busy timeout on a new Connection by default [1].", &q(), &shown)
            .expect("declined");
        assert_eq!(d.reason, DeclineReason::AddsNothing);
        assert_eq!(check("", &q(), &shown).map(|d| d.reason), Some(DeclineReason::AddsNothing));
    }

    #[test]
    fn a_name_no_source_writes_withholds_the_draft() {
        let shown = [("rusqlite", "Call `busy_timeout` on a Connection to wait while the database is busy.")];
        assert_eq!(check("Call `busy_timeout` on the Connection [1].", &q(), &shown), None);
        let d = check("Call `set_busy_wait` on the Connection [1].", &q(), &shown).expect("declined");
        assert_eq!(d.not_in_sources, ["set_busy_wait"], "{d:?}");
    }

    #[test]
    fn one_grounded_sentence_carries_the_answer() {
        let shown = [("rusqlite", "A new Connection has a busy timeout of 5000 ms.")];
        let draft = "The timeout is 5000 ms [1]. It was chosen by the Pope in 1850.";
        assert_eq!(check(draft, &q(), &shown), None);
    }
}
