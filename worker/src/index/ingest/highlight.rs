//! A code file's colouring for the workspace: `tree-sitter-highlight` with each grammar's own
//! highlight query, its captures folded into the few [`TokenClass`]es the code view styles.
//!
//! TypeScript's query adds to JavaScript's (and JSX's) and C++'s to C's, as their grammars' own
//! configurations combine them: the base query first, because when several patterns match a
//! node the highlighter keeps the last one (a base query's catch-all `(identifier) @variable`
//! would otherwise hide C++'s functions and JSX's tags). A language without a grammar, a file
//! past the parse limit or one the highlighter gives up on is shown plain (no tokens).

use super::code::{grammar, MAX_PARSED_BYTES};
use super::lines::LineIndex;
use protocol::api::{CodeToken, TokenClass};
use protocol::source_kind::CodeLanguage;
use std::collections::HashMap;
use std::sync::OnceLock;
use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent, Highlighter};

/// The highlight names svc colours, each with its class. A capture takes the longest name
/// whose parts it has (`function.method` is a `function`; a plain `variable` is nothing).
const NAMES: [(&str, TokenClass); 16] = [
    ("keyword", TokenClass::Keyword),
    ("string", TokenClass::String),
    ("string.escape", TokenClass::Escape),
    ("escape", TokenClass::Escape),
    ("comment", TokenClass::Comment),
    ("number", TokenClass::Number),
    ("constant", TokenClass::Constant),
    ("type", TokenClass::Type),
    ("constructor", TokenClass::Type),
    ("function", TokenClass::Function),
    ("property", TokenClass::Property),
    ("attribute", TokenClass::Attribute),
    ("operator", TokenClass::Operator),
    ("variable.builtin", TokenClass::Builtin),
    ("label", TokenClass::Label),
    ("tag", TokenClass::Tag),
];

/// The highlight query of a language, `None` for the languages read as text.
fn query(lang: CodeLanguage) -> Option<String> {
    use CodeLanguage::*;
    let (js, jsx, ts) = (
        tree_sitter_javascript::HIGHLIGHT_QUERY,
        tree_sitter_javascript::JSX_HIGHLIGHT_QUERY,
        tree_sitter_typescript::HIGHLIGHTS_QUERY,
    );
    Some(match lang {
        Rust => tree_sitter_rust::HIGHLIGHTS_QUERY.to_string(),
        Python => tree_sitter_python::HIGHLIGHTS_QUERY.to_string(),
        JavaScript => format!("{js}\n{jsx}"),
        TypeScript => format!("{js}\n{ts}"),
        Tsx => format!("{js}\n{jsx}\n{ts}"),
        Go => tree_sitter_go::HIGHLIGHTS_QUERY.to_string(),
        Java => tree_sitter_java::HIGHLIGHTS_QUERY.to_string(),
        C => tree_sitter_c::HIGHLIGHT_QUERY.to_string(),
        Cpp => format!("{}\n{}", tree_sitter_c::HIGHLIGHT_QUERY, tree_sitter_cpp::HIGHLIGHT_QUERY),
        Shell => tree_sitter_bash::HIGHLIGHT_QUERY.to_string(),
        Sql | Json | Yaml | Toml => return None,
    })
}

/// Each language's configuration, built once (compiling a query takes milliseconds); `None`
/// where there is no grammar or its query does not compile.
fn configuration(lang: CodeLanguage) -> Option<&'static HighlightConfiguration> {
    static CONFIGS: OnceLock<HashMap<CodeLanguage, HighlightConfiguration>> = OnceLock::new();
    CONFIGS
        .get_or_init(|| {
            let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
            CodeLanguage::ALL
                .iter()
                .filter_map(|&lang| {
                    let mut config =
                        HighlightConfiguration::new(grammar(lang)?, lang.as_str(), &query(lang)?, "", "").ok()?;
                    config.configure(&names);
                    Some((lang, config))
                })
                .collect()
        })
        .get(&lang)
}

/// The coloured stretches of `text`, line by line; none when it cannot be highlighted.
pub fn code_tokens(text: &str, lang: CodeLanguage) -> Vec<CodeToken> {
    let Some(config) = configuration(lang).filter(|_| text.len() <= MAX_PARSED_BYTES) else {
        return Vec::new();
    };
    let mut highlighter = Highlighter::new();
    let Ok(events) = highlighter.highlight(config, text.as_bytes(), None, |_| None) else {
        return Vec::new();
    };
    let idx = LineIndex::new(text);
    // The classes of the highlights open now (`None`: a name svc does not colour).
    let mut open: Vec<Option<TokenClass>> = Vec::new();
    let mut tokens = Vec::new();
    for event in events {
        match event {
            // Every highlight is an index into NAMES (the names it was configured with).
            Ok(HighlightEvent::HighlightStart(h)) => open.push(NAMES.get(h.0).map(|n| n.1)),
            Ok(HighlightEvent::HighlightEnd) => {
                open.pop();
            }
            Ok(HighlightEvent::Source { start, end }) => {
                if let Some(&Some(class)) = open.last() {
                    split_by_line(text, &idx, start, end, class, &mut tokens);
                }
            }
            // Cancelled or past the highlighter's own limits: plain is better than half.
            Err(_) => return Vec::new(),
        }
    }
    tokens
}

