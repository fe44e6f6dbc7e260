//! The generator as a judge: does this passage state what these claims say, about what the
//! question asks? The embedding layer of a verified answer finds a sentence close in meaning
//! to a claim; it cannot tell "the default profile is `dev`" said of `cargo install` from the
//! same words said of build overrides. The generator reads the question, the claims and the
//! passage and answers yes or no (greedy, two tokens at most: its first word is its ruling).

use crate::models::generator::{Chat, FirstWords, Generator, Limits};
use crate::models::ModelError;
use crate::question::words::content_words;
use crate::question::Question;
use std::time::Instant;

/// Characters of the passage the judge reads at most, around the claim's words: about 300
/// tokens, which the default generator reads in about a second on two cores.
pub const PASSAGE_CHARS: usize = 1200;

/// A strict checker's instruction. Chosen on a replay of the 29 answers the embedding layer
/// let through on rustdocs-ask and ask-docs (6 wrong) with the 1.5B generator: it keeps 20 of
/// the 23 right answers and 2 of the 6 wrong ones judging claim by claim, 21 and 3 judging the
/// claims of one passage together (as [`super::verified`] does, so a true second sentence such
/// as "It was built in 1890." is read with the first); a plain "does the passage state it"
/// keeps 21 and 5 (docs/retrieval.md).
const SYSTEM: &str = "You are a strict fact checker. Given a passage, a question and a proposed answer, \
reply yes only if the passage itself explicitly states what the proposed answer says, about the same \
thing the question asks about. If the passage talks about something else, does not mention the \
question's subject, or says something different, reply no. Reply with one word: yes or no.";

/// One worked pair, so the small generator replies with the one word and sees that the same
/// words said of something else are no support.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "Passage:\nKettles\nAn electric kettle switches off when the water boils.\n\nQuestion: When does a toaster switch off?\nAnswer: It switches off when the water boils.\n\nDoes the passage state this answer to the question?",
        "no",
    ),
    (
        "Passage:\nToasters\nA toaster switches off when its timer runs out.\n\nQuestion: When does a toaster switch off?\nAnswer: It switches off when its timer runs out.\n\nDoes the passage state this answer to the question?",
        "yes",
    ),
];

/// The first words of a yes and of a no, as the generator's tokens may start them.
const YES: &[&str] = &["yes", "Yes", " yes", " Yes", "YES"];
const NO: &[&str] = &["no", "No", " no", " No", "NO"];

/// What the judge said: its greedy reply's ruling, and how sure it was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    pub ruling: Ruling,
    /// The share of the probability its first step gave "yes" of "yes" and "no" together;
    /// none from a generator whose logits cannot be read (a model server).
    pub yes: Option<f64>,
}

/// What the judge's reply says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ruling {
    /// The passage states the answer.
    Holds,
    /// It does not, or the reply was neither yes nor no.
    DoesNotHold,
}

/// The generator's judgement of `claim` as the answer to `question`, from `passage` (its title
/// and the part of its text [`PASSAGE_CHARS`] long that holds most of the claim's words).
pub fn rule(
    generator: &Generator,
    question: &Question,
    claim: &str,
    title: &str,
    passage: &str,
    deadline: Instant,
) -> Result<Judgement, ModelError> {
    // The question's words, then the claim's others.
    let mut words = question.content_words().to_vec();
    let added: Vec<String> = content_words(claim).into_iter().filter(|w| !words.contains(w)).collect();
    words.extend(added);
    let shown = super::sources::focus(&words, passage.trim(), 1, PASSAGE_CHARS).text;
    let user = format!(
        "Passage:\n{title}\n{}\n\nQuestion: {}\nAnswer: {}\n\nDoes the passage state this answer to the question?",
        shown.trim(),
        question.text().trim(),
        tidy(claim)
    );
    let chat = Chat { system: SYSTEM, examples: EXAMPLES, user: &user };
    let (generated, yes) = generator.generate_weighing(
        &chat,
        Limits { max_tokens: 2, deadline, stops: &[] },
        FirstWords { yes: YES, no: NO },
    )?;
    generated.log_timing("judge");
    tracing::debug!(reply = %generated.text, finish = ?generated.finish, ?yes, "the judge ruled on {claim:?}");
    Ok(Judgement { ruling: ruling(&generated.text), yes })
}

/// The claim as a sentence: a removed marker leaves a space before the full stop
/// ("120 metres long ."), which the small generator reads as a different sentence.
fn tidy(claim: &str) -> String {
    let mut out = String::with_capacity(claim.len());
    for c in claim.trim().chars() {
        if matches!(c, '.' | ',' | ';' | ':' | '!' | '?') {
            while out.ends_with(' ') {
                out.pop();
            }
        }
        out.push(c);
    }
    out
}

/// A reply's ruling: its first word, yes or no.
fn ruling(reply: &str) -> Ruling {
    let first = reply.trim_start().split(|c: char| !c.is_alphabetic()).next().unwrap_or("");
    if first.eq_ignore_ascii_case("yes") {
        Ruling::Holds
    } else {
        Ruling::DoesNotHold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_word_rules_and_anything_but_yes_does_not_hold() {
        assert_eq!(ruling("Yes"), Ruling::Holds);
        assert_eq!(ruling(" yes."), Ruling::Holds);
        assert_eq!(ruling("No"), Ruling::DoesNotHold);
        assert_eq!(ruling("The passage"), Ruling::DoesNotHold);
        assert_eq!(ruling(""), Ruling::DoesNotHold);
        assert_eq!(ruling("yesterday"), Ruling::DoesNotHold);
    }

    #[test]
    fn a_claim_loses_the_space_its_marker_left() {
        assert_eq!(tidy(" The bridge is 120 m long . "), "The bridge is 120 m long.");
        assert_eq!(tidy("It is 1.5 , not 2 !"), "It is 1.5, not 2!");
    }
}
