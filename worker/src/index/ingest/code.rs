//! Code files: chunks cut at the syntax (functions, classes, impls) with tree-sitter, and a
//! section per symbol titled by its path (`Type::method`, `Class.method`), so an outline, a
//! citation's heading and a capsule name the symbol a passage belongs to.
//!
//! A chunk is one symbol with the comments and attributes right above it, or a run of small
//! symbols and top-level lines up to [`TARGET_CHARS`]; a symbol larger than that is cut into
//! its members (a class or an impl) or into paragraph windows (a long function). A language
//! without a grammar (SQL, JSON, YAML, TOML), a file past [`MAX_PARSED_BYTES`] or one the
//! grammar cannot parse is chunked as plain text.

use super::chunk::TARGET_CHARS;
use super::lines::LineIndex;
use super::scan::Heading;
use super::{build_chunks, sections, to_u32, Chunk, ParsedDoc};
use protocol::source_kind::CodeLanguage;
use tree_sitter::{Language, Node, Parser};

/// Larger files are chunked as plain text (parsing is linear, but the outline of a generated
/// file of megabytes helps nobody).
pub(super) const MAX_PARSED_BYTES: usize = 2 * 1024 * 1024;
/// Symbols nested deeper than this are not sections of their own.
const MAX_DEPTH: usize = 6;

/// How a node of a grammar counts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// A symbol whose members are symbols too (a class, an impl, a module).
    Container,
    /// A symbol cut as a whole (a function, a struct).
    Item,
    /// A wrapper whose inner declaration is the symbol (an export, a decorator, a template).
    Wrapper,
}

pub(super) fn grammar(lang: CodeLanguage) -> Option<Language> {
    Some(match lang {
        CodeLanguage::Rust => tree_sitter_rust::LANGUAGE.into(),
        CodeLanguage::Python => tree_sitter_python::LANGUAGE.into(),
        CodeLanguage::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        CodeLanguage::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        CodeLanguage::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        CodeLanguage::Go => tree_sitter_go::LANGUAGE.into(),
        CodeLanguage::Java => tree_sitter_java::LANGUAGE.into(),
        CodeLanguage::C => tree_sitter_c::LANGUAGE.into(),
        CodeLanguage::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        CodeLanguage::Shell => tree_sitter_bash::LANGUAGE.into(),
        CodeLanguage::Sql | CodeLanguage::Json | CodeLanguage::Yaml | CodeLanguage::Toml => return None,
    })
}

/// What a node kind is in a language, `None` for the nodes that are no symbol.
fn role(lang: CodeLanguage, kind: &str) -> Option<Role> {
    use CodeLanguage::*;
    use Role::*;
    Some(match (lang, kind) {
        (Rust, "impl_item" | "trait_item" | "mod_item") => Container,
        (
            Rust,
            "function_item"
            | "function_signature_item"
            | "struct_item"
            | "enum_item"
            | "union_item"
            | "type_item"
            | "const_item"
            | "static_item"
            | "macro_definition",
        ) => Item,
        (Python, "class_definition") => Container,
        (Python, "function_definition") => Item,
        (Python, "decorated_definition") => Wrapper,
        (JavaScript | TypeScript | Tsx, "class_declaration" | "abstract_class_declaration" | "class") => Container,
        (TypeScript | Tsx, "module" | "internal_module" | "interface_declaration") => Container,
        (
            JavaScript | TypeScript | Tsx,
            "function_declaration"
            | "generator_function_declaration"
            | "method_definition"
            | "lexical_declaration"
            | "variable_declaration",
        ) => Item,
        (TypeScript | Tsx, "type_alias_declaration" | "enum_declaration" | "abstract_method_signature") => Item,
        (JavaScript | TypeScript | Tsx, "export_statement") => Wrapper,
        (Go, "function_declaration" | "method_declaration" | "type_declaration") => Item,
        (Java, "class_declaration" | "interface_declaration" | "enum_declaration" | "record_declaration") => Container,
        (Java, "method_declaration" | "constructor_declaration") => Item,
        (C | Cpp, "function_definition") => Item,
        (C | Cpp, "struct_specifier" | "enum_specifier" | "union_specifier" | "type_definition") => Item,
        (Cpp, "class_specifier" | "namespace_definition") => Container,
        (Cpp, "template_declaration") => Wrapper,
        (Shell, "function_definition") => Item,
        _ => return None,
    })
}

