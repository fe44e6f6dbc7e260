//! The BM25 index (tantivy): one entry per active document, derived from the catalog.

use crate::stores::DocKey;
use protocol::SearchFilters;
use query::KeywordQuery;
use std::collections::HashSet;
use std::ops::Bound;
use std::path::Path;
use std::sync::Mutex;
use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery, TermSetQuery,
};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, Value, FAST, INDEXED, STORED,
    STRING,
};
use tantivy::tokenizer::{Language, LowerCaser, RemoveLongFilter, StopWordFilter, TextAnalyzer, Token};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

mod language;
pub mod query;
mod ranking;
pub use language::{folder_language, KeywordLanguage, Stemming};
use ranking::{Choice, FieldShares, Ranking, Share};
mod stems;
mod words;

// The analyzers' names are part of the schema: an index made with other analyzers is rebuilt
// from the catalog when it is opened ([`Bm25Index::open`]). `_cjk`: Chinese, Japanese and
// Korean text in pairs of characters (`words`); `_dict`: Thai, Lao, Khmer and Burmese cut
// into words by a dictionary (`words`); `lang_stem`: stems by the text's language
// (`language`); `svc_stems_tagged`: a body's stems, told and stemmed by `entry` (`stems`),
// another language's than English's behind its tag (`de:entwickl`).
const STEMMED: &str = "svc_lang_stem_cjk_dict";
const STEMS: &str = "svc_stems_tagged";
const PLAIN: &str = "svc_plain_cjk_dict";
/// [`STEMMED`] without its stemmer: the words of a body, which `entry` stems by the body's
/// language, and of a query, whose words are looked for in every language's stem
/// (`language::variants`). Not a field's analyzer.
const WORDS: &str = "svc_words";
const WRITER_HEAP: usize = 64 * 1024 * 1024;

/// Relative weights of the fields in the ranking, tuned on the SciFact train split
/// (`scripts/eval`, nDCG@10): body only 0.695; title 2 / body 1 (plus plain and path) 0.620;
/// title 1 / body 1 0.664; these weights 0.702. The body already holds the note's H1, so a
/// large title weight counts the title twice; `docs/retrieval.md` has the table.
#[derive(Debug, Clone, Copy)]
pub struct FieldWeights {
    pub title: f32,
    pub title_plain: f32,
    pub body: f32,
    pub body_plain: f32,
    pub path: f32,
}

/// `body_plain` ranks inside the body's clause (the word as written, one choice of each word's
/// disjunction beside its stems: [`TIE_BREAKER`]), not as a field of its own; it was 0.1 here.
pub const WEIGHTS: FieldWeights = FieldWeights { title: 0.25, title_plain: 0.0, body: 1.0, body_plain: 0.0, path: 0.1 };

/// How much each choice of a body word's disjunction (its stems, the word as written) adds
/// besides the best one. Chosen on SciFact (nDCG@10): 0.1 0.7040, 0.2 0.7032, 0.3 0.7009;
/// before the word as written was a choice (its plain-text field at weight 0.1 beside the
/// stems' pure maximum) 0.7021. docs/retrieval.md has the vault's figures beside them.
const TIE_BREAKER: f32 = 0.1;

/// The weight of a stop word of the query, matched as written in the body's plain text (the
/// plain field's weight before it ranked inside the body's clause).
const STOP_WORD_WEIGHT: f32 = 0.1;

