//! `POST /api/ask`: hybrid retrieval, the sources chosen to cover the question
//! ([`sources`]), an answer generated from them alone by the local generator (greedy, so the
//! same question on the same index gives the same answer), and its `[n]` markers mapped to
//! citations ([`citations`]).

mod blocks;
mod citations;
mod claims;
mod grounding;
mod judge;
mod passages;
mod relevance;
pub mod sources;
mod subject;
mod verified;

use crate::models::generator::{Chat, Flow, Generated, Generator, Limits};
use crate::models::ModelError;
use crate::question::language::Language;
use crate::question::Question;
use crate::retrieval::hybrid;
use crate::shared::Shared;
use protocol::api::SearchResponse;
use protocol::api::{
    AnswerContext, AnswerStrategy, AskMeta, AskResponse, Citation, CitationVia, DeclineReason, FinishReason,
    SourceChoice,
};
use protocol::{ApiError, AskRequest, QueryRequest};
use sources::{Choice, Decision, Evidence, POOL};
use std::time::{Duration, Instant};

/// How long one answer may generate by default. Below the gateway's 60 s call limit, so a
/// slow generation ends in this worker's error, not the gateway's.
const ANSWER_TIME_LIMIT: Duration = Duration::from_secs(45);

/// The generation time limit: `SVC_ANSWER_TIMEOUT_MS` when it is a number (at most the
/// default), else [`ANSWER_TIME_LIMIT`].
pub(super) fn answer_time_limit() -> Duration {
    std::env::var("SVC_ANSWER_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(ANSWER_TIME_LIMIT, |ms| Duration::from_millis(ms).min(ANSWER_TIME_LIMIT))
}

/// The whole request (retrieval, generation, verification) ends this long after it started at
/// most, inside the gateway's 60 s call limit.
const REQUEST_TIME_LIMIT: Duration = Duration::from_secs(55);

/// When generation must stop: its own limit from now, but never past the request's.
pub(super) fn generation_deadline(started: Instant) -> Instant {
    (Instant::now() + answer_time_limit()).min(started + REQUEST_TIME_LIMIT)
}

/// How a draft is asked for: the instruction, and where the text ends besides the end-of-turn
/// token.
pub(super) struct Instruction {
    pub system: &'static str,
    pub stops: &'static [&'static str],
}

/// What the generator is told, in both modes: the same words, so the prompt's start (this turn
/// and the worked example) is decoded once and kept in the generator's cache for every
/// question after it, raw or verified.
pub(super) const SYSTEM: &str = "You answer questions using only the numbered sources you are given. \
End every sentence with the number of the source it comes from, in square brackets, like [1]. \
Write names, numbers with their units, commands and settings exactly as the sources write them. \
If the sources do not answer the question, say that the notes do not say.";

/// The raw answer. It ends where the small generator goes on to echo the prompt (a new
/// question, the sources) or starts a Markdown heading: the worked example's sources come
/// back as `## Ice` sections, never part of an answer.
const RAW: Instruction =
    Instruction { system: SYSTEM, stops: &["\nQuestion:", "\nSources:", "\n[", "\n#", "<|im_start|>", "<|im_end|>"] };

/// One worked example, as an earlier turn of the conversation: the small default generator
/// copies the citation form from it far more reliably than from the instruction alone.
const EXAMPLE_USER: &str = "Sources:\n\n[1] Water\nWater boils at 100 degrees Celsius at sea level.\n\n[2] Ice\nIce melts at 0 degrees Celsius.\n\nQuestion: At what temperature does water boil?";
const EXAMPLE_ANSWER: &str = "Water boils at 100 degrees Celsius at sea level [1].";

/// An answer in the form its mode has.
// Made once per ask and serialized at once; boxing the verified form would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Answer {
    Raw(AskResponse),
    Verified(protocol::api::VerifiedAskResponse),
}