/// The separator of a symbol path in a language.
fn separator(lang: CodeLanguage) -> &'static str {
    match lang {
        CodeLanguage::Rust | CodeLanguage::Cpp => "::",
        _ => ".",
    }
}

/// A symbol's name, `None` when the node names nothing (a `let` without a function, a C
/// struct used only as a type).
fn name_of(lang: CodeLanguage, node: Node<'_>, src: &[u8]) -> Option<String> {
    let text = |n: Node<'_>| n.utf8_text(src).ok().map(super::collapse_whitespace);
    match node.kind() {
        "impl_item" => {
            let ty = text(node.child_by_field_name("type")?)?;
            Some(match node.child_by_field_name("trait").and_then(text) {
                Some(tr) => format!("{ty} as {tr}"),
                None => ty,
            })
        }
        "lexical_declaration" | "variable_declaration" => {
            // `const f = () => …` and `const f = function …`: a function by another name.
            let decl = node.named_children(&mut node.walk()).find(|c| c.kind() == "variable_declarator")?;
            let value = decl.child_by_field_name("value")?;
            matches!(value.kind(), "arrow_function" | "function_expression" | "function" | "class")
                .then(|| decl.child_by_field_name("name").and_then(text))
                .flatten()
        }
        "method_declaration" if lang == CodeLanguage::Go => {
            let receiver = node.child_by_field_name("receiver").and_then(|r| {
                let param = r.named_children(&mut r.walk()).next()?;
                let ty = text(param.child_by_field_name("type")?)?;
                Some(ty.trim_start_matches('*').to_string())
            });
            let name = text(node.child_by_field_name("name")?)?;
            Some(receiver.map(|r| format!("{r}.{name}")).unwrap_or(name))
        }
        "type_declaration" => {
            let spec =
                node.named_children(&mut node.walk()).find(|c| c.kind() == "type_spec" || c.kind() == "type_alias")?;
            text(spec.child_by_field_name("name")?)
        }
        "function_definition" if matches!(lang, CodeLanguage::C | CodeLanguage::Cpp) => {
            declarator_name(node.child_by_field_name("declarator")?, src)
        }
        "type_definition" => declarator_name(node.child_by_field_name("declarator")?, src),
        "struct_specifier" | "enum_specifier" | "union_specifier" | "class_specifier" => {
            // Only a definition (with a body) is a symbol.
            node.child_by_field_name("body")?;
            text(node.child_by_field_name("name")?)
        }
        _ => text(node.child_by_field_name("name")?),
    }
}

/// The identifier a C/C++ declarator declares (`int *f(void)` → `f`, `A::f` stays whole).
fn declarator_name(mut node: Node<'_>, src: &[u8]) -> Option<String> {
    for _ in 0..16 {
        match node.kind() {
            "identifier"
            | "field_identifier"
            | "qualified_identifier"
            | "type_identifier"
            | "destructor_name"
            | "operator_name" => return node.utf8_text(src).ok().map(str::to_string),
            _ => node = node.child_by_field_name("declarator")?,
        }
    }
    None
}

