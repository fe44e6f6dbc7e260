//! A draft that ends where its source's code block starts. Documentation gives commands and
//! settings in blocks introduced by a sentence ending in a colon ("Run the following:"); the
//! small generator copies the sentence and stops, and its answer points at a command it never
//! gives ("…Run the following [1]."). Such a draft is completed with the block, as its source
//! writes it.

use super::claims;

/// Words of the introducing sentence the draft must end with (its last ones, at most).
const MATCHED_WORDS: usize = 6;
/// An introducing sentence of fewer words is too common to say which block is meant.
const MIN_WORDS: usize = 3;
/// A block completes a draft only when short: a command or a setting, not a program.
const MAX_BLOCK_LINES: usize = 5;
const MAX_BLOCK_CHARS: usize = 300;

/// What completes `draft` (a finished answer, its `[n]` markers included): the code block of
/// one of `sources` whose introducing sentence the draft ends with, or whose introducing
/// sentence's words the draft's last sentence says in order and ends in a colon as well ("…you
/// should run the following command to bring your dependencies up to date:"), fenced as the
/// source fences it and preceded by a blank line. The sources the draft's last marker names
/// are looked in first. `None` when the draft ends otherwise or already gives the block.
pub fn introduced_block(draft: &str, sources: &[&str]) -> Option<String> {
    let (markers, plain) = claims::markers_of(draft);
    let plain = plain.trim_end();
    let ending = tokens(plain);
    // A draft that ends in a colon introduces what it never gives.
    let dangling = plain.ends_with(':').then(|| tokens(&last_sentence(plain)));
    let last_cited = markers.last().map(|m| m.number);
    let mut order: Vec<usize> = (0..sources.len()).collect();
    order.sort_by_key(|&i| Some(i + 1) != last_cited);
    order.into_iter().flat_map(|i| blocks(sources[i])).find_map(|block| {
        let intro = tokens(&block.introduction);
        let tail = &intro[intro.len().saturating_sub(MATCHED_WORDS)..];
        let said = ending.ends_with(tail) || dangling.as_ref().is_some_and(|last| in_order(&intro, last));
        let given = holds_run(&ending, &tokens(&block.body));
        (intro.len() >= MIN_WORDS && said && !given)
            .then(|| format!("\n\n{}\n{}\n{}", block.fence, block.body, block.closing))
    })
}

/// Whether `words` stand in `text` in their order, other words between them allowed.
fn in_order(words: &[String], text: &[String]) -> bool {
    let mut rest = text.iter();
    words.iter().all(|w| rest.any(|t| t == w))
}

/// Whether `run` stands in `text` word for word (an empty run stands nowhere).
fn holds_run(text: &[String], run: &[String]) -> bool {
    !run.is_empty() && text.windows(run.len()).any(|w| w == run)
}

/// The last sentence of `text` without its markers, as the claims are split
/// ([`claims::split`]: "e.g." ends none).
fn last_sentence(text: &str) -> String {
    claims::split(text).pop().map(|c| c.plain).unwrap_or_default()
}

/// A fenced code block of a source and the sentence that introduces it.
#[derive(Debug, PartialEq)]
struct Block {
    /// The last sentence before the block, ending in a colon.
    introduction: String,
    /// The opening fence line as written (with its language).
    fence: String,
    body: String,
    closing: String,
}

/// The short fenced blocks of `text` that a sentence ending in a colon introduces.
fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(marker) = fence_marker(lines[i]) else {
            i += 1;
            continue;
        };
        // A bare fence followed by one with a language before any bare one closed a block
        // that began above the passage's first line (a chunk cut inside it), since a closing
        // fence never has a language: the block starts at the later fence. (Inside a block
        // opened with a language, such a line is the block's text.)
        let bare = lines[i].trim() == marker;
        let ends = |j: usize| closes(lines[j], marker) || (bare && with_language(lines[j], marker));
        let Some(close) = (i + 1..lines.len()).find(|&j| ends(j)) else { break };
        if !closes(lines[close], marker) {
            i = close;
            continue;
        }
        let body = lines[i + 1..close].join("\n");
        let short = (1..=MAX_BLOCK_LINES).contains(&(close - i - 1)) && body.chars().count() <= MAX_BLOCK_CHARS;
        if let Some(introduction) = introduction(&lines[..i]).filter(|_| short && !body.trim().is_empty()) {
            out.push(Block {
                introduction,
                fence: lines[i].trim().to_string(),
                body,
                closing: lines[close].trim().to_string(),
            });
        }
        i = close + 1;
    }
    out
}

/// The fence a line opens a block with (three or more backticks or tildes), if it does.
fn fence_marker(line: &str) -> Option<&str> {
    let t = line.trim();
    ["```", "~~~"].iter().find(|f| t.starts_with(**f)).map(|f| {
        let c = f.as_bytes()[0] as char;
        let n = t.chars().take_while(|x| *x == c).count();
        &t[..n]
    })
}

/// Whether `line` opens a block with the fence character of `marker` and a language, which
/// only an opening fence has.
fn with_language(line: &str, marker: &str) -> bool {
    fence_marker(line).is_some_and(|m| m.starts_with(&marker[..1]) && line.trim().len() > m.len())
}

/// Whether `line` closes a block opened with `marker`: the same character at least as many
/// times, and nothing else.
fn closes(line: &str, marker: &str) -> bool {
    let t = line.trim();
    let c = marker.chars().next();
    t.len() >= marker.len() && t.chars().all(|x| Some(x) == c)
}