/// Answers `req`: in verified mode with the verification, else the raw answer, whose text
/// goes to `on_text` as it is generated.
pub fn answer(w: &Shared, req: &AskRequest, on_text: &mut dyn FnMut(&str) -> Flow) -> Result<Answer, ApiError> {
    let started = Instant::now();
    let answer = match &req.verified {
        Some(settings) => Answer::Verified(verified::ask(w, req, settings, started)?),
        None => Answer::Raw(ask(w, req, on_text, started)?),
    };
    let mode = if matches!(answer, Answer::Verified(_)) { "verified" } else { "raw" };
    tracing::info!(mode, total_ms = started.elapsed().as_millis() as u64, "answered");
    Ok(answer)
}

pub(super) fn generator_unavailable(e: ModelError) -> ApiError {
    ApiError::unavailable(format!(
        "Answer generation is not available: no generation model is loaded ({e}). Prepare the models (scripts/models default, or POST /api/models/pull)."
    ))
}

/// What an answer is drawn from: retrieval's results, the question as it read it (weighed by
/// the rarity of its words in the index), the pool of their best passages ([`passages`]) and
/// the sources chosen among them ([`sources::choose`]).
struct Drawn {
    response: SearchResponse,
    weighed: relevance::Weighed,
    pool: Vec<Evidence>,
    choice: Choice,
}

/// Retrieval for an answer to `query`, and the sources chosen from it.
fn draw(w: &Shared, query: &QueryRequest) -> Result<Drawn, ApiError> {
    let mut query = query.clone();
    query.search.limit = query.search.limit.max(POOL as u32);
    let started = Instant::now();
    let outcome = hybrid::run(w, &query)?;
    let retrieval = started.elapsed();
    let response = outcome.response;
    let weighed = relevance::Weighed::of(w, outcome.question);
    let pool = passages::ranked(w, &weighed, &response.results[..response.results.len().min(POOL)])?;
    let choice = sources::choose(&weighed, &pool);
    tracing::info!(
        retrieval_ms = retrieval.as_millis() as u64,
        passages_ms = (started.elapsed() - retrieval).as_millis() as u64,
        "sources drawn"
    );
    Ok(Drawn { response, weighed, pool, choice })
}