/// The node a wrapper wraps.
fn unwrap_wrapper(node: Node<'_>) -> Option<Node<'_>> {
    node.child_by_field_name("definition")
        .or_else(|| node.child_by_field_name("declaration"))
        .or_else(|| node.named_children(&mut node.walk()).filter(|c| !c.kind().contains("comment")).last())
}

/// A node's 0-based first and last line (a node that ends at a line's start ends on the
/// line before).
fn lines_of(node: Node<'_>) -> (usize, usize) {
    let (s, e) = (node.start_position(), node.end_position());
    let last = if e.column == 0 && e.row > s.row { e.row - 1 } else { e.row };
    (s.row, last)
}

/// Whether a node only annotates the declaration after it.
fn is_preamble(node: Node<'_>) -> bool {
    let k = node.kind();
    k.contains("comment") || k == "attribute_item" || k == "decorator" || k == "annotation"
}

struct Walker<'s> {
    lang: CodeLanguage,
    src: &'s [u8],
    /// The symbols found, as headings of their first line (comments and attributes above
    /// them included).
    symbols: Vec<Heading>,
    /// Chunks as 0-based inclusive line ranges.
    spans: Vec<(usize, usize)>,
    /// Line ranges too large for one chunk, cut as paragraphs afterwards.
    oversized: Vec<(usize, usize)>,
    line_chars: Vec<usize>,
}

impl Walker<'_> {
    fn chars(&self, first: usize, last: usize) -> usize {
        self.line_chars.get(first..=last.min(self.line_chars.len().saturating_sub(1))).map_or(0, |l| l.iter().sum())
    }

    /// The symbol a child node declares: the node itself or the declaration a wrapper (an
    /// export, a decorator, a template) wraps, its role and its name.
    fn declared<'t>(&self, child: Node<'t>) -> Option<(Node<'t>, Role, String)> {
        let node = match role(self.lang, child.kind())? {
            Role::Wrapper => unwrap_wrapper(child)?,
            _ => child,
        };
        let role = role(self.lang, node.kind()).filter(|r| *r != Role::Wrapper)?;
        Some((node, role, name_of(self.lang, node, self.src)?))
    }

    /// Records a symbol at `depth` starting on 0-based line `first`; its path under `prefix`.
    fn record(&mut self, prefix: &str, name: &str, depth: usize, first: usize) -> String {
        let path = if prefix.is_empty() { name.to_string() } else { format!("{prefix}{}{name}", separator(self.lang)) };
        if depth < MAX_DEPTH {
            let level = u8::try_from(depth + 1).unwrap_or(6).min(6);
            self.symbols.push(Heading { level, start_line: first, end_line: first, text: path.clone(), atx: true });
        }
        path
    }

    /// Cuts the named children of `parent` into chunks, recording the symbols under `prefix`.
    /// `lead` (lines already taken, such as a container's head) starts the first chunk.
    fn cut(&mut self, parent: Node<'_>, prefix: &str, depth: usize, lead: Option<(usize, usize)>) {
        // The pending run of small pieces, as a line range.
        let mut run: Option<(usize, usize)> = lead;
        let mut next_free = lead.map_or(0, |(_, last)| last + 1);
        // Comments and attributes waiting for the declaration they annotate (first, last line).
        let mut preamble: Option<(usize, usize)> = None;
        let children: Vec<Node<'_>> = parent.named_children(&mut parent.walk()).collect();
        for child in children {
            let (first, last) = lines_of(child);
            if last < next_free {
                // On lines already taken (a member on its container's head line).
                continue;
            }
            let first = first.max(next_free);
            next_free = last + 1;
            if is_preamble(child) {
                preamble = Some((preamble.map_or(first, |(a, _)| a), last));
                continue;
            }
            let start = preamble.take().map_or(first, |(a, _)| a);
            let Some((node, role, name)) = self.declared(child) else {
                self.extend_run(&mut run, (start, last));
                continue;
            };
            let path = self.record(prefix, &name, depth, start);
            if self.chars(start, last) <= TARGET_CHARS {
                if role == Role::Container {
                    self.record_members(node, &path, depth + 1);
                }
                self.extend_run(&mut run, (start, last));
                continue;
            }
            // Too large for one chunk: what is pending leads it.
            let from = run.take().map_or(start, |(a, _)| a);
            match (role, node.child_by_field_name("body")) {
                (Role::Container, Some(body)) => {
                    let head_end = lines_of(body).0.max(start);
                    self.cut(body, &path, depth + 1, Some((from, head_end)));
                }
                _ => self.oversized.push((from, last)),
            }
        }
        // Comments at the end annotate nothing: they close the run.
        if let Some(p) = preamble {
            self.extend_run(&mut run, p);
        }
        if let Some(r) = run.take() {
            self.spans.push(r);
        }
    }

    /// Records the members of a container kept whole as symbols (no chunks of their own).
    fn record_members(&mut self, node: Node<'_>, prefix: &str, depth: usize) {
        if depth >= MAX_DEPTH {
            return;
        }
        let Some(body) = node.child_by_field_name("body") else { return };
        let mut preamble: Option<usize> = None;
        for child in body.named_children(&mut body.walk()) {
            let (first, _) = lines_of(child);
            if is_preamble(child) {
                preamble.get_or_insert(first);
                continue;
            }
            let start = preamble.take().unwrap_or(first);
            let Some((node, role, name)) = self.declared(child) else { continue };
            let path = self.record(prefix, &name, depth, start);
            if role == Role::Container {
                self.record_members(node, &path, depth + 1);
            }
        }
    }

    /// Adds a piece to the run, or closes the run and starts another when it would grow
    /// past the target.
    fn extend_run(&mut self, run: &mut Option<(usize, usize)>, piece: (usize, usize)) {
        *run = match *run {
            Some((a, _)) if self.chars(a, piece.1) <= TARGET_CHARS => Some((a, piece.1)),
            Some(r) => {
                self.spans.push(r);
                Some(piece)
            }
            None => Some(piece),
        };
    }
}

