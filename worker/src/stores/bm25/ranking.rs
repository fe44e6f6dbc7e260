//! The ranking's query and how its top documents are found.
//!
//! A query word's share of a field's score is one term, or the best of several choices (its
//! stems, the word as written) plus a tie-breaker's part of each other one; a field's score is
//! the sum of its words' shares at the field's weight, and the ranking the sum of the fields.
//!
//! Tantivy visits every matching document of such a query (a disjunction of disjunctions), which
//! at a million notes is most of them for a common word. [`Ranking`] finds the same top
//! documents by block-max WAND instead: over the sum of all its terms at their weights, which is
//! never less than the ranking's score (the best choice plus a part of the others is at most
//! their sum), with each document that sum lets through scored exactly. A document left out has
//! a sum at most the k-th best exact score, so its own score is too: the top documents and their
//! scores are the exhaustive query's (up to the last bit of a float's sum). Each segment's sum is
//! raised where the segment's average length differs from the index's ([`Ranking::bound`]), so
//! the blocks' stored maxima bound it too.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use tantivy::index::SegmentId;
use tantivy::query::{
    Bm25StatisticsProvider, BooleanQuery, BoostQuery, DisjunctionMaxQuery, EmptyQuery, EnableScoring, Explanation,
    Occur, Query, Scorer, TermQuery, Weight,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Score, SegmentReader, Term, TERMINATED};

/// A bound's term weighs this much more than in the ranking, so that no rounding of the sum can
/// bring it under the exact score.
const BOUND_MARGIN: Score = 1.001;

/// The top documents are looked for by the bound only when one of the ranking's terms is in at
/// least this part of the documents, and in at least [`PRUNE_FROM_DOCS`]: where every term is
/// rarer, the exhaustive walk is short, and the bound, up to the sum of a word's stems and its
/// written form, lets most of its documents through to be scored twice. Both chosen on the
/// 2,000-note generator's queries (`scripts/bench`'s notes corpus, at 2,000, 20,000 and
/// 200,000 notes): at 200,000 notes words in ~10% of the notes were 1.35x slower pruned and
/// words in 56-80% 1.1-2.5x faster; at 20,000 a common word 0.91x, at 2,000 search p50 1.10x.
/// docs/benchmarks.md has the figures.
const PRUNE_WHEN_A_TERM_IS_IN: f64 = 0.25;
const PRUNE_FROM_DOCS: u64 = 10_000;

/// One way a query word matches in a field: a term at a weight within the field.
#[derive(Clone, Debug)]
pub(super) struct Choice {
    pub term: Term,
    pub boost: Score,
}

impl Choice {
    pub fn new(term: Term, boost: Score) -> Choice {
        Choice { term, boost }
    }

    fn query(&self) -> Box<dyn Query> {
        let q = Box::new(TermQuery::new(self.term.clone(), IndexRecordOption::WithFreqs));
        if self.boost == 1.0 {
            q
        } else {
            Box::new(BoostQuery::new(q, self.boost))
        }
    }
}

/// A query word's share of one field's score.
#[derive(Clone, Debug)]
pub(super) enum Share {
    /// One term's score.
    Term(Choice),
    /// The best choice's score plus the tie-breaker's part of each other one.
    Best(Vec<Choice>),
}

impl Share {
    /// Whether the share is the best of several choices (a disjunction); one choice scores as
    /// a term.
    fn is_best_of_several(&self) -> bool {
        matches!(self, Share::Best(cs) if cs.len() > 1)
    }

    fn choices(&self) -> &[Choice] {
        match self {
            Share::Term(c) => std::slice::from_ref(c),
            Share::Best(cs) => cs,
        }
    }
}

/// The shares of one field, at the field's weight.
#[derive(Clone, Debug)]
pub(super) struct FieldShares {
    pub weight: Score,
    pub shares: Vec<Share>,
}