/// The raw answer to `req`, its text handed to `on_text` as it is generated.
fn ask(
    w: &Shared,
    req: &AskRequest,
    on_text: &mut dyn FnMut(&str) -> Flow,
    started: Instant,
) -> Result<AskResponse, ApiError> {
    let shown = req.query.search.limit as usize;
    let Drawn { response, weighed, pool, choice } = draw(w, &req.query)?;
    let sources: Vec<&Evidence> = choice.sources(&pool).collect();

    // After retrieval: an unknown collection is a 404 whether or not a generator is loaded.
    let generator = w.models.generator().map_err(generator_unavailable)?;
    let titled: Vec<(&str, &str)> = sources.iter().map(|e| (e.title.as_str(), e.text.as_str())).collect();
    // What the prompt shows of each source: the draft is generated from it and checked against it.
    let prompt_sources = shown_sources(weighed.question(), &titled);
    let ask_for = |place: QuestionPlace, on_text: &mut dyn FnMut(&str) -> Flow| {
        let purpose = match place {
            QuestionPlace::After => "draft",
            QuestionPlace::BeforeAndAfter => "second draft",
        };
        draft(
            &generator,
            &RAW,
            &user_turn(weighed.question(), &prompt_sources, place),
            req.max_answer_tokens,
            started,
            purpose,
            on_text,
        )
    };
    let generated = if sources.is_empty() { None } else { Some(ask_for(QuestionPlace::After, on_text)?) };
    // Each source named by its address and title, as relevance weighs it: "which axum
    // extractor" is about svc://…/axum-0.8.9/src/docs/extract.md.
    let named: Vec<String> = sources.iter().map(|e| format!("{} {}", e.uri, e.title)).collect();
    let named_shown: Vec<(&str, &str)> =
        named.iter().zip(&prompt_sources).map(|(name, (_, text))| (name.as_str(), text.as_str())).collect();
    // What the question names, as the sources shown write it (verified mode's rule).
    let subject = subject::Subject::of(weighed.question(), titled.iter().copied());
    // A draft its sources do not hold is withheld (a cancelled one was never read to the end).
    let declined = generated
        .as_ref()
        .filter(|g| g.finish != FinishReason::Cancelled)
        .and_then(|g| grounding::check(&g.text, &weighed, &named_shown, &subject));
    if let Some(d) = &declined {
        tracing::info!(reason = ?d.reason, not_in_sources = ?d.not_in_sources, "the drafted answer is withheld");
    }
    // A draft withheld as a restatement of the question (the generator read the sources and
    // found nothing to add) is drafted once more from the same sources with the question
    // before them too, so they are read knowing what is looked for; the second draft stands
    // only if its sources hold it. A draft withheld for what the sources do not hold is not
    // asked again: asked again, the generator copies a sentence about something else, which
    // the sources do hold (docs/retrieval.md, stop 55). The second draft is not streamed: the
    // client has the first, and the reply's answer is the final word.
    let (generated, declined, streamed) = match (generated, declined) {
        (Some(first), Some(withheld)) if withheld.reason == DeclineReason::AddsNothing && !first.finish.truncated() => {
            // A second draft that fails leaves the first one's decline: the reply is still whole.
            match ask_for(QuestionPlace::BeforeAndAfter, &mut |_| Flow::Continue) {
                Ok(second)
                    if !second.finish.truncated()
                        && grounding::check(&second.text, &weighed, &named_shown, &subject).is_none() =>
                {
                    tracing::info!("the second draft rests on its sources and replaces the withheld one");
                    (Some(second), None, false)
                }
                Ok(_) => (Some(first), Some(withheld), true),
                Err(e) => {
                    tracing::warn!("the second draft failed; the first one's decline stands: {}", e.message);
                    (Some(first), Some(withheld), true)
                }
            }
        }
        (generated, declined) => (generated, declined, true),
    };
    // A draft that stands and ends on the sentence its source introduces a code block with
    // ("Run the following:") is completed with the block; the client that was streamed the
    // draft is streamed the block too (a second draft was not streamed). The block is the
    // source's text, not the generator's: markers and claims are read from the draft alone.
    let completion = generated.as_ref().filter(|g| declined.is_none() && !g.finish.truncated()).and_then(|g| {
        let shown: Vec<&str> = prompt_sources.iter().map(|(_, text)| text.as_str()).collect();
        blocks::introduced_block(&g.text, &shown)
    });
    if let Some(block) = &completion {
        tracing::info!("the draft ends where its source's code block starts: the block is added");
        if streamed {
            let _ = on_text(block);
        }
    }
    let (cited, unmatched) = match (&generated, &declined) {
        (Some(g), None) => citations::markers(&g.text, sources.len()),
        _ => (Vec::new(), 0),
    };
    let texts: Vec<&str> = sources.iter().map(|e| e.text.as_str()).collect();
    let embed = |t: &[&str]| w.models.embedder().ok().and_then(|e| e.embed(t).ok());
    let kept = generated.as_ref().filter(|_| declined.is_none());
    let credited = kept.map_or_else(Default::default, |g| citations::attributed(&g.text, &texts, &embed));
    // Credited by the rule that let the draft stand: each source named as the grounding check
    // names it, so a sentence that stands on a source is credited to that source.
    let named_texts: Vec<(&str, &str)> =
        named.iter().zip(&sources).map(|(name, e)| (name.as_str(), e.text.as_str())).collect();
    let answering = kept.map_or_else(Vec::new, |g| citations::answered_by(&g.text, &weighed, &named_texts));
    let marked = cited.into_iter().map(|n| (n, CitationVia::Marker));
    let attributed = answering
        .into_iter()
        .chain(credited.by_words)
        .map(|n| (n, CitationVia::Attribution))
        .chain(credited.by_meaning.into_iter().map(|n| (n, CitationVia::Similarity)));
    let mut citations: Vec<Citation> = Vec::new();
    if declined.is_some() {
        // The draft is withheld: the sources it was drafted from are cited as the closest
        // notes, so the user can open them; they support nothing the answer says.
        for (i, e) in sources.iter().take(CLOSEST).enumerate() {
            citations.push(citation(e, i + 1, CitationVia::Closest));
        }
    }
    for (n, via) in marked.chain(attributed) {
        if citations.iter().any(|c| c.index as usize == n) {
            continue;
        }
        citations.push(citation(sources[n - 1], n, via));
    }
    let meta = response.meta;
    let mut results = response.results;
    results.truncate(shown);
    Ok(AskResponse {
        query: response.query,
        mode: response.mode,
        query_language: response.query_language,
        answer: Some(match (&declined, &generated) {
            (Some(d), _) => grounding::decline_text(d),
            (None, Some(g)) => format!("{}{}", g.text, completion.as_deref().unwrap_or_default()),
            (None, None) => NO_SOURCE.to_string(),
        }),
        citations,
        results,
        meta: AskMeta {
            expanded: meta.expanded.unwrap_or(false),
            reranked: meta.reranked.unwrap_or(false),
            vectors_used: meta.vectors_used.unwrap_or(false),
            answer_generated: generated.is_some(),
            total_results: meta.total_results,
            unmatched_citations: unmatched,
            prompt_tokens: generated.as_ref().map_or(0, |g: &Generated| g.prompt_tokens as u32),
            answer_tokens: generated.as_ref().map_or(0, |g: &Generated| g.tokens as u32),
            truncated: generated.as_ref().is_some_and(|g| g.finish.truncated()),
            finish_reason: generated.as_ref().map(|g| g.finish),
            declined,
            answer_context: answer_context(&choice, &pool),
        },
    })
}