/// The symbol a passage of lines `start..=end` (1-based) belongs to: the innermost symbol
/// that starts in it, else the last one that starts before it. What a capsule's `heading`
/// and a code chunk's embedded text name.
fn symbol_of_lines(sections: &[super::Section], start: u32, end: u32) -> Option<&super::Section> {
    sections
        .iter()
        .filter(|s| (start..=end).contains(&s.line))
        .fold(None::<&super::Section>, |best, s| match best {
            Some(b) if b.level >= s.level => Some(b),
            _ => Some(s),
        })
        .or_else(|| sections.iter().rfind(|s| s.line <= start))
}

/// Parses a code file: its chunks and its symbols as sections; plain-text chunks where there
/// is no grammar or no tree.
pub fn parse_code(canonical: &str, rel_path: &str, lang: CodeLanguage) -> ParsedDoc {
    let idx = LineIndex::new(canonical);
    let title = rel_path.rsplit(['/', '\\']).find(|s| !s.is_empty()).unwrap_or(rel_path).to_string();
    let (chunks, symbols) = match syntax_chunks(canonical, &idx, lang) {
        Some(found) => found,
        None => (build_chunks(canonical, &idx, 1, &[], &[]), Vec::new()),
    };
    let sections = sections::build_sections(&symbols, 1);
    let chunks = chunks
        .into_iter()
        .map(|c| Chunk { symbol: symbol_of_lines(&sections, c.start_line, c.end_line).map(|s| s.title.clone()), ..c })
        .collect();
    ParsedDoc::without_metadata(title, canonical, chunks, sections)
}