/// Adds the stretch `start..end` of `text` as one token per line it spans (line breaks and
/// empty pieces left out).
fn split_by_line(text: &str, idx: &LineIndex, start: usize, end: usize, class: TokenClass, out: &mut Vec<CodeToken>) {
    let mut at = start;
    while at < end {
        let line = idx.line_of(at);
        let line_start = idx.line_start(line);
        let piece_end = idx.line_end(text, line).min(end);
        if piece_end > at {
            out.push(CodeToken {
                line: super::to_u32(line + 1),
                start: super::to_u32(at - line_start),
                end: super::to_u32(piece_end - line_start),
                class,
            });
        }
        // On to the next line's start (past the line break).
        let next = if line + 1 < idx.line_count() { idx.line_start(line + 1) } else { end };
        at = next.max(piece_end.max(at + 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(text: &str, lang: CodeLanguage) -> Vec<(u32, &str, TokenClass)> {
        let lines: Vec<&str> = text.split('\n').collect();
        code_tokens(text, lang)
            .into_iter()
            .map(|t| (t.line, &lines[t.line as usize - 1][t.start as usize..t.end as usize], t.class))
            .collect()
    }

    #[test]
    fn every_grammar_has_a_highlight_query_that_compiles() {
        for lang in CodeLanguage::ALL {
            assert_eq!(configuration(lang).is_some(), grammar(lang).is_some(), "{lang:?}");
        }
    }

    #[test]
    fn rust_keywords_strings_comments_and_functions_are_told_apart() {
        let text = "// Boils.\nfn boil(litres: f32) -> &'static str {\n    let _ = \"hot\\n\";\n    \"done\"\n}\n";
        let got = classes(text, CodeLanguage::Rust);
        assert!(got.contains(&(1, "// Boils.", TokenClass::Comment)), "{got:?}");
        assert!(got.contains(&(2, "fn", TokenClass::Keyword)), "{got:?}");
        assert!(got.contains(&(2, "boil", TokenClass::Function)), "{got:?}");
        assert!(got.contains(&(2, "f32", TokenClass::Type)), "{got:?}");
        assert!(got.contains(&(3, "let", TokenClass::Keyword)), "{got:?}");
        assert!(got.contains(&(3, "\\n", TokenClass::Escape)), "{got:?}");
        assert!(got.contains(&(4, "\"done\"", TokenClass::String)), "{got:?}");
    }

    #[test]
    fn a_language_built_on_another_keeps_its_own_captures() {
        let cpp = classes("int main() { ns::boil(); return 0; }\n", CodeLanguage::Cpp);
        assert!(cpp.contains(&(1, "boil", TokenClass::Function)), "{cpp:?}");
        assert!(cpp.contains(&(1, "return", TokenClass::Keyword)), "{cpp:?}");
        let tsx = classes("const e = <Kettle size={2} />;\nlet n: number = 1;\n", CodeLanguage::Tsx);
        assert!(
            tsx.contains(&(1, "Kettle", TokenClass::Tag)) || tsx.contains(&(1, "Kettle", TokenClass::Type)),
            "{tsx:?}"
        );
        assert!(tsx.contains(&(2, "number", TokenClass::Type)), "{tsx:?}");
        let jsx = classes("const e = <div className=\"a\">hi</div>;\n", CodeLanguage::JavaScript);
        assert!(jsx.contains(&(1, "div", TokenClass::Tag)), "{jsx:?}");
    }

    #[test]
    fn a_token_over_several_lines_is_cut_at_each_line() {
        let text = "def steep():\n    \"\"\"Steep\n    the leaves.\"\"\"\n    return 2\n";
        let got = classes(text, CodeLanguage::Python);
        assert!(got.contains(&(2, "\"\"\"Steep", TokenClass::String)), "{got:?}");
        assert!(got.contains(&(3, "    the leaves.\"\"\"", TokenClass::String)), "{got:?}");
        assert!(got.contains(&(4, "return", TokenClass::Keyword)), "{got:?}");
        // Tokens are in order and never overlap.
        let tokens = code_tokens(text, CodeLanguage::Python);
        assert!(tokens.windows(2).all(|w| (w[0].line, w[0].end) <= (w[1].line, w[1].start)), "{tokens:?}");
    }

    #[test]
    fn text_languages_and_each_other_grammar_work() {
        assert!(code_tokens("SELECT 1;", CodeLanguage::Sql).is_empty());
        let samples = [
            (CodeLanguage::JavaScript, "const a = 'x'; // c\n"),
            (CodeLanguage::TypeScript, "let n: number = 1;\n"),
            (CodeLanguage::Tsx, "const e = <div className=\"a\">hi</div>;\n"),
            (CodeLanguage::Go, "package main\nfunc main() {}\n"),
            (CodeLanguage::Java, "class A { int f() { return 1; } }\n"),
            (CodeLanguage::C, "int main(void) { return 0; }\n"),
            (CodeLanguage::Cpp, "namespace n { class A {}; }\n"),
            (CodeLanguage::Shell, "echo \"hi\" # greet\n"),
        ];
        for (lang, text) in samples {
            let got = classes(text, lang);
            assert!(got.iter().any(|t| t.2 == TokenClass::Keyword || t.2 == TokenClass::String), "{lang:?}: {got:?}");
        }
    }
}