impl FieldShares {
    /// The field's query, `None` when no word has a share in it.
    pub fn query(&self, tie_breaker: Score) -> Option<Box<dyn Query>> {
        if self.shares.is_empty() {
            return None;
        }
        let clauses = self
            .shares
            .iter()
            .map(|share| {
                let q = match share.choices() {
                    [one] => one.query(),
                    several => Box::new(DisjunctionMaxQuery::with_tie_breaker(
                        several.iter().map(Choice::query).collect(),
                        tie_breaker,
                    )),
                };
                (Occur::Should, q)
            })
            .collect();
        Some(Box::new(BoostQuery::new(Box::new(BooleanQuery::new(clauses)), self.weight)))
    }
}

/// The ranking over every field, searched for its top documents by block-max WAND (module doc).
#[derive(Clone, Debug)]
pub(super) struct Ranking {
    fields: Vec<FieldShares>,
    tie_breaker: Score,
    /// [`PRUNE_FROM_DOCS`], but in tests.
    prune_from_docs: u64,
}

impl Ranking {
    pub fn new(fields: Vec<FieldShares>, tie_breaker: Score) -> Ranking {
        Ranking { fields, tie_breaker, prune_from_docs: PRUNE_FROM_DOCS }
    }

    pub fn is_empty(&self) -> bool {
        self.fields.iter().all(|f| f.shares.is_empty())
    }

    /// The same scores by tantivy's own queries, every matching document visited.
    pub fn exhaustive(&self) -> Box<dyn Query> {
        let fields: Vec<(Occur, Box<dyn Query>)> =
            self.fields.iter().filter_map(|f| f.query(self.tie_breaker)).map(|q| (Occur::Should, q)).collect();
        if fields.is_empty() {
            return Box::new(EmptyQuery);
        }
        Box::new(BooleanQuery::new(fields))
    }

    /// Whether one of the ranking's terms is in enough of the documents
    /// ([`PRUNE_WHEN_A_TERM_IS_IN`], [`PRUNE_FROM_DOCS`]).
    fn worth_pruning(&self, stats: &dyn Bm25StatisticsProvider) -> tantivy::Result<bool> {
        let share = (stats.total_num_docs()? as f64 * PRUNE_WHEN_A_TERM_IS_IN).ceil() as u64;
        let enough = share.max(self.prune_from_docs).max(1);
        for (_, _, choice, _) in self.weighted_terms() {
            if stats.doc_freq(&choice.term)? >= enough {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The sum of every term at its weight, never under the ranking's score in `segment`.
    ///
    /// Block-max WAND reads each block's best (length, frequency) pair, chosen when the segment
    /// was written by the segment's own average length, and scores it by the whole index's: where
    /// the two differ, another pair of the block can score higher (a shorter note's single
    /// mention against a longer note's three). A pair's score moves by at most the ratio of the
    /// two averages either way, so each term's bound is raised by it (1 where they agree).
    fn bound(&self, segment: &SegmentReader, stats: &dyn Bm25StatisticsProvider) -> tantivy::Result<BooleanQuery> {
        let docs = stats.total_num_docs()?.max(1) as Score;
        let segment_docs = segment.max_doc().max(1) as Score;
        let mut spreads: HashMap<Field, Score> = HashMap::new();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (_, _, choice, weight) in self.weighted_terms() {
            let field = choice.term.field();
            let spread = match spreads.get(&field) {
                Some(spread) => *spread,
                None => {
                    let index_average = stats.total_num_tokens(field)? as Score / docs;
                    let segment_average = segment.inverted_index(field)?.total_num_tokens() as Score / segment_docs;
                    let spread = average_spread(segment_average, index_average);
                    spreads.insert(field, spread);
                    spread
                }
            };
            let term = Box::new(TermQuery::new(choice.term.clone(), IndexRecordOption::WithFreqs));
            clauses.push((Occur::Should, Box::new(BoostQuery::new(term, weight * spread * BOUND_MARGIN))));
        }
        Ok(BooleanQuery::new(clauses))
    }

    /// Every term at its weight in the ranking (the field's times the choice's).
    fn weighted_terms(&self) -> impl Iterator<Item = (usize, usize, &Choice, Score)> + '_ {
        self.fields.iter().enumerate().flat_map(|(fi, field)| {
            field
                .shares
                .iter()
                .enumerate()
                .flat_map(move |(si, share)| share.choices().iter().map(move |c| (fi, si, c, field.weight * c.boost)))
        })
    }
}

impl Query for Ranking {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        let EnableScoring::Enabled { searcher, statistics_provider } = scoring else {
            return self.exhaustive().weight(scoring);
        };
        // The three weights below read each term's statistics once.
        let stats = Remembered::new(statistics_provider);
        let scoring = EnableScoring::enabled_from_statistics_provider(&stats, searcher);
        let exhaustive = self.exhaustive().weight(scoring)?;
        if self.is_empty() || !self.worth_pruning(&stats)? {
            return Ok(exhaustive);
        }
        let mut terms = Vec::new();
        for (field, share, choice, weight) in self.weighted_terms() {
            let term = TermQuery::new(choice.term.clone(), IndexRecordOption::WithFreqs);
            terms.push(WeightedTerm { field, share, weight: term.weight(scoring)?, boost: weight });
        }
        let shapes = self.fields.iter().map(|f| f.shares.iter().map(Share::is_best_of_several).collect()).collect();
        let mut bounds = HashMap::new();
        for segment in searcher.segment_readers() {
            bounds.insert(segment.segment_id(), self.bound(segment, &stats)?.weight(scoring)?);
        }
        Ok(Box::new(RankingWeight { exhaustive, bounds, terms, shapes, tie_breaker: self.tie_breaker }))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        for (_, _, choice, _) in self.weighted_terms() {
            visitor(&choice.term, false);
        }
    }
}

/// A statistics provider that asks the one it wraps once per term and field.
struct Remembered<'a> {
    inner: &'a dyn Bm25StatisticsProvider,
    docs: Cell<Option<u64>>,
    tokens: RefCell<HashMap<Field, u64>>,
    doc_freqs: RefCell<HashMap<Term, u64>>,
}