#[derive(Debug, thiserror::Error)]
pub enum Bm25Error {
    #[error("bm25 index failed: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error("bm25 index directory failed: {0}")]
    Dir(#[from] tantivy::directory::error::OpenDirectoryError),
    #[error("bm25 index i/o failed: {0}")]
    Io(#[from] std::io::Error),
}

crate::errors::internal_errors!(Bm25Error);

#[derive(Clone, Copy)]
struct Fields {
    key: Field,
    collection: Field,
    title: Field,
    title_plain: Field,
    body: Field,
    body_plain: Field,
    path: Field,
    tags: Field,
    categories: Field,
    modified: Field,
    /// The language the body is stemmed by (`language::Stemming::code`).
    language: Field,
}

/// How much a query word's stem in another language than the query's own counts, against
/// its stem in the query's language (when the query's language is told or its words tell it).
const OTHER_LANGUAGE_WEIGHT: f32 = 0.5;

/// The languages a query's words are looked for in ([`Bm25Index::query_languages`]).
struct QueryLanguages {
    /// Stemmed in besides English.
    stemmed: Vec<language::Stemming>,
    /// The query's own language, when known: its stems count in full, the others' less.
    own: Option<language::Stemming>,
}

/// What the index stores about one document (under its key: [`Bm25Index::put`]).
pub struct Bm25Doc<'a> {
    pub collection: &'a str,
    pub title: &'a str,
    pub body: &'a str,
    pub rel_path: &'a str,
    pub tags: &'a [String],
    pub categories: &'a [String],
    pub modified_ms: i64,
    /// The language the note declares (front matter `lang`), which wins over the one its text
    /// tells.
    pub declared_language: Option<&'a str>,
    /// The language of the notes beside it in its folder ([`language::folder_language`]), asked
    /// only of a note too short to tell its own.
    pub folder_language: &'a dyn Fn() -> Option<Stemming>,
}

/// One document's entry, its languages told and its words stemmed ([`Bm25Index::entry`]: the
/// costly part, on any thread), to be put under its key ([`Bm25Index::put`]).
pub struct Bm25Entry {
    doc: TantivyDocument,
    language: KeywordLanguage,
}

impl Bm25Entry {
    /// What was read of the note's language (the catalog keeps it for the notes beside it).
    pub fn language(&self) -> KeywordLanguage {
        self.language
    }
}

pub struct Bm25Index {
    index: Index,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    fields: Fields,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let stemmed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(STEMMED).set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let plain = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(PLAIN).set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let stems = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(STEMS).set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let key = b.add_i64_field("key", NumericOptions::default() | INDEXED | STORED | FAST);
    let collection = b.add_text_field("collection", STRING);
    let title = b.add_text_field("title", stemmed);
    let title_plain = b.add_text_field("title_plain", plain.clone());
    let body = b.add_text_field("body", stems);
    let body_plain = b.add_text_field("body_plain", plain.clone());
    let path = b.add_text_field("path", plain);
    let tags = b.add_text_field("tags", STRING);
    let categories = b.add_text_field("categories", STRING);
    let modified = b.add_i64_field("modified", NumericOptions::default() | INDEXED | FAST);
    let language = b.add_text_field("language", STRING);
    let fields =
        Fields { key, collection, title, title_plain, body, body_plain, path, tags, categories, modified, language };
    (b.build(), fields)
}

fn register_tokenizers(index: &Index) {
    // Words without stop words, then (for the stemmed fields) stems by the text's language.
    let words = || {
        let words = TextAnalyzer::builder(words::WordsTokenizer)
            .filter(RemoveLongFilter::limit(40))
            .filter(LowerCaser)
            .dynamic();
        match StopWordFilter::new(Language::English) {
            Some(stop) => words.filter_dynamic(stop),
            None => words,
        }
    };
    index.tokenizers().register(WORDS, words().build());
    index.tokenizers().register(STEMMED, words().filter_dynamic(language::LanguageStemmer).build());
    index.tokenizers().register(STEMS, TextAnalyzer::from(stems::StemsTokenizer));
    let plain =
        TextAnalyzer::builder(words::WordsTokenizer).filter(RemoveLongFilter::limit(40)).filter(LowerCaser).build();
    index.tokenizers().register(PLAIN, plain);
}

/// The tokens `analyzer` cuts `text` into.
fn tokens_of(mut analyzer: TextAnalyzer, text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        out.push(stream.token().clone());
    }
    out
}

impl Bm25Index {
    /// Opens the index at `dir`, creating it when absent. An index that cannot be opened
    /// (corrupt, other schema) is discarded and recreated: the second value is then
    /// `true` and the caller must re-feed everything from the catalog.
    pub fn open(dir: &Path) -> Result<(Self, bool), Bm25Error> {
        std::fs::create_dir_all(dir)?;
        let (schema, fields) = schema();
        let existing = dir.join("meta.json").exists();
        let mut rebuilt = !existing;
        let index = if existing {
            match Index::open_in_dir(dir) {
                Ok(i) if i.schema() == schema => i,
                _ => {
                    tracing::warn!("bm25 index unusable; rebuilding from the catalog");
                    std::fs::remove_dir_all(dir)?;
                    std::fs::create_dir_all(dir)?;
                    rebuilt = true;
                    Index::create_in_dir(dir, schema)?
                }
            }
        } else {
            Index::create_in_dir(dir, schema)?
        };
        register_tokenizers(&index);
        // Made on a background thread: its threads (the indexing worker, the segment updater,
        // the merges and the doc store's compressor) start at the background priority, so a
        // sync's keyword work yields a core to the reads beside it. (A commit makes the next
        // indexing worker on the committing thread: a job's is at that priority too.)
        let writer = crate::background::run_at_background_priority("bm25-writer-open", || {
            index.writer_with_num_threads(1, WRITER_HEAP)
        })?;
        // A commit cut short by a kill leaves files that meta.json never named (a segment's
        // `.del` file of an opstamp the next commit reuses, say): writing that name again
        // fails, and the worker with it, start after start. They are garbage: collect them
        // before the first write.
        if let Err(e) = writer.garbage_collect_files().wait() {
            tracing::warn!("bm25 index: could not collect leftover files: {e}");
        }
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok((Bm25Index { index, reader, writer: Mutex::new(writer), fields }, rebuilt))
    }