/// The chunks and symbols of a file its grammar parses; `None` to fall back to plain text.
fn syntax_chunks(text: &str, idx: &LineIndex, lang: CodeLanguage) -> Option<(Vec<Chunk>, Vec<Heading>)> {
    if text.len() > MAX_PARSED_BYTES || idx.line_count() == 0 {
        return None;
    }
    let mut parser = Parser::new();
    parser.set_language(&grammar(lang)?).ok()?;
    let tree = parser.parse(text, None)?;
    let root = tree.root_node();
    let line_chars: Vec<usize> = (0..idx.line_count())
        .map(|l| text.get(idx.line_start(l)..idx.line_end(text, l)).map_or(0, |s| s.chars().count() + 1))
        .collect();
    let mut w = Walker {
        lang,
        src: text.as_bytes(),
        symbols: Vec::new(),
        spans: Vec::new(),
        oversized: Vec::new(),
        line_chars,
    };
    let last_line = idx.line_count() - 1;
    w.cut(root, "", 0, None);
    let mut spans = std::mem::take(&mut w.spans);
    // Oversized leaves: paragraph windows of their lines.
    for (first, last) in std::mem::take(&mut w.oversized) {
        let (start, end) = (idx.line_start(first), idx.line_end(text, last.min(last_line)));
        let Some(piece) = text.get(start..end) else { continue };
        let inner = LineIndex::new(piece);
        for c in build_chunks(piece, &inner, 0, &[], &[]) {
            spans.push((first + c.start_line as usize, first + c.end_line as usize));
        }
    }
    spans.sort_unstable();
    spans.dedup();
    let chunks = spans
        .into_iter()
        .filter(|&(a, b)| a <= b && b <= last_line)
        .filter_map(|(a, b)| {
            let t = text.get(idx.line_start(a)..idx.line_end(text, b))?;
            (!t.trim().is_empty()).then_some((a, b, t))
        })
        .enumerate()
        .map(|(seq, (a, b, t))| Chunk {
            seq: to_u32(seq),
            text: t.to_string(),
            start_line: to_u32(a + 1),
            end_line: to_u32(b + 1),
            symbol: None,
        })
        .collect();
    Some((chunks, w.symbols))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline(doc: &ParsedDoc) -> Vec<(u8, u32, &str)> {
        doc.sections.iter().map(|s| (s.level, s.line, s.title.as_str())).collect()
    }

    #[test]
    fn rust_items_impls_and_modules_are_symbols() {
        let src = "use std::fmt;\n\n/// A parser.\n#[derive(Debug)]\npub struct Parser {\n    pos: usize,\n}\n\nimpl Parser {\n    pub fn new() -> Self {\n        Parser { pos: 0 }\n    }\n\n    fn peek(&self) -> usize {\n        self.pos\n    }\n}\n\nimpl fmt::Display for Parser {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        write!(f, \"p\")\n    }\n}\n\nmod tests {\n    fn helper() {}\n}\n";
        let doc = parse_code(src, "src/parse.rs", CodeLanguage::Rust);
        assert_eq!(doc.title, "parse.rs");
        assert_eq!(
            outline(&doc),
            vec![
                (1, 3, "Parser"),
                (1, 9, "Parser"),
                (2, 10, "Parser::new"),
                (2, 14, "Parser::peek"),
                (1, 19, "Parser as fmt::Display"),
                (2, 20, "Parser as fmt::Display::fmt"),
                (1, 25, "tests"),
                (2, 26, "tests::helper"),
            ]
        );
        // A small file is one or two chunks, never cut inside an item.
        assert!(!doc.chunks.is_empty());
        for c in &doc.chunks {
            assert!(!c.text.starts_with("    "), "a chunk starts at an item: {c:?}");
        }
        assert_eq!(doc.chunks.first().map(|c| c.start_line), Some(1));
    }

    #[test]
    fn a_large_impl_is_cut_into_its_methods_and_the_doc_comment_stays_with_its_item() {
        let body = "        let x = 1;\n".repeat(40);
        let src = format!(
            "impl Engine {{\n    /// Starts it.\n    pub fn start(&self) {{\n{body}    }}\n\n    pub fn stop(&self) {{\n{body}    }}\n}}\n"
        );
        let doc = parse_code(&src, "engine.rs", CodeLanguage::Rust);
        let titles: Vec<&str> = doc.sections.iter().map(|s| s.title.as_str()).collect();
        assert_eq!(titles, vec!["Engine", "Engine::start", "Engine::stop"]);
        let starts: Vec<u32> = doc.chunks.iter().map(|c| c.start_line).collect();
        assert_eq!(starts[0], 1, "the impl's head leads: {starts:?}");
        let stop_line = doc.sections[2].line;
        assert!(starts.contains(&stop_line), "stop starts a chunk: {starts:?} vs {stop_line}");
        let start_chunk = &doc.chunks[0];
        assert!(start_chunk.text.contains("/// Starts it.\n    pub fn start"), "{}", start_chunk.text);
        for c in &doc.chunks {
            assert!(c.text.chars().count() <= 2 * TARGET_CHARS, "{}", c.text.len());
        }
    }

    #[test]
    fn python_classes_methods_and_decorators() {
        let src = "import os\n\n@dataclass\nclass Hive:\n    \"\"\"A hive.\"\"\"\n\n    def inspect(self):\n        return os.getcwd()\n\n    @staticmethod\n    def count():\n        return 4\n\ndef main():\n    Hive().inspect()\n";
        let doc = parse_code(src, "bees/hive.py", CodeLanguage::Python);
        assert_eq!(outline(&doc), vec![(1, 3, "Hive"), (2, 7, "Hive.inspect"), (2, 10, "Hive.count"), (1, 14, "main")]);
    }

    #[test]
    fn javascript_typescript_go_java_c_cpp_and_shell_symbols() {
        let cases: [(CodeLanguage, &str, &[&str]); 8] = [
            (
                CodeLanguage::JavaScript,
                "export function load(x) { return x; }\nconst save = (y) => y;\nclass Store { get(k) { return k; } }\n",
                &["load", "save", "Store", "Store.get"],
            ),
            (
                CodeLanguage::TypeScript,
                "interface Point { x: number }\nexport class Grid { cell(p: Point): number { return p.x; } }\ntype Id = string;\n",
                &["Point", "Grid", "Grid.cell", "Id"],
            ),
            (
                CodeLanguage::Go,
                "package main\n\ntype Queue struct{}\n\nfunc (q *Queue) Push(v int) {}\n\nfunc main() {}\n",
                &["Queue", "Queue.Push", "main"],
            ),
            (
                CodeLanguage::Java,
                "class Farm {\n  Farm() {}\n  int yield(int t) { return t; }\n}\n",
                &["Farm", "Farm.Farm", "Farm.yield"],
            ),
            (CodeLanguage::C, "struct node { int v; };\nstatic int *find(struct node *n) { return 0; }\n", &["node", "find"]),
            (
                CodeLanguage::Cpp,
                "namespace geo {\nclass Shape { public: double area() const { return 0; } };\n}\ndouble geo::Shape::perimeter() const { return 1; }\n",
                &["geo", "geo::Shape", "geo::Shape::area", "geo::Shape::perimeter"],
            ),
            (CodeLanguage::Shell, "#!/bin/sh\nbackup() {\n  tar czf x.tgz .\n}\n", &["backup"]),
            (CodeLanguage::Tsx, "export const App = () => <div>hi</div>;\n", &["App"]),
        ];
        for (lang, src, want) in cases {
            let doc = parse_code(src, "f", lang);
            let got: Vec<&str> = doc.sections.iter().map(|s| s.title.as_str()).collect();
            assert_eq!(got, want.to_vec(), "{lang:?}");
            assert!(!doc.chunks.is_empty(), "{lang:?}");
        }
    }

    #[test]
    fn languages_without_a_grammar_and_broken_code_are_chunked_as_text() {
        let sql = "SELECT 1;\n\nSELECT 2;\n";
        let doc = parse_code(sql, "q.sql", CodeLanguage::Sql);
        assert!(doc.sections.is_empty());
        assert_eq!(doc.chunks.len(), 1);
        let broken = "fn ok() {}\nfn broken( {\n";
        let doc = parse_code(broken, "b.rs", CodeLanguage::Rust);
        assert!(!doc.chunks.is_empty());
        let all: String = doc.chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join("\n");
        assert!(all.contains("fn ok") && all.contains("broken"), "{all}");
        assert!(parse_code("", "e.rs", CodeLanguage::Rust).chunks.is_empty());
    }
}