impl<'a> Remembered<'a> {
    fn new(inner: &'a dyn Bm25StatisticsProvider) -> Remembered<'a> {
        Remembered { inner, docs: Cell::new(None), tokens: RefCell::default(), doc_freqs: RefCell::default() }
    }
}

impl Bm25StatisticsProvider for Remembered<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        if let Some(n) = self.tokens.borrow().get(&field) {
            return Ok(*n);
        }
        let n = self.inner.total_num_tokens(field)?;
        self.tokens.borrow_mut().insert(field, n);
        Ok(n)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        if let Some(n) = self.docs.get() {
            return Ok(n);
        }
        let n = self.inner.total_num_docs()?;
        self.docs.set(Some(n));
        Ok(n)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        if let Some(n) = self.doc_freqs.borrow().get(term) {
            return Ok(*n);
        }
        let n = self.inner.doc_freq(term)?;
        self.doc_freqs.borrow_mut().insert(term.clone(), n);
        Ok(n)
    }
}

/// A term of the ranking: which field and share it scores in, at what weight.
struct WeightedTerm {
    field: usize,
    share: usize,
    weight: Box<dyn Weight>,
    boost: Score,
}

/// How far a score read by one average length can move when read by another: their ratio, the
/// larger over the smaller (1 for a field without words, which has no blocks).
fn average_spread(a: Score, b: Score) -> Score {
    if a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() {
        (a / b).max(b / a)
    } else {
        1.0
    }
}

struct RankingWeight {
    exhaustive: Box<dyn Weight>,
    /// Per segment, every term at its weight, summed: never under the ranking's score there
    /// ([`Ranking::bound`]).
    bounds: HashMap<SegmentId, Box<dyn Weight>>,
    terms: Vec<WeightedTerm>,
    /// Per field, per share: whether the share is the best of several choices.
    shapes: Vec<Vec<bool>>,
    tie_breaker: Score,
}