/// The answer when no result shares a word with the question: nothing is generated.
pub const NO_SOURCE: &str = "The notes do not say: no note found speaks of what the question asks.";

/// Sources of a withheld draft cited as the closest notes, at most.
const CLOSEST: usize = 3;

/// The citation of source number `n` (from 1).
fn citation(e: &Evidence, n: usize, via: CitationVia) -> Citation {
    Citation {
        docid: e.docid.clone(),
        uri: e.uri.clone(),
        index: n as u32,
        start_line: e.start_line,
        end_line: e.end_line,
        via,
    }
}

/// The generator's answer to the question's turn `user` ([`user_turn`]) under the instruction
/// `system`, its text handed to `on_text` as it is generated, within the request's time; its
/// time logged as spent for `purpose` (a draft, a second draft).
pub(super) fn draft(
    generator: &Generator,
    instruction: &Instruction,
    user: &str,
    max_tokens: u32,
    started: Instant,
    purpose: &str,
    on_text: &mut dyn FnMut(&str) -> Flow,
) -> Result<Generated, ApiError> {
    tracing::debug!(user = %user, "the question's turn of the prompt");
    let chat = Chat { system: instruction.system, examples: &[(EXAMPLE_USER, EXAMPLE_ANSWER)], user };
    let generated = generator
        .generate(
            &chat,
            Limits {
                max_tokens: max_tokens as usize,
                deadline: generation_deadline(started),
                stops: instruction.stops,
            },
            on_text,
        )
        .map_err(failed)?;
    generated.log_timing(purpose);
    Ok(generated)
}

/// A failed generation: a model that is not there or cannot load is a 503, any other
/// failure of the model a 500 whose cause goes to the log under its error id, not to the
/// client ([`crate::runtime`]). (Its time limit is no failure: the answer so far is returned.)
fn failed(e: ModelError) -> ApiError {
    if e.is_unavailable() {
        ApiError::unavailable(format!("Answer generation is not available: {e}"))
    } else {
        crate::errors::internal(format!("answer generation failed: {e}"))
    }
}

/// Characters of source text the prompt holds at most, shared equally by the sources: about
/// 600 tokens, which the default generator reads in about 2.5 s on two cores. Measured on the
/// ask-docs eval against 4,000: first token p50 3.1 s against 4.4 s, the right file cited in
/// 0.56 of the answers against 0.40, unanswerable questions abstained 0.91 against 0.64 when
/// verified; 0.58 correct against 0.63 (docs/retrieval.md).
const PROMPT_SOURCE_CHARS: usize = 2400;

/// Where the question stands in the user's turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum QuestionPlace {
    /// After the sources, as in the worked example.
    After,
    /// Before the sources and again after them.
    BeforeAndAfter,
}

