//! Whether a raw answer rests on its sources. A small generator answers from what it knows
//! when the notes do not hold the answer ("the default request timeout is 10 seconds"), takes
//! a number from a passage about something else ("Rust 1.41 or higher", another crate's), or
//! restates the question ("walkdir keeps open file descriptors at most"). Its draft is
//! withheld unless a sentence of it adds to the question what the sources it was shown hold:
//! at least half of the words it adds anywhere in them, and every number it adds in a
//! sentence about the question; or a name it writes as code that stands in a sentence about
//! the question (the words around a name, as around a number, are the generator's own).
//! Looser than verified mode, which wants all of a claim's addition in one sentence about the
//! question: a raw answer may join what two sentences say.
//! As in verified mode, only sources about what the question names ([`Subject`]) count: a
//! draft held by another tool's page answers about that tool.

use super::claims::{self, Addition, SentencesAbout};
use super::relevance::Weighed;
use super::subject::Subject;
use protocol::api::{DeclineReason, Declined};
use std::cell::OnceCell;

/// `None` when `draft` rests on `shown` (the sources the generator was given, as `(title,
/// text)`: the title with the source's address), else why it is withheld. `subject` is what
/// the question names, read from the same sources.
pub fn check(draft: &str, question: &Weighed, shown: &[(&str, &str)], subject: &Subject) -> Option<Declined> {
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
    let about: Vec<usize> = (0..shown.len()).filter(|&i| subject.held_by(&texts[i])).collect();
    tracing::debug!(names = ?subject.names(), ?about, "the sources about what the question names");
    let on_subject: Vec<(&str, &str)> = about.iter().map(|&i| shown[i]).collect();
    let about_texts: Vec<&str> = about.iter().map(|&i| texts[i].as_str()).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    // The sentences about the question, read once for all the additions.
    let said_on_subject = SentencesAbout::of(question, &on_subject);
    let said_in_shown = OnceCell::new();
    let mut missing: Vec<String> = Vec::new();
    let mut held_elsewhere = false;
    for a in &additions {
        let absent = a.not_in(&about_texts);
        let off = a.numbers_off_the_question(&said_on_subject);
        let name_answers = absent.numbers.is_empty() && a.names_stand_in(&said_on_subject);
        if (absent.mostly_held() || name_answers) && off.is_empty() {
            return None;
        }
        held_elsewhere |= about.len() < shown.len()
            && a.not_in(&texts).mostly_held()
            && a.numbers_off_the_question(said_in_shown.get_or_init(|| SentencesAbout::of(question, shown))).is_empty();
        for item in off.iter().chain(&absent.numbers).chain(&absent.names).chain(&absent.words) {
            if !missing.contains(item) {
                missing.push(item.clone());
            }
        }
    }
    if held_elsewhere {
        return declined(DeclineReason::OtherSubject, subject.names());
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
        DeclineReason::OtherSubject => format!(
            "The notes do not say: the sources that hold the answer drafted speak of something else than {}.",
            declined.not_in_sources.iter().take(3).map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" and ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `check` with the subject read from `shown` as the raw answer reads it.
    fn checked(draft: &str, question: &Weighed, shown: &[(&str, &str)]) -> Option<Declined> {
        check(draft, question, shown, &Subject::of(question.question(), shown.iter().copied()))
    }

    fn q() -> Weighed {
        super::super::relevance::weighed("What busy timeout does rusqlite set on a new Connection by default?", |w| {
            vec![1.0; w.len()]
        })
    }

    #[test]
    fn an_answer_from_the_sources_stands() {
        let shown = [("rusqlite", "A new Connection has a busy timeout of 5000 ms.")];
        assert_eq!(checked("rusqlite sets a busy timeout of 5000 ms [1].", &q(), &shown), None);
        // Half of the added words anywhere in the sources is enough; the title counts.
        assert_eq!(checked("A new Connection waits 5000 ms [1].", &q(), &shown), None);
    }

    #[test]
    fn a_number_no_source_holds_withholds_the_draft() {
        let shown = [("rusqlite", "Connections retry while the database is busy.")];
        let d = checked("rusqlite sets a busy timeout of one second or 10 s [1].", &q(), &shown).expect("declined");
        assert_eq!(d.reason, DeclineReason::NotInSources);
        assert!(d.not_in_sources.contains(&"10".to_string()), "{d:?}");
        assert!(decline_text(&d).starts_with("The notes do not say"));
    }

    #[test]
    fn a_number_from_a_passage_about_something_else_withholds_the_draft() {
        let shown = [("walkdir", "Minimum supported rustc: 1.34.\n\nThe timeout of the walk is 20 s.")];
        let d = checked("rusqlite sets a busy timeout of 20 s [1].", &q(), &shown).expect("declined");
        assert_eq!(d.not_in_sources.first().map(String::as_str), Some("20"), "{d:?}");
    }

    #[test]
    fn a_restated_question_answers_nothing() {
        let shown = [("rusqlite", "A new Connection has a busy timeout of 5000 ms.")];
        let d = checked("rusqlite does set a busy timeout on a new Connection by default [1].", &q(), &shown)
            .expect("declined");
        assert_eq!(d.reason, DeclineReason::AddsNothing);
        assert_eq!(checked("", &q(), &shown).map(|d| d.reason), Some(DeclineReason::AddsNothing));
    }

    #[test]
    fn a_name_no_source_writes_withholds_the_draft() {
        let shown = [("rusqlite", "Call `busy_timeout` on a Connection to wait while the database is busy.")];
        assert_eq!(checked("Call `busy_timeout` on the Connection [1].", &q(), &shown), None);
        let d = checked("Call `set_busy_wait` on the Connection [1].", &q(), &shown).expect("declined");
        assert_eq!(d.not_in_sources, ["set_busy_wait"], "{d:?}");
    }

    #[test]
    fn a_command_line_stands_where_the_page_writes_its_parts_apart() {
        let q = super::super::relevance::weighed(
            "How do I load the settings of /etc/sysctl.conf with sysctl again?",
            |w| vec![1.0; w.len()],
        );
        let shown = [(
            "svc://man/man8/sysctl.8.txt sysctl.8",
            "-p[FILE], --load[=FILE]\n    Load in sysctl settings from the file specified or /etc/sysctl.conf if none given.",
        )];
        // The page writes `-p` in its list of options and the command in its title.
        assert_eq!(checked("Run the command `sysctl -p` [1].", &q, &shown), None);
        let d = checked("Run the command `sysctl -q` [1].", &q, &shown).expect("declined");
        assert_eq!(d.not_in_sources, ["sysctl -q", "run", "command"], "{d:?}");
        // An option is a word of its own: `--load` does not write `-l`.
        assert!(checked("Run the command `sysctl -l` [1].", &q, &shown).is_some());
    }

    #[test]
    fn a_name_about_the_question_answers_whatever_words_frame_it() {
        let q = super::super::relevance::weighed(
            "Comment faire passer en arrière-plan un programme qui ne se détache pas tout seul ?",
            |w| vec![1.0; w.len()],
        );
        let shown = [(
            "svc://man/man8/start-stop-daemon.8.txt start-stop-daemon.8",
            "-b, --background\n    Utilisé pour les programmes qui ne se détachent pas d'eux-mêmes : il passe en arrière-plan.\n\n-o, --oknodo\n    Retourne 0.\n\n-q, --quiet\n    N'affiche rien.\n\n-d, --chdir chemin\n    Change de répertoire.",
        )];
        assert_eq!(checked("Lancez la commande `--background` [1].", &q, &shown), None);
        // A name the page writes in a sentence about something else does not answer.
        let d = checked("Lancez la commande `--chdir` [1].", &q, &shown).expect("declined");
        assert_eq!(d.reason, DeclineReason::NotInSources);
    }

    #[test]
    fn one_grounded_sentence_carries_the_answer() {
        let shown = [("rusqlite", "A new Connection has a busy timeout of 5000 ms.")];
        let draft = "The timeout is 5000 ms [1]. It was chosen by the Pope in 1850.";
        assert_eq!(checked(draft, &q(), &shown), None);
    }

    #[test]
    fn an_answer_held_only_by_a_source_about_something_else_is_withheld() {
        let q = super::super::relevance::weighed("Which timeout does `ureq` set by default?", |w| vec![1.0; w.len()]);
        let shown = [
            ("ureq", "Requests made with ureq wait for the server without end."),
            ("reqwest", "By default, the timeout reqwest sets is 30 seconds."),
        ];
        let d = checked("ureq sets a timeout of 30 seconds [2].", &q, &shown).expect("declined");
        assert_eq!(d.reason, DeclineReason::OtherSubject);
        assert_eq!(d.not_in_sources, ["ureq"]);
        assert!(decline_text(&d).contains("something else than \"ureq\""), "{}", decline_text(&d));
        // Held by the source about it: it stands.
        let shown = [
            ("ureq", "The timeout of ureq is 30 seconds."),
            ("reqwest", "By default, the timeout reqwest sets is 30 seconds."),
        ];
        assert_eq!(checked("ureq sets a timeout of 30 seconds [1].", &q, &shown), None);
        // Held by none: not in the sources, as before.
        let d = checked("ureq sets a timeout of 45 seconds [1].", &q, &shown).expect("declined");
        assert_eq!(d.reason, DeclineReason::NotInSources);
    }
}