    fn writer(&self) -> std::sync::MutexGuard<'_, IndexWriter> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `doc`'s entry: its text told and stemmed, not yet in the index.
    pub fn entry(&self, doc: &Bm25Doc<'_>) -> Bm25Entry {
        let f = &self.fields;
        let mut d = TantivyDocument::default();
        d.add_text(f.collection, doc.collection);
        d.add_text(f.title, doc.title);
        d.add_text(f.title_plain, doc.title);
        // The body's languages are told once: for its stems and for the `language` field. A
        // declared language is the whole note's; else each paragraph that tells its own has it.
        // A body too short to tell is also indexed under the stems of the languages it is
        // likely in: its text's (`language::guesses`) and its folder's.
        let (parts, guesses, read) = match doc.declared_language.and_then(language::Stemming::declared) {
            Some(declared) => (vec![(0..doc.body.len(), declared)], Vec::new(), KeywordLanguage::Told(declared)),
            None if language::is_short(doc.body) => {
                let folder = (doc.folder_language)();
                let mut guesses = language::guesses(doc.body);
                if let Some(f) = folder.filter(|f| !guesses.contains(f)) {
                    guesses.push(f);
                }
                (language::parts(doc.body), guesses, KeywordLanguage::Short { folder })
            }
            None => {
                let (parts, told) = language::parts_and_told(doc.body);
                (parts, Vec::new(), told.map_or(KeywordLanguage::Untold, KeywordLanguage::Told))
            }
        };
        d.add_text(f.body, self.stems(doc.body, &parts, &guesses));
        d.add_text(f.body_plain, doc.body);
        d.add_text(f.path, doc.rel_path);
        for t in doc.tags {
            d.add_text(f.tags, t);
        }
        for c in doc.categories {
            d.add_text(f.categories, c);
        }
        d.add_i64(f.modified, doc.modified_ms);
        let mut codes: Vec<&str> =
            parts.iter().map(|(_, s)| s.code()).chain(guesses.iter().map(|g| g.code())).collect();
        codes.sort_unstable();
        codes.dedup();
        if codes.is_empty() {
            codes.push(language::Stemming::English.code());
        }
        for code in codes {
            d.add_text(f.language, code);
        }
        Bm25Entry { doc: d, language: read }
    }

    /// Replaces the entry of `key` with `entry` (delete, then add). Visible after [`commit`].
    pub fn put(&self, key: DocKey, entry: Bm25Entry) -> Result<(), Bm25Error> {
        let Bm25Entry { doc: mut d, .. } = entry;
        d.add_i64(self.fields.key, key.0);
        let w = self.writer();
        w.delete_term(Term::from_field_i64(self.fields.key, key.0));
        w.add_document(d)?;
        Ok(())
    }

    pub fn delete(&self, key: DocKey) {
        self.writer().delete_term(Term::from_field_i64(self.fields.key, key.0));
    }

    /// Commits pending changes and makes them visible to searches.
    pub fn commit(&self) -> Result<(), Bm25Error> {
        self.writer().commit()?;
        self.reader.reload()?;
        Ok(())
    }

    /// Documents in the index as of the last commit.
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The languages the indexed documents are stemmed by.
    fn languages(&self) -> Vec<language::Stemming> {
        let searcher = self.reader.searcher();
        language::Stemming::ALL
            .iter()
            .copied()
            .filter(|l| searcher.doc_freq(&Term::from_field_text(self.fields.language, l.code())).unwrap_or(0) > 0)
            .collect()
    }

    /// The tokens of `text` through the analyzer registered as `name` (none when it is not).
    fn tokens(&self, name: &str, text: &str) -> Vec<Token> {
        self.index.tokenizers().get(name).map_or_else(Vec::new, |analyzer| tokens_of(analyzer, text))
    }