/// The sentence a block is introduced by: the last sentence of the paragraph right before it
/// (blank lines between them allowed), when it ends in a colon.
fn introduction(before: &[&str]) -> Option<String> {
    let last = before.iter().rposition(|l| !l.trim().is_empty())?;
    let first = before[..last].iter().rposition(|l| l.trim().is_empty()).map_or(0, |b| b + 1);
    let paragraph = before[first..=last].iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
    if !paragraph.ends_with(':') {
        return None;
    }
    Some(last_sentence(&paragraph))
}

/// The lowercase runs of letters and digits of `text`, in order, repeats kept: how a sentence
/// ends, read past its punctuation and formatting.
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "## Updating your dependencies\n\nBefore we get started, update your dependencies. \
        New releases may fix these issues. Run the following:\n\n```console\ncargo update\n```\n\nAfter updating, \
        run your tests.";

    #[test]
    fn a_draft_ending_on_the_sentence_that_introduces_a_block_gets_the_block() {
        let draft = "New releases may fix these issues. Run the following [1].";
        assert_eq!(introduced_block(draft, &[SOURCE]).as_deref(), Some("\n\n```console\ncargo update\n```"));
    }

    #[test]
    fn a_draft_ending_in_a_colon_after_the_introduction_in_its_own_words_gets_the_block() {
        let draft = "First you should run the following command to update your dependencies: [1]";
        assert!(introduced_block(draft, &[SOURCE]).is_some());
        // Without the colon, a sentence that only holds the words is no introduction.
        assert_eq!(introduced_block("You should run the following command to update them [1].", &[SOURCE]), None);
        assert_eq!(introduced_block("You should update them as follows: [1]", &[SOURCE]), None);
        // The introduction's words out of their order are not it.
        assert_eq!(introduced_block("The following you should run: [1]", &[SOURCE]), None);
    }

    #[test]
    fn a_draft_that_ends_otherwise_or_already_gives_the_block_is_left_as_it_is() {
        assert_eq!(introduced_block("Update your dependencies first [1].", &[SOURCE]), None);
        // A draft that already gives the command gets no second copy.
        assert_eq!(introduced_block("Use `cargo update`. Run the following [1].", &[SOURCE]), None);
        // A sentence not ending in a colon introduces no block.
        let plain = "An example of a tilde requirement.\n\n```\n~1.2.3 := >=1.2.3, <1.3.0\n```";
        assert_eq!(introduced_block("It is an example of a tilde requirement.", &[plain]), None);
    }

    #[test]
    fn the_block_of_the_source_the_draft_cites_last_comes_first() {
        let other = "Run the following:\n\n```\ncargo test\n```";
        let draft = "Update them. Run the following [2].";
        assert_eq!(introduced_block(draft, &[other, SOURCE]).as_deref(), Some("\n\n```console\ncargo update\n```"));
        assert_eq!(
            introduced_block("Run the following.", &[other, SOURCE]).as_deref(),
            Some("\n\n```\ncargo test\n```")
        );
    }

    #[test]
    fn a_longer_closing_fence_closes_and_a_block_at_the_limits_completes() {
        let longer = "Run the following:\n\n```\ncargo update\n`````";
        assert!(introduced_block("Run the following.", &[longer]).is_some());
        let five = format!("Add these lines:\n```toml\n{}```", "a = 1\n".repeat(5));
        assert!(introduced_block("Add these lines.", &[&five]).is_some());
        let wide = format!("Add these lines:\n```toml\nx = \"{}\"\n```", "y".repeat(MAX_BLOCK_CHARS));
        assert_eq!(introduced_block("Add these lines.", &[&wide]), None);
        let empty = "Add these lines:\n```toml\n\n```";
        assert_eq!(introduced_block("Add these lines.", &[empty]), None);
    }

    #[test]
    fn a_short_introduction_or_a_long_block_completes_nothing() {
        let short = "For example:\n```\nfoo\n```";
        assert_eq!(introduced_block("Here is one, for example", &[short]), None);
        let long = format!("Add this to the file:\n```toml\n{}```", "a = 1\n".repeat(6));
        assert_eq!(introduced_block("Add this to the file.", &[&long]), None);
        let unclosed = "Add this to the file:\n```toml\na = 1\n";
        assert_eq!(introduced_block("Add this to the file.", &[unclosed]), None);
    }

    #[test]
    fn the_introduction_is_the_last_sentence_of_the_paragraph_before_the_block() {
        let b = blocks("Intro one. Set it in the config file:\n\n~~~toml\nstyle_edition = \"2024\"\n~~~\n");
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].introduction, "Set it in the config file:");
        let e_g = blocks("Set one, e.g. the edition, in the file:\n```toml\nedition = \"2024\"\n```");
        assert_eq!(e_g[0].introduction, "Set one, e.g. the edition, in the file:");
        assert_eq!(
            (b[0].fence.as_str(), b[0].body.as_str(), b[0].closing.as_str()),
            ("~~~toml", "style_edition = \"2024\"", "~~~")
        );
    }

    #[test]
    fn a_passage_cut_inside_a_block_starts_with_a_closing_fence_that_opens_nothing() {
        let cut = "let x = 1;\n```\n\nUpdate them. Run the following:\n\n```console\ncargo update\n```\n";
        let b = blocks(cut);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!((b[0].fence.as_str(), b[0].body.as_str()), ("```console", "cargo update"));
        // Inside a block opened with a language, a fenced line with one is its text.
        let nested = "Write this:\n\n````markdown\n```rust\nfn main() {}\n````\n";
        assert_eq!(blocks(nested)[0].body, "```rust\nfn main() {}");
    }
}