/// The numbered sources (as [`shown_sources`] gives them) and the question, at `place`. A
/// question in another language than English is to be answered in it: the small generator,
/// told in English what to do, answers a German question over German pages in English, and
/// the draft's English words are then in none of its sources (manpages-de: 9 of 30 drafts).
/// An English question's turn is as it always was, so its cached prompt start is too.
pub(super) fn user_turn(question: &Question, sources: &[(&str, String)], place: QuestionPlace) -> String {
    let language = question.language();
    let question = question.text().trim();
    let mut out = String::new();
    if place == QuestionPlace::BeforeAndAfter {
        out.push_str(&format!("Question: {question}\n\n"));
    }
    out.push_str("Sources:\n\n");
    for (i, (title, text)) in sources.iter().enumerate() {
        out.push_str(&format!("[{}] {title}\n{text}\n\n", i + 1));
    }
    out.push_str("Question: ");
    out.push_str(question);
    if language != Language::English {
        out.push_str(&format!("\n\nAnswer in {}.", language.english_name()));
    }
    out
}

/// Each source as the prompt shows it: its title, then its text focused on the question's
/// words within its share of [`PROMPT_SOURCE_CHARS`].
pub(super) fn shown_sources<'s>(question: &Question, sources: &[(&'s str, &str)]) -> Vec<(&'s str, String)> {
    let share = PROMPT_SOURCE_CHARS / sources.len().max(1);
    let words = question.content_words();
    sources
        .iter()
        .map(|(title, text)| (*title, sources::focus(words, text.trim(), 1, share).text.trim_end().to_string()))
        .collect()
}

fn answer_context(choice: &Choice, pool: &[Evidence]) -> AnswerContext {
    let entry = |d: &Decision| {
        let e = &pool[d.pool_index];
        SourceChoice {
            docid: e.docid.clone(),
            uri: e.uri.clone(),
            start_line: e.start_line,
            end_line: e.end_line,
            score: e.score,
            query_token_hits: d.query_token_hits,
            facet_hits: d.facet_hits,
            relevance: d.relevance,
            reason: d.reason,
        }
    };
    AnswerContext {
        strategy: AnswerStrategy::AdaptiveCoverageV1,
        target_sources: choice.target_sources as u32,
        facets: choice.facets.clone(),
        selected: choice.selected.iter().map(entry).collect(),
        dropped: choice.dropped.iter().map(entry).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_stands_after_the_sources_and_on_a_second_reading_before_them_too() {
        let sources = [("Water", "Water boils at 100 degrees.".to_string()), ("Ice", "Ice melts at 0.".to_string())];
        let after = user_turn(&Question::read(" When does water boil? "), &sources, QuestionPlace::After);
        assert_eq!(
            after,
            "Sources:\n\n[1] Water\nWater boils at 100 degrees.\n\n[2] Ice\nIce melts at 0.\n\nQuestion: When does water boil?"
        );
        let both = user_turn(&Question::read(" When does water boil? "), &sources, QuestionPlace::BeforeAndAfter);
        assert_eq!(both, format!("Question: When does water boil?\n\n{after}"));
    }

    #[test]
    fn a_question_in_another_language_is_to_be_answered_in_it() {
        let sources = [("ls", "-S nach Dateigröße sortieren, die größte zuerst".to_string())];
        let german = user_turn(
            &Question::read("Wie kann ich bei ls die Dateien nach Größe sortieren?"),
            &sources,
            QuestionPlace::After,
        );
        assert!(
            german.ends_with("Question: Wie kann ich bei ls die Dateien nach Größe sortieren?\n\nAnswer in German.")
        );
        let french = user_turn(
            &Question::read("Comment trier les fichiers par taille avec ls ?"),
            &sources,
            QuestionPlace::After,
        );
        assert!(french.ends_with("\n\nAnswer in French."));
        let english =
            user_turn(&Question::read("How do I sort files by size with ls?"), &sources, QuestionPlace::After);
        assert!(english.ends_with("Question: How do I sort files by size with ls?"));
    }
}