    /// `text`'s words as the stemmed analyzer cuts them, each stemmed by the stemming of the
    /// part it stands in (`parts`: in text order, covering the text; told by the caller), and
    /// also, at the same position, by each of `also` where that stem differs: the `body`
    /// field's value ([`stems::StemsText`]).
    fn stems(
        &self,
        text: &str,
        parts: &[(std::ops::Range<usize>, language::Stemming)],
        also: &[language::Stemming],
    ) -> String {
        let mut out = stems::StemsText::with_capacity(text.len());
        let Some(mut analyzer) = self.index.tokenizers().get(WORDS) else { return out.into_string() };
        let mut stream = analyzer.token_stream(text);
        let mut part = parts.iter().peekable();
        while stream.advance() {
            let t = stream.token();
            while part.peek().is_some_and(|(range, _)| range.end <= t.offset_from) && part.len() > 1 {
                part.next();
            }
            let Some((_, stemming)) = part.peek() else { break };
            out.word(t.position, stemming.tag(), &stemming.stem(&t.text));
            // The other languages' stems, from the word as written, each behind its tag.
            for other in also.iter().filter(|other| *other != stemming) {
                out.stacked(other.tag(), &other.stem(&t.text));
            }
        }
        out.into_string()
    }

    /// The words of `text` as `field`'s analyzer gives them.
    fn analyze(&self, field: Field, text: &str) -> Vec<String> {
        let tokens = self.index.tokenizer_for_field(field).map_or_else(|_| Vec::new(), |a| tokens_of(a, text));
        tokens.into_iter().map(|t| t.text).collect()
    }

    /// The languages a query's words are stemmed in besides English ([`language::variants`]),
    /// and the query's own language when it is known: the one the query is told to be in
    /// (`lang`) when it has a stemmer here, alone; else every language the index holds, and
    /// the one the query's words tell, if they tell one ([`language::of_query`]).
    fn query_languages(&self, q: &KeywordQuery) -> QueryLanguages {
        match q.language.as_deref().and_then(language::Stemming::declared) {
            Some(language) => QueryLanguages { stemmed: vec![language], own: Some(language) },
            None => QueryLanguages { stemmed: self.languages(), own: language::of_query(&q.words) },
        }
    }

    fn words_query(
        &self,
        field: Field,
        words: &[String],
        languages: &QueryLanguages,
        weight: f32,
    ) -> Option<Box<dyn Query>> {
        self.field_shares(field, words, languages, weight).query(TIE_BREAKER)
    }

    /// The query words' shares of `field`'s score, at the field's `weight`.
    fn field_shares(&self, field: Field, words: &[String], languages: &QueryLanguages, weight: f32) -> FieldShares {
        let term = |t: &str| Term::from_field_text(field, t);
        let f = self.fields;
        let mut shares: Vec<Share> = Vec::new();
        for w in words {
            if field != f.body && field != f.title {
                shares.extend(self.analyze(field, w).iter().map(|t| Share::Term(Choice::new(term(t), 1.0))));
                continue;
            }
            // A stemmed field holds each document's words stemmed by its own language: the
            // word matches by the best of its stems in the languages the index holds (one
            // score, not one per language). The body's stems carry their language's tag, and
            // a stem of another language than the query's own counts for less. A title is
            // short, so it is stemmed as English (`language::LanguageStemmer`): a word is
            // looked for there by its English stem alone.
            // In the body the word as written is one more of the choices, in the plain text:
            // rarer than its stem, it scores higher where it stands, so a note holding the
            // word itself outranks one holding another form of it. The best choice scores,
            // and [`TIE_BREAKER`] of each other one (issue 60, docs/retrieval.md).
            let toks: Vec<String> = self.tokens(WORDS, w).into_iter().map(|t| t.text).collect();
            let stemmed_in: &[language::Stemming] = if field == f.body { &languages.stemmed } else { &[] };
            if field == f.body {
                // A stop word has no stem: it is matched as written in the plain text, at the
                // weight the plain field had ("to be or not to be" still finds its note).
                for plain in self.analyze(f.body_plain, w).into_iter().filter(|p| !toks.contains(p)) {
                    let exact = Term::from_field_text(f.body_plain, &plain);
                    shares.push(Share::Term(Choice::new(exact, STOP_WORD_WEIGHT)));
                }
            }
            for tok in toks {
                let mut choices: Vec<Choice> = language::variants(&tok, stemmed_in)
                    .into_iter()
                    .map(|(language, stem)| {
                        let boost = match languages.own {
                            Some(own) if own != language => OTHER_LANGUAGE_WEIGHT,
                            _ => 1.0,
                        };
                        Choice::new(term(&language.tagged(&stem)), boost)
                    })
                    .collect();
                if field == f.body {
                    choices.push(Choice::new(Term::from_field_text(f.body_plain, &tok), 1.0));
                }
                shares.push(Share::Best(choices));
            }
        }
        FieldShares { weight, shares }
    }