impl Weight for RankingWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        self.exhaustive.scorer(reader, boost)
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        self.exhaustive.explain(reader, doc)
    }

    fn count(&self, reader: &SegmentReader) -> tantivy::Result<u32> {
        self.exhaustive.count(reader)
    }

    fn for_each_pruning(
        &self,
        threshold: Score,
        reader: &SegmentReader,
        callback: &mut dyn FnMut(DocId, Score) -> Score,
    ) -> tantivy::Result<()> {
        let Some(bound) = self.bounds.get(&reader.segment_id()) else {
            return self.exhaustive.for_each_pruning(threshold, reader, callback);
        };
        let mut exact = ExactScore::new(self, reader)?;
        let mut threshold_now = threshold;
        bound.for_each_pruning(threshold, reader, &mut |doc, _sum| {
            let score = exact.at(doc);
            if score > threshold_now {
                threshold_now = callback(doc, score);
            }
            threshold_now
        })
    }
}

/// The ranking's score of the documents of one segment, asked in increasing order: each term's
/// scorer moved to the document, and the shares combined as the exhaustive query combines them.
struct ExactScore<'a> {
    terms: Vec<(usize, usize, Box<dyn Scorer>)>,
    shapes: &'a [Vec<bool>],
    tie_breaker: Score,
    /// Per field, per share: the best and the sum of the document's choices (0 where none
    /// matched, which adds nothing).
    shares: Vec<Vec<(Score, Score)>>,
}