    fn phrase_query(&self, text: &str) -> Option<Box<dyn Query>> {
        let f = self.fields;
        let mut options: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for field in [f.body_plain, f.title_plain] {
            let toks = self.analyze(field, text);
            let q: Box<dyn Query> = match toks.len() {
                0 => continue,
                1 => Box::new(TermQuery::new(Term::from_field_text(field, &toks[0]), IndexRecordOption::WithFreqs)),
                _ => Box::new(PhraseQuery::new(toks.iter().map(|t| Term::from_field_text(field, t)).collect())),
            };
            options.push((Occur::Should, q));
        }
        if options.is_empty() {
            None
        } else {
            Some(Box::new(BooleanQuery::new(options)))
        }
    }

    fn filter_query(&self, filters: &SearchFilters) -> Vec<(Occur, Box<dyn Query>)> {
        let f = self.fields;
        let zero = |q: Box<dyn Query>| -> Box<dyn Query> { Box::new(BoostQuery::new(q, 0.0)) };
        let term = |field: Field, v: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(Term::from_field_text(field, v), IndexRecordOption::Basic))
        };
        let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        if let Some(c) = &filters.collection {
            out.push((Occur::Must, zero(term(f.collection, c))));
        }
        for t in &filters.tags_all {
            out.push((Occur::Must, zero(term(f.tags, t))));
        }
        if !filters.tags_any.is_empty() {
            let any = filters.tags_any.iter().map(|t| (Occur::Should, term(f.tags, t))).collect();
            out.push((Occur::Must, zero(Box::new(BooleanQuery::new(any)))));
        }
        if !filters.categories.is_empty() {
            let any = filters.categories.iter().map(|c| (Occur::Should, term(f.categories, c))).collect();
            out.push((Occur::Must, zero(Box::new(BooleanQuery::new(any)))));
        }
        if !filters.languages.is_empty() {
            let any =
                filters.languages.iter().map(|l| (Occur::Should, term(f.categories, &language_category(*l)))).collect();
            out.push((Occur::Must, zero(Box::new(BooleanQuery::new(any)))));
        }
        if filters.since_ms.is_some() || filters.until_ms.is_some() {
            let lo =
                filters.since_ms.map_or(Bound::Unbounded, |v| Bound::Included(Term::from_field_i64(f.modified, v)));
            let hi =
                filters.until_ms.map_or(Bound::Unbounded, |v| Bound::Included(Term::from_field_i64(f.modified, v)));
            out.push((Occur::Must, zero(Box::new(RangeQuery::new(lo, hi)))));
        }
        out
    }

    /// Top `limit` documents for the query under the filters: `(raw score, key)`, best first.
    pub fn search(
        &self,
        q: &KeywordQuery,
        filters: &SearchFilters,
        limit: usize,
    ) -> Result<Vec<(f32, DocKey)>, Bm25Error> {
        let f = self.fields;
        let w = WEIGHTS;
        let all_words: Vec<String> = q.words.iter().chain(q.phrases.iter()).cloned().collect();
        let languages = self.query_languages(q);
        let mut fields: Vec<FieldShares> = Vec::new();
        for (field, weight) in [
            (f.title, w.title),
            (f.title_plain, w.title_plain),
            (f.body, w.body),
            (f.body_plain, w.body_plain),
            (f.path, w.path),
        ] {
            if weight > 0.0 {
                fields.push(self.field_shares(field, &all_words, &languages, weight));
            }
        }
        let ranking = Ranking::new(fields, TIE_BREAKER);
        if ranking.is_empty() {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for p in &q.phrases {
            match self.phrase_query(p) {
                Some(pq) => clauses.push((Occur::Must, Box::new(BoostQuery::new(pq, 0.0)))),
                None => return Ok(Vec::new()),
            }
        }
        for x in &q.excluded {
            if let Some(xq) = self.phrase_query(x) {
                clauses.push((Occur::MustNot, xq));
            }
        }
        clauses.extend(self.filter_query(filters));
        let searcher = self.reader.searcher();
        let collector = TopDocs::with_limit(limit.max(1)).order_by_score();
        // The ranking alone finds its top documents without visiting every match (`ranking`);
        // with phrases, exclusions or filters beside it, tantivy visits them.
        let top = if clauses.is_empty() {
            searcher.search(&ranking, &collector)?
        } else {
            clauses.insert(0, (Occur::Must, ranking.exhaustive()));
            searcher.search(&BooleanQuery::new(clauses), &collector)?
        };
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr)?;
            if let Some(key) = doc.get_first(f.key).and_then(|v| v.as_i64()) {
                out.push((score, DocKey(key)));
            }
        }
        Ok(out)
    }

    /// How many of the query's words each of `keys` holds, in any field the ranking reads
    /// (title, body, path): a stop word counts for nothing, a word matches by its stems as the
    /// ranking's does. A key that holds none is left out.
    pub fn coverage(
        &self,
        q: &KeywordQuery,
        keys: &[DocKey],
    ) -> Result<std::collections::HashMap<DocKey, usize>, Bm25Error> {
        let f = self.fields;
        let mut out = std::collections::HashMap::new();
        if keys.is_empty() {
            return Ok(out);
        }
        let languages = self.query_languages(q);
        let searcher = self.reader.searcher();
        let mut words: Vec<&String> = Vec::new();
        for w in q.words.iter().chain(q.phrases.iter()) {
            if !words.contains(&w) {
                words.push(w);
            }
        }
        for word in words {
            if self.tokens(WORDS, word).is_empty() {
                continue; // a stop word
            }
            let one = std::slice::from_ref(word);
            // The body's clause holds the word as written (the plain text) beside its stems.
            let fields: Vec<(Occur, Box<dyn Query>)> = [f.title, f.body, f.path]
                .into_iter()
                .filter_map(|field| self.words_query(field, one, &languages, 1.0))
                .map(|q| (Occur::Should, q))
                .collect();
            if fields.is_empty() {
                continue;
            }
            let among = TermSetQuery::new(keys.iter().map(|k| Term::from_field_i64(f.key, k.0)));
            let query = BooleanQuery::new(vec![
                (Occur::Must, Box::new(BooleanQuery::new(fields)) as Box<dyn Query>),
                (Occur::Must, Box::new(among)),
            ]);
            for addr in searcher.search(&query, &DocSetCollector)? {
                let doc: TantivyDocument = searcher.doc(addr)?;
                if let Some(key) = doc.get_first(f.key).and_then(|v| v.as_i64()) {
                    *out.entry(DocKey(key)).or_insert(0) += 1;
                }
            }
        }
        Ok(out)
    }

    /// How rare each word is in the index: its inverse document frequency in the plain body
    /// text, as BM25 weighs it (`ln(1 + (N - df + 0.5) / (df + 0.5))`); a word the index never
    /// saw weighs most. A word its analyzer splits weighs as its rarest part.
    pub fn rarity(&self, words: &[String]) -> Vec<f64> {
        let searcher = self.reader.searcher();
        let n = searcher.num_docs() as f64;
        let idf = |df: f64| (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        words
            .iter()
            .map(|w| {
                self.analyze(self.fields.body_plain, w)
                    .iter()
                    .map(|t| searcher.doc_freq(&Term::from_field_text(self.fields.body_plain, t)).unwrap_or(0) as f64)
                    .map(idf)
                    .reduce(f64::max)
                    .unwrap_or_else(|| idf(0.0))
            })
            .collect()
    }

    /// Keys of every document that passes the filters, or `None` when there are no filters.
    /// Other retrievals (vector) use this so that the filter rules live in one place.
    pub fn filter_keys(&self, filters: &SearchFilters) -> Result<Option<HashSet<DocKey>>, Bm25Error> {
        let clauses = self.filter_query(filters);
        if clauses.is_empty() {
            return Ok(None);
        }
        let mut all: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(AllQuery))];
        all.extend(clauses);
        let searcher = self.reader.searcher();
        let addrs = searcher.search(&BooleanQuery::new(all), &DocSetCollector)?;
        let mut keys = HashSet::with_capacity(addrs.len());
        for addr in addrs {
            let doc: TantivyDocument = searcher.doc(addr)?;
            if let Some(key) = doc.get_first(self.fields.key).and_then(|v| v.as_i64()) {
                keys.insert(DocKey(key));
            }
        }
        Ok(Some(keys))
    }
}