impl<'a> ExactScore<'a> {
    fn new(w: &'a RankingWeight, reader: &SegmentReader) -> tantivy::Result<ExactScore<'a>> {
        let mut terms = Vec::with_capacity(w.terms.len());
        for t in &w.terms {
            let scorer = t.weight.scorer(reader, t.boost)?;
            if scorer.doc() != TERMINATED {
                terms.push((t.field, t.share, scorer));
            }
        }
        let shares = w.shapes.iter().map(|f| vec![(0.0, 0.0); f.len()]).collect();
        Ok(ExactScore { terms, shapes: &w.shapes, tie_breaker: w.tie_breaker, shares })
    }

    fn at(&mut self, doc: DocId) -> Score {
        for field in &mut self.shares {
            field.fill((0.0, 0.0));
        }
        for (field, share, scorer) in &mut self.terms {
            if scorer.doc() < doc {
                scorer.seek(doc);
            }
            if scorer.doc() == doc {
                let s = scorer.score();
                let (best, sum) = &mut self.shares[*field][*share];
                *best = best.max(s);
                *sum += s;
            }
        }
        let mut total: Score = 0.0;
        for (field, shapes) in self.shares.iter().zip(self.shapes) {
            let mut field_score: Score = 0.0;
            for (&(best, sum), &is_best) in field.iter().zip(shapes) {
                field_score += if is_best { best + (sum - best) * self.tie_breaker } else { sum };
            }
            total += field_score;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::collector::TopDocs;
    use tantivy::schema::{Schema, TEXT};
    use tantivy::{doc, Index};

    /// Documents of a few words each over two fields, with words shared in every proportion: the
    /// first segments' documents short, the later ones' long, so that a segment's average length
    /// is far from the index's (the block maxima are chosen by the segment's).
    fn index() -> (Index, tantivy::schema::Field, tantivy::schema::Field) {
        let mut schema = Schema::builder();
        let a = schema.add_text_field("a", TEXT);
        let b = schema.add_text_field("b", TEXT);
        let index = Index::create_in_ram(schema.build());
        let mut writer = index.writer(15_000_000).unwrap();
        let words = ["apple", "pear", "plum", "fig", "kiwi", "lime"];
        let mut seed: u64 = 7;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for i in 0..3000 {
            let n = if i < 1500 { 1 + next() % 3 } else { 8 + next() % 40 };
            let text_a: Vec<&str> = (0..n).map(|_| words[next() % words.len()]).collect();
            let text_b: Vec<&str> = (0..(next() % 4)).map(|_| words[next() % words.len()]).collect();
            writer.add_document(doc!(a => text_a.join(" "), b => text_b.join(" "))).unwrap();
            if i % 700 == 0 {
                writer.commit().unwrap();
            }
        }
        writer.commit().unwrap();
        (index, a, b)
    }

    fn ranking(a: tantivy::schema::Field, b: tantivy::schema::Field) -> Ranking {
        let t = |f, w: &str| Term::from_field_text(f, w);
        Ranking::new(
            vec![
                FieldShares {
                    weight: 1.0,
                    shares: vec![
                        Share::Best(vec![Choice::new(t(a, "apple"), 1.0), Choice::new(t(a, "pear"), 0.5)]),
                        Share::Term(Choice::new(t(a, "plum"), 0.1)),
                        Share::Best(vec![Choice::new(t(a, "fig"), 1.0), Choice::new(t(a, "absent"), 1.0)]),
                    ],
                },
                FieldShares { weight: 0.25, shares: vec![Share::Term(Choice::new(t(b, "apple"), 1.0))] },
            ],
            0.1,
        )
    }

    #[test]
    fn only_a_term_in_enough_of_the_documents_is_worth_pruning() {
        let (index, a, b) = index();
        let searcher = index.reader().unwrap().searcher();
        // 3,000 documents: fewer than PRUNE_FROM_DOCS.
        assert!(!ranking(a, b).worth_pruning(&searcher).unwrap());
        let mut common = ranking(a, b);
        common.prune_from_docs = 1;
        assert!(common.worth_pruning(&searcher).unwrap());
        let t = |w: &str| Term::from_field_text(a, w);
        let mut rare = Ranking::new(
            vec![FieldShares { weight: 1.0, shares: vec![Share::Term(Choice::new(t("absent"), 1.0))] }],
            0.1,
        );
        rare.prune_from_docs = 1;
        assert!(!rare.worth_pruning(&searcher).unwrap());
    }

    #[test]
    fn the_pruned_search_finds_the_exhaustive_top_documents_and_scores() {
        let (index, a, b) = index();
        let searcher = index.reader().unwrap().searcher();
        let mut ranking = ranking(a, b);
        ranking.prune_from_docs = 1;
        assert!(ranking.worth_pruning(&searcher).unwrap());
        for k in [1, 10, 100, 3000] {
            let collector = TopDocs::with_limit(k).order_by_score();
            let pruned = searcher.search(&ranking, &collector).unwrap();
            let exhaustive = searcher.search(ranking.exhaustive().as_ref(), &collector).unwrap();
            assert_eq!(pruned.len(), exhaustive.len(), "k {k}");
            for (p, e) in pruned.iter().zip(&exhaustive) {
                assert!((p.0 - e.0).abs() <= 1e-5 * e.0.abs(), "k {k}: {p:?} {e:?}");
            }
            // The same documents, but for ties at the last score.
            let last = exhaustive.last().map(|e| e.0).unwrap_or_default();
            let above = |v: &[(Score, tantivy::DocAddress)]| {
                let mut d: Vec<_> = v.iter().filter(|x| x.0 > last + 1e-5).map(|x| x.1).collect();
                d.sort();
                d
            };
            assert_eq!(above(&pruned), above(&exhaustive), "k {k}");
        }
        assert_eq!(ranking.count(&searcher).unwrap(), ranking.exhaustive().count(&searcher).unwrap());
    }

    #[test]
    fn a_ranking_without_terms_finds_nothing() {
        let (index, _, _) = index();
        let searcher = index.reader().unwrap().searcher();
        let empty = Ranking::new(vec![FieldShares { weight: 1.0, shares: vec![] }], 0.1);
        assert!(empty.is_empty());
        assert!(searcher.search(&empty, &TopDocs::with_limit(5).order_by_score()).unwrap().is_empty());
    }
}