/// The filter term of a code language among a document's categories in the keyword index
/// (`language:rust`): what the search `language` filter matches.
pub fn language_category(lang: protocol::source_kind::CodeLanguage) -> String {
    format!("language:{}", lang.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(key: i64, title: &'a str, body: &'a str, tags: &'a [String]) -> (DocKey, Bm25Doc<'a>) {
        let doc = Bm25Doc {
            collection: "notes",
            title,
            body,
            rel_path: "a.md",
            tags,
            categories: &[],
            modified_ms: key * 1000,
            declared_language: None,
            folder_language: &|| None,
        };
        (DocKey(key), doc)
    }

    fn upsert(idx: &Bm25Index, (key, doc): (DocKey, Bm25Doc<'_>)) {
        idx.put(key, idx.entry(&doc)).unwrap();
    }

    /// What a commit killed half way leaves: `.del` files meta.json never named, registered as
    /// managed. The next start must still be able to delete and commit.
    #[test]
    fn leftovers_of_a_killed_commit_do_not_block_the_next_one() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (idx, _) = Bm25Index::open(dir.path()).unwrap();
            upsert(&idx, doc(1, "Kettle", "descale the kettle", &[]));
            upsert(&idx, doc(2, "Tea", "steep the leaves", &[]));
            idx.commit().unwrap();
        }
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("meta.json")).unwrap()).unwrap();
        let segment = meta["segments"][0]["segment_id"].as_str().unwrap().replace('-', "");
        let managed_path = dir.path().join(".managed.json");
        let mut managed: Vec<String> = serde_json::from_str(&std::fs::read_to_string(&managed_path).unwrap()).unwrap();
        for opstamp in 0..64 {
            let name = format!("{segment}.{opstamp}.del");
            std::fs::write(dir.path().join(&name), b"half written").unwrap();
            managed.push(name);
        }
        std::fs::write(&managed_path, serde_json::to_vec(&managed).unwrap()).unwrap();

        let (idx, rebuilt) = Bm25Index::open(dir.path()).unwrap();
        assert!(!rebuilt);
        idx.delete(DocKey(1));
        idx.commit().expect("the commit after a killed one succeeds");
        assert_eq!(idx.num_docs(), 1);
    }

    #[test]
    fn a_query_told_its_language_is_stemmed_by_it_and_english_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (idx, _) = Bm25Index::open(dir.path()).unwrap();
        let (en, roads) = doc(1, "Roads", "the developments of the road", &[]);
        upsert(&idx, (en, Bm25Doc { declared_language: Some("en"), ..roads }));
        let (es, proyecto) = doc(2, "Proyecto", "los desarrollos del proyecto", &[]);
        upsert(&idx, (es, Bm25Doc { declared_language: Some("es"), ..proyecto }));
        idx.commit().unwrap();
        let keys = |text: &str, lang: Option<&str>| -> Vec<i64> {
            let q = KeywordQuery::parse(text).unwrap().in_language(lang);
            idx.search(&q, &SearchFilters::default(), 10).unwrap().into_iter().map(|(_, k)| k.0).collect()
        };
        assert_eq!(keys("desarrollo", None), [2], "not told: every language's stem");
        assert_eq!(keys("desarrollo", Some("auto")), [2]);
        assert_eq!(keys("desarrollo", Some("xx")), [2], "a language without a stemmer here: as if not told");
        assert_eq!(keys("desarrollo", Some("es-MX")), [2]);
        assert!(keys("desarrollo", Some("de")).is_empty(), "told German: no Spanish stem");
        // English stems stay: a note whose language is not told is stemmed as English.
        assert_eq!(keys("developing", Some("de")), [1]);
    }

    /// Issue 60: a word of one language is not found through another language's word that
    /// shares its stem (Spanish "activarse" and English "active" both stem to "activ"), and a
    /// stem in the query's own language outranks another language's.
    #[test]
    fn a_stem_is_found_by_the_words_of_its_own_language() {
        let dir = tempfile::tempdir().unwrap();
        let (idx, _) = Bm25Index::open(dir.path()).unwrap();
        for (key, title, body, lang) in [
            (1, "Activo", "El modo puede activarse desde el menú.", "es"),
            (5, "Modo", "Activar el modo: activar, activado, activa.", "es"),
            (2, "Active", "The active window and the active tab, active by default.", "en"),
            (3, "Aktiv", "Die Entwicklung ist aktiv und die Entwicklungen gehen weiter.", "de"),
            (4, "Roads", "Development of roads: the developments go on.", "en"),
        ] {
            let (k, d) = doc(key, title, body, &[]);
            upsert(&idx, (k, Bm25Doc { declared_language: Some(lang), ..d }));
        }
        idx.commit().unwrap();
        let keys = |text: &str, lang: Option<&str>| -> Vec<i64> {
            let q = KeywordQuery::parse(text).unwrap().in_language(lang);
            idx.search(&q, &SearchFilters::default(), 10).unwrap().into_iter().map(|(_, k)| k.0).collect()
        };
        assert_eq!(keys("activarse", Some("es")), [1, 5], "the Spanish stem only, the word itself first");
        assert_eq!(keys("activarse", None), [1, 5], "every language's stem, each in its own language");
        assert_eq!(keys("active", Some("en")), [2]);
        assert_eq!(keys("Entwicklung", None), [3]);
        assert_eq!(keys("developments", None), [4]);
        // The question's own words tell German: its German stem counts in full.
        let q = KeywordQuery::parse("wie ist die Entwicklung").unwrap();
        let languages = idx.query_languages(&q);
        assert_eq!(languages.own, Some(language::Stemming::German));
    }

    #[test]
    fn coverage_counts_the_query_words_each_document_holds() {
        let dir = tempfile::tempdir().unwrap();
        let (idx, _) = Bm25Index::open(dir.path()).unwrap();
        upsert(&idx, doc(1, "Meeting notes", "Notes of the budget meeting.", &[]));
        upsert(&idx, doc(2, "Shopping", "Notes for the store.", &[]));
        upsert(&idx, doc(3, "Travel", "Trains and ferries.", &[]));
        idx.commit().unwrap();
        let q = KeywordQuery::parse("the meetings notes").unwrap();
        let got = idx.coverage(&q, &[DocKey(1), DocKey(2), DocKey(3)]).unwrap();
        assert_eq!(got.get(&DocKey(1)), Some(&2), "both words, by their stems; 'the' is no word");
        assert_eq!(got.get(&DocKey(2)), Some(&1));
        assert_eq!(got.get(&DocKey(3)), None);
        let only_two = idx.coverage(&q, &[DocKey(2)]).unwrap();
        assert_eq!(only_two.len(), 1, "only the keys asked about: {only_two:?}");
    }

    /// A body's stems reach the index as [`stems::StemsText`]: each paragraph's in its own
    /// language, a short note's guessed ones beside its English ones, phrases still found in
    /// the words as written.
    #[test]
    fn a_bodys_stems_are_indexed_by_its_languages() {
        let dir = tempfile::tempdir().unwrap();
        let (idx, _) = Bm25Index::open(dir.path()).unwrap();
        let short = "Die Entwicklungen der Kinder sind erstaunlich.\nWir sprechen morgen darüber.";
        upsert(&idx, doc(1, "Kinder", short, &[]));
        upsert(&idx, doc(2, "Roads", "The developments of the road network", &[]));
        idx.commit().unwrap();
        let keys = |text: &str| -> Vec<i64> {
            let q = KeywordQuery::parse(text).unwrap();
            idx.search(&q, &SearchFilters::default(), 10).unwrap().into_iter().map(|(_, k)| k.0).collect()
        };
        assert_eq!(keys("Entwicklung"), [1], "the guessed German stem");
        assert_eq!(keys("entwicklungen"), [1], "the English stem, the word as written");
        assert_eq!(keys("developing"), [2]);
        assert_eq!(keys("\"road network\""), [2]);
        assert!(keys("\"network road\"").is_empty());
    }

    #[test]
    fn ranks_filters_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let (idx, rebuilt) = Bm25Index::open(dir.path()).unwrap();
        assert!(rebuilt);
        let tags = vec!["ipc".to_string()];
        upsert(&idx, doc(1, "Unix sockets", "local sockets connect processes", &tags));
        upsert(&idx, doc(2, "Bread", "baking bread at home with sockets of dough", &[]));
        idx.commit().unwrap();
        let q = KeywordQuery::parse("socket processes").unwrap();
        let hits = idx.search(&q, &SearchFilters::default(), 10).unwrap();
        assert_eq!(hits[0].1, DocKey(1));
        assert_eq!(hits.len(), 2);
        let filtered = SearchFilters { tags_all: protocol::Tag::parse_all(&["ipc"]).unwrap(), ..Default::default() };
        assert_eq!(idx.search(&q, &filtered, 10).unwrap().len(), 1);
        let neg = KeywordQuery::parse("sockets -bread").unwrap();
        assert_eq!(idx.search(&neg, &SearchFilters::default(), 10).unwrap().len(), 1);
        let phrase = KeywordQuery::parse("\"baking bread\"").unwrap();
        assert_eq!(idx.search(&phrase, &SearchFilters::default(), 10).unwrap()[0].1, DocKey(2));
        upsert(&idx, doc(1, "Unix sockets", "now about pipes", &tags));
        idx.delete(DocKey(2));
        idx.commit().unwrap();
        assert_eq!(idx.num_docs(), 1);
        assert_eq!(idx.filter_keys(&SearchFilters::default()).unwrap(), None);
        assert_eq!(idx.filter_keys(&filtered).unwrap(), Some(HashSet::from([DocKey(1)])));
        let since = SearchFilters { since_ms: Some(5000), ..Default::default() };
        assert!(idx.search(&KeywordQuery::parse("pipes").unwrap(), &since, 10).unwrap().is_empty());
        drop(idx);
        let (again, rebuilt) = Bm25Index::open(dir.path()).unwrap();
        assert!(!rebuilt);
        assert_eq!(again.num_docs(), 1);
    }
}
