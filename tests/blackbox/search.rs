//! `POST /api/search`: ranking, filters, limits and the query grammar.

use crate::common::*;
use serde_json::json;

fn corpus(s: &Server) {
    write_notes(
        &s.path("work"),
        &[
            ("sockets.md", "---\ntags: [ipc, rust]\ndate: 2024-01-05\nauthor: Ann Lee\ncategory: howto\n---\n# Unix domain sockets\nLocal sockets connect processes on one machine. Sockets are fast.\n"),
            ("pipes.md", "---\ntags: [ipc]\ndate: 2024-06-01\nauthor: Bob\ncategory: reference\n---\n# Named pipes\nPipes connect processes too, one way only.\n"),
            ("bread.md", "---\ntags: [cooking]\ndate: 2023-03-01\n---\n# Baking bread\nFlour, water, salt and time. Not about sockets or processes.\n"),
            ("tcp.md", "# TCP networking\nTCP sockets cross machines; a socket has an address.\n"),
        ],
    );
    write_notes(&s.path("home"), &[("garden.md", "# Garden\nTomatoes and processes of growth.\n")]);
    s.add_collection(&s.path("work"), "work");
    s.add_collection(&s.path("home"), "home");
}

#[test]
fn ranks_by_bm25_with_normalized_scores_and_the_contract_shape() {
    let s = Server::start();
    corpus(&s);
    let r = s.search(json!({ "query": "unix sockets" }));
    assert_eq!(r["query"], "unix sockets");
    assert_eq!(r["mode"], "bm25");
    let results = r["results"].as_array().unwrap();
    assert_eq!(results[0]["uri"], "svc://work/sockets.md");
    assert_eq!(results[0]["score"], 1.0);
    for hit in results {
        let sc = hit["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&sc));
        for k in ["docid", "uri", "title", "collection"] {
            assert!(hit[k].is_string(), "{k}: {hit}");
        }
        assert!(hit["tags"].is_array() && hit["chunk"]["text"].is_string() && hit["chunk"]["index"].is_u64());
        assert!(hit["source"]["absPath"].as_str().unwrap().starts_with('/'));
    }
    assert_eq!(r["meta"]["totalResults"], results.len());
    // stemming: "socket" finds "sockets"; a long question still finds the best document
    let stemmed = uris(&s.search(json!({ "query": "socket" })));
    assert!(
        stemmed.contains(&"svc://work/tcp.md".to_string()) && stemmed.contains(&"svc://work/sockets.md".to_string())
    );
    let q = "How do local unix domain sockets connect processes that run on the same machine, and are they fast compared to the alternatives?";
    assert_eq!(s.search(json!({ "query": q }))["results"][0]["uri"], "svc://work/sockets.md");
    assert!(s.search(json!({ "query": "zzzunknownzzz" }))["results"].as_array().unwrap().is_empty());
}

#[test]
fn phrases_negation_and_malformed_queries() {
    let s = Server::start();
    corpus(&s);
    assert_eq!(uris(&s.search(json!({ "query": "\"named pipes\"" }))), vec!["svc://work/pipes.md"]);
    let neg = uris(&s.search(json!({ "query": "processes -bread -garden" })));
    assert!(
        neg.contains(&"svc://work/sockets.md".to_string())
            && !neg.iter().any(|u| u.contains("bread") || u.contains("garden"))
    );
    s.post("/api/search", json!({ "query": "\"unbalanced" })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "-only -negations" })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "" })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({})).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": 12 })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "a(b) [c]: d^2 ~e* AND OR NOT {f} sockets" })).json();
}

#[test]
fn filters_collection_tags_dates_category_author() {
    let s = Server::start();
    corpus(&s);
    let only = |body: serde_json::Value| {
        let mut u = uris(&s.search(body));
        u.sort();
        u
    };
    assert_eq!(only(json!({ "query": "processes", "collection": "HOME" })), vec!["svc://home/garden.md"]);
    assert_eq!(only(json!({ "query": "processes", "tagsAll": "ipc,rust" })), vec!["svc://work/sockets.md"]);
    assert_eq!(
        only(json!({ "query": "processes", "tagsAll": ["IPC"] })),
        vec!["svc://work/pipes.md", "svc://work/sockets.md"]
    );
    assert_eq!(
        only(json!({ "query": "processes", "tagsAny": "cooking,rust" })),
        vec!["svc://work/bread.md", "svc://work/sockets.md"]
    );
    assert_eq!(only(json!({ "query": "processes", "category": "howto,nothing" })), vec!["svc://work/sockets.md"]);
    assert_eq!(only(json!({ "query": "processes", "author": "ann" })), vec!["svc://work/sockets.md"]);
    let all = only(json!({ "query": "processes", "since": "2000-01-01", "until": "today" }));
    assert_eq!(all.len(), 4);
    assert!(only(json!({ "query": "processes", "until": "2001-01-01" })).is_empty());
    assert!(only(json!({ "query": "processes", "since": "2999-01-01T00:00:00Z" })).is_empty());
    s.post("/api/search", json!({ "query": "x", "since": "next tuesday-ish" })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "x", "tagsAll": "bad tag!" })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "x", "tagsAny": [1, 2] })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "x", "collection": "nope" })).assert_error(404, "NOT_FOUND");
}

#[test]
fn limits_min_score_hints_and_extra_fields() {
    let s = Server::start();
    corpus(&s);
    assert_eq!(s.search(json!({ "query": "processes", "limit": 2 }))["results"].as_array().unwrap().len(), 2);
    assert_eq!(s.search(json!({ "query": "processes", "limit": 500 }))["results"].as_array().unwrap().len(), 4);
    s.post("/api/search", json!({ "query": "x", "limit": 0 })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "x", "limit": "10" })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "x", "limit": 2.5 })).assert_error(400, "VALIDATION");
    s.post("/api/search", json!({ "query": "x", "minScore": -0.1 })).assert_error(400, "VALIDATION");
    let hi = s.search(json!({ "query": "processes", "minScore": 0.99 }));
    let hi = hi["results"].as_array().unwrap();
    assert!(!hi.is_empty() && hi.len() < 4, "minScore keeps the best, drops the rest: {hi:?}");
    assert!(hi.iter().all(|r| r["score"].as_f64().unwrap() >= 0.99));
    let hints: Vec<String> = (0..16).map(|i| format!("hint-{i}")).collect();
    let with = s.search(json!({ "query": "processes", "projectHints": hints }));
    let without = s.search(json!({ "query": "processes" }));
    assert_eq!(with, without);
    assert!(!with.to_string().contains("hint-"));
    let hints17: Vec<String> = (0..17).map(|i| format!("h{i}")).collect();
    s.post("/api/search", json!({ "query": "x", "projectHints": hints17 })).assert_error(400, "VALIDATION");
    let ex = uris(&s.search(json!({ "query": "processes", "exclude": "bread,tomatoes" })));
    assert!(!ex.iter().any(|u| u.contains("bread") || u.contains("garden")));
    let steered = s.search(json!({ "query": "processes", "intent": "ipc", "candidateLimit": 1000 }));
    assert!(!steered["results"].as_array().unwrap().is_empty());
}

#[test]
fn recency_words_order_newest_first() {
    let s = Server::start();
    corpus(&s);
    let r = uris(&s.search(json!({ "query": "latest processes", "tagsAny": "ipc,cooking" })));
    assert_eq!(r, vec!["svc://work/pipes.md", "svc://work/sockets.md", "svc://work/bread.md"]);
}

#[test]
fn recency_reorders_only_results_that_match_the_query_well() {
    let s = Server::start();
    write_notes(
        &s.path("log"),
        &[
            (
                "meetings/jan.md",
                "---\ndate: 2024-01-10\n---\n# Team meeting notes\nMeeting notes of the budget meeting.\n",
            ),
            ("meetings/may.md", "---\ndate: 2024-05-02\n---\n# Meeting notes\nMeeting notes of the roadmap meeting.\n"),
            ("shopping.md", "---\ndate: 2025-03-01\n---\n# Shopping\nNotes for the store: milk, eggs and bread.\n"),
            ("travel.md", "---\ndate: 2025-02-01\n---\n# Travel\nA few notes on trains and ferries.\n"),
        ],
    );
    s.add_collection(&s.path("log"), "log");
    let r = s.search(json!({ "query": "latest meeting notes" }));
    assert_eq!(r["meta"]["recencyOrdered"], true);
    let got = uris(&r);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(
        &got[..2],
        &["svc://log/meetings/may.md", "svc://log/meetings/jan.md"],
        "newest matching meeting note first: {got:?}"
    );
    // Without the recency word the meeting notes rank first by score as well; the newest
    // notes that merely mention "notes" stay behind them either way.
    let plain = uris(&s.search(json!({ "query": "meeting notes" })));
    assert!(plain[..2].iter().all(|u| u.contains("meetings/")), "{plain:?}");
}

/// Issue 60: every result that holds all of the query's words comes newest first, all the way
/// down the list, however low its score (a long note that mentions "meeting notes" once); the
/// results that hold fewer follow in score order.
#[test]
fn recency_orders_every_result_holding_the_query_newest_first() {
    let s = Server::start();
    let filler = "Unrelated text about gardens, trains and the weather of the coast. ".repeat(40);
    let long = |date: &str, title: &str| {
        format!("---\ndate: {date}\n---\n# {title}\n{filler}\nThe meeting notes are at the end.\n{filler}\n")
    };
    let (planning, retro) = (long("2024-03-02", "Planning"), long("2024-05-01", "Retro"));
    write_notes(
        &s.path("log"),
        &[
            ("meetings/jan.md", "---\ndate: 2024-01-10\n---\n# Meeting notes\nMeeting notes of the budget meeting.\n"),
            ("meetings/feb.md", "---\ndate: 2024-02-05\n---\n# Meeting notes\nMeeting notes, roadmap meeting.\n"),
            ("meetings/planning.md", planning.as_str()),
            ("meetings/retro.md", retro.as_str()),
            ("shopping.md", "---\ndate: 2025-03-01\n---\n# Shopping\nNotes for the store: milk and bread.\n"),
        ],
    );
    s.add_collection(&s.path("log"), "log");
    let plain = uris(&s.search(json!({ "query": "meeting notes" })));
    assert_eq!(plain.len(), 5, "{plain:?}");
    let got = uris(&s.search(json!({ "query": "latest meeting notes" })));
    assert_eq!(
        got,
        [
            "svc://log/meetings/retro.md",
            "svc://log/meetings/planning.md",
            "svc://log/meetings/feb.md",
            "svc://log/meetings/jan.md",
            "svc://log/shopping.md",
        ],
        "every note holding both words newest first, then the one holding a word: {got:?} (by score: {plain:?})"
    );
    // Hybrid search orders the same way (the keyword side counts the words).
    let r = s.post("/api/query", json!({ "query": "latest meeting notes", "noRerank": true }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(uris(&r.json()), got);
}

/// Issue 60: a word is found through its stem in its own language only. Spanish "activarse"
/// and English "active" share the stem "activ": the Spanish word finds the Spanish notes, not
/// the English notes that say "active", with `lang` or without.
#[test]
fn a_word_is_not_found_through_another_languages_word_of_the_same_stem() {
    let s = Server::start();
    let english =
        "# Windows\nThe active window keeps the active tab; an active user sees activity in the active pane, \
                   and the active session stays active until the user logs out of the active account.\n";
    let spanish = "# Ajustes\nEl modo oscuro puede activarse desde el menú de ajustes, y la aplicación lo recuerda \
                   la próxima vez que se abre. También se puede elegir el tamaño de la letra y el idioma de la \
                   interfaz, que se guardan con el resto de las preferencias del usuario.\n";
    write_notes(
        &s.path("notes"),
        &[
            ("en/windows.md", english),
            ("en/sessions.md", "---\nlang: en\n---\n# Sessions\nActive sessions, active users.\n"),
            ("es/ajustes.md", spanish),
            ("es/modo.md", "---\nlang: es\n---\n# Modo\nPara activar el modo, pulse el botón.\n"),
        ],
    );
    s.add_collection(&s.path("notes"), "notes");
    let mut found = uris(&s.search(json!({ "query": "activarse" })));
    found.sort_unstable();
    assert_eq!(found, ["svc://notes/es/ajustes.md", "svc://notes/es/modo.md"], "the Spanish notes alone");
    let r = s.post("/api/query", json!({ "query": "activarse", "lang": "es", "noRerank": true }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let mut told = uris(&r.json());
    told.sort_unstable();
    assert_eq!(told, found);
    // Not told its language, "active" is looked for as a Spanish word too; the English notes,
    // which hold it, come first.
    let english_found = uris(&s.search(json!({ "query": "active" })));
    assert!(english_found.len() >= 2 && english_found[..2].iter().all(|u| u.contains("/en/")), "{english_found:?}");
}

/// Issue 35's memo: a newer memo that only links to a meeting note (its link's path holds
/// "meeting" and "notes"; before stop 40 it came first) must not outrank the newest meeting note on "latest meeting
/// notes": a link's target is an address, not the memo's words (its text still is).
#[test]
fn a_link_target_lends_no_words_and_recency_keeps_the_newest_meeting_first() {
    let s = Server::start();
    let mut files: Vec<(String, String)> = (1..=40)
        .map(|i| {
            let day = format!("2023-{:02}-{:02}", (i - 1) / 4 + 1, (i - 1) % 4 * 7 + 1);
            let note = format!("---\ndate: {day}\n---\n# Meeting {i:02}\nAgenda: roadmap, hiring and item {i}.\n");
            (format!("meeting-notes/2023/meeting-{i:02}.md"), note)
        })
        .collect();
    files.push((
        "memos/2024/memo.md".into(),
        "---\ndate: 2024-03-01\n---\n# Memo\nThe budget is settled, as agreed [in February](../../meeting-notes/2023/meeting-02.md).\n"
            .into(),
    ));
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    write_notes(&s.path("work"), &refs);
    s.add_collection(&s.path("work"), "work");
    let got = uris(&s.search(json!({ "query": "latest meeting notes" })));
    assert_eq!(got.first().map(String::as_str), Some("svc://work/meeting-notes/2023/meeting-40.md"), "{got:?}");
    assert!(!got.iter().any(|u| u.contains("memo")), "the memo holds none of the words: {got:?}");
    // The link's text is the memo's: it is found by it.
    let by_text = uris(&s.search(json!({ "query": "february" })));
    assert_eq!(by_text, vec!["svc://work/memos/2024/memo.md"]);
    // The link itself still counts as a link.
    let back = s.get("/api/doc?uri=svc://work/meeting-notes/2023/meeting-02.md").json();
    let id = back["docid"].as_str().unwrap().trim_start_matches('#').to_string();
    let links = s.get(&format!("/api/doc/%23{id}/backlinks")).json();
    assert!(links.to_string().contains("memos/2024/memo.md"), "{links}");
}

/// Chinese, Japanese and Korean words are found inside sentences written without spaces, a
/// Korean name with its particle attached, and a Chinese query written without spaces.
#[test]
fn cjk_words_are_found_inside_sentences() {
    let s = Server::start();
    write_notes(
        &s.path("notes"),
        &[
            ("ja.md", "# 週末\n土曜日に図書館へ行って本を三冊借りました。\n"),
            ("zh.md", "# 计划\n我们下个月在北京开会，需要先确定预算。\n"),
            ("ko.md", "# 여행\n다음 주에 부산에서 친구를 만납니다.\n"),
            ("en.md", "# Library\nThe library in Busan and Beijing opens at nine.\n"),
        ],
    );
    s.add_collection(&s.path("notes"), "notes");
    for (query, note) in
        [("図書館", "ja.md"), ("北京", "zh.md"), ("预算", "zh.md"), ("부산", "ko.md"), ("北京预算", "zh.md")]
    {
        let found = uris(&s.search(json!({ "query": query })));
        assert_eq!(
            found.first().map(String::as_str),
            Some(format!("svc://notes/{note}").as_str()),
            "{query}: {found:?}"
        );
    }
    // A pair of characters that stands in no note finds nothing.
    assert!(s.search(json!({ "query": "東京" }))["results"].as_array().unwrap().is_empty());
}

/// Thai, Khmer, Lao and Burmese words are found inside sentences written without spaces (a
/// dictionary cuts notes and queries alike), and not in a note of the same script without them.
#[test]
fn thai_khmer_lao_and_burmese_words_are_found_inside_sentences() {
    let s = Server::start();
    write_notes(
        &s.path("notes"),
        &[
            ("th-library.md", "# บันทึก\nเมื่อวานนี้ฉันไปห้องสมุดและยืมหนังสือสามเล่ม\n"),
            ("th-weather.md", "# อากาศ\nวันนี้อากาศดีมากและฉันอยากไปเที่ยวทะเล\n"),
            ("km-school.md", "# ថ្ងៃ\nខ្ញុំទៅសាលារៀនរាល់ថ្ងៃជាមួយមិត្តភក្តិ\n"),
            ("km-food.md", "# ម្ហូប\nម្ហូបនេះឆ្ងាញ់ណាស់\n"),
            ("lo.md", "# ລາວ\nຂ້ອຍຮັກປະເທດລາວຫຼາຍ\n"),
            ("my.md", "# မြန်မာ\nကျွန်တော်စာအုပ်ဖတ်ရတာကြိုက်တယ်\n"),
        ],
    );
    s.add_collection(&s.path("notes"), "notes");
    for (query, note) in [
        ("ห้องสมุด", "th-library.md"),
        ("หนังสือ", "th-library.md"),
        ("ทะเล", "th-weather.md"),
        ("សាលារៀន", "km-school.md"),
        ("ឆ្ងាញ់", "km-food.md"),
        ("ປະເທດ", "lo.md"),
        ("စာအုပ်", "my.md"),
    ] {
        let found = uris(&s.search(json!({ "query": query })));
        assert_eq!(found, vec![format!("svc://notes/{note}")], "{query}");
    }
}

/// A collection may declare its notes' language (`lang`): a short note, whose own text is too
/// short to tell, is stemmed by it; a note's front matter still wins. A bad `lang` is a 400.
#[test]
fn a_collections_language_stems_its_notes() {
    let s = Server::start();
    let note = "# Notiz\nNeue Entwicklungen im Projekt.\n";
    write_notes(&s.path("de"), &[("kurz.md", note), ("en.md", "---\nlang: en\n---\n# Note\nNeue Entwicklungen.\n")]);
    write_notes(&s.path("plain"), &[("kurz.md", note)]);
    let r = s.post("/api/collections", json!({ "path": s.path("de"), "name": "de", "lang": "de" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
    s.add_collection(&s.path("plain"), "plain");
    let found = uris(&s.search(json!({ "query": "Entwicklung" })));
    assert_eq!(found, ["svc://de/kurz.md"], "the German collection's note, not the same note elsewhere");
    for bad in [json!(""), json!("de; rm"), json!(7), json!("x".repeat(40))] {
        s.post("/api/collections", json!({ "path": s.path("plain"), "name": "other", "lang": bad }))
            .assert_error(400, "VALIDATION");
    }
}

/// A note is stemmed by its own language: "Entwicklung" finds "Entwicklungen" in a German note,
/// "développement" the French plural, while an English note keeps its English stems.
/// A two-line note, too short for its language to be told for sure, is indexed under the stems
/// of the language it is likely in as well as English's: an inflected form of its words finds it.
#[test]
fn a_short_note_is_found_by_other_forms_of_its_words() {
    let s = Server::start();
    write_notes(
        &s.path("notes"),
        &[
            ("de.md", "Die Entwicklungen der Kinder sind erstaunlich.\nWir sprechen morgen darüber.\n"),
            ("fr.md", "L'article a été publié hier soir.\nIl parle des élections régionales.\n"),
            ("es.md", "Los niños jugaban en los parques.\nMañana vamos a la playa.\n"),
            ("en.md", "Ship the release on Friday.\nThe kids will play in the park.\n"),
        ],
    );
    s.add_collection(&s.path("notes"), "notes");
    for (query, note) in [
        ("Entwicklung", "de.md"),
        ("Kind", "de.md"),
        ("publier", "fr.md"),
        ("élection", "fr.md"),
        ("jugar", "es.md"),
        ("parque", "es.md"),
    ] {
        let found = uris(&s.search(json!({ "query": query })));
        assert_eq!(
            found.first().map(String::as_str),
            Some(format!("svc://notes/{note}").as_str()),
            "{query}: {found:?}"
        );
    }
    assert_eq!(uris(&s.search(json!({ "query": "releases" }))), ["svc://notes/en.md"], "English stems as before");
}

/// A note too short to tell its language is indexed under its folder's too: the language most
/// of the notes beside it are told in, whichever of them was indexed first (the short note
/// sorts first); a note written into the folder later takes it at once. The same note in a
/// folder of English notes keeps its English stems alone.
#[test]
fn a_short_note_takes_the_language_of_the_notes_beside_it() {
    let s = Server::start();
    // Its own text tells no German (`language::tests`).
    let short = "Meeting notes from Tuesday: Entwicklungen\n";
    let de = [
        "Die Arbeit im letzten Jahr hat gezeigt, dass eine gute Planung wichtig ist. Wir haben deshalb \
         beschlossen, im nächsten Jahr mehr Zeit für Gespräche zu nehmen und weniger Sitzungen abzuhalten. \
         Die Ergebnisse werden am Ende des Quartals mit allen Beteiligten besprochen.\n",
        "Der Umzug des Büros ist für den Herbst geplant. Die neuen Räume sind größer, und die Bahn ist \
         nicht weit. Bis dahin bleibt alles, wie es ist, und die Schlüssel werden im Sommer verteilt. Wer \
         Fragen zum Umzug hat, wendet sich bitte an die Verwaltung im zweiten Stock.\n",
    ];
    let en = [
        "The work of the last year has shown that good planning matters. We have therefore decided to \
         take more time for talks next year and to hold fewer meetings than we did before. The results \
         will be discussed with everyone involved at the end of the quarter.\n",
        "The office move is planned for the autumn. The new rooms are larger, and the station is not far \
         away. Until then everything stays as it is, and the keys are handed out in the summer. Anyone \
         with questions about the move should ask the office on the second floor.\n",
    ];
    write_notes(
        &s.path("notes"),
        &[
            ("de/0-kurz.md", short),
            ("de/arbeit.md", de[0]),
            ("de/umzug.md", de[1]),
            ("en/0-short.md", short),
            ("en/work.md", en[0]),
            ("en/move.md", en[1]),
        ],
    );
    s.add_collection(&s.path("notes"), "notes");
    assert_eq!(uris(&s.search(json!({ "query": "Entwicklung" }))), ["svc://notes/de/0-kurz.md"]);
    let r = s.post(
        "/api/docs",
        json!({ "collection": "notes", "relPath": "de/später.md", "content": "Call with the team about Kinder\n" }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let found = uris(&s.search(json!({ "query": "Kind" })));
        if found == ["svc://notes/de/sp%C3%A4ter.md"] || found == ["svc://notes/de/später.md"] {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "a note written later: {found:?}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn words_are_found_in_their_other_forms_in_a_notes_own_language() {
    let s = Server::start();
    write_notes(
        &s.path("notes"),
        &[
            (
                "de.md",
                "# Jahresrückblick\nDie Entwicklungen der letzten Jahre haben gezeigt, dass eine gute Planung wichtig ist. \
                 Wir haben deshalb beschlossen, die Arbeit im nächsten Jahr mit mehr Zeit für Gespräche und weniger \
                 Sitzungen fortzusetzen, damit alle Beteiligten mitkommen und niemand den Überblick verliert.\n",
            ),
            (
                "fr.md",
                "# Bilan\nLes développements des dernières années ont montré qu'une bonne planification est importante. \
                 Nous avons donc décidé de poursuivre le travail l'année prochaine avec plus de temps pour les \
                 échanges et moins de réunions, afin que chacun puisse suivre.\n",
            ),
            (
                "en.md",
                "# Review\nThe developments of recent years have shown that good planning matters. We have therefore \
                 decided to continue the work next year with more time for talks and fewer meetings, so that \
                 everyone involved can keep up and nobody loses track.\n",
            ),
            // Too short for its language to be told: the language its front matter declares.
            ("kurz.md", "---\nlang: de\n---\n# Notiz\nNeue Entwicklungen im Projekt.\n"),
            ("short.md", "# Notiz\nNeue Entwicklungen im Projekt.\n"),
            ("es.md", "---\nlang: es\n---\n# Proyecto\nLos desarrollos del proyecto.\n"),
            // Two languages in one note: each paragraph is stemmed by its own.
            (
                "mixed.md",
                "# Minutes\nThe team met on Tuesday to plan the next release. We went through the open tickets, \
                 agreed on who takes which of them, and moved the date of the beta by one week so that the \
                 documentation can be finished first.\n\nZusammenfassung auf Deutsch: Das Team hat sich am \
                 Dienstag getroffen und die Vereinbarungen für die nächste Version besprochen. Der Termin der \
                 Beta wurde um eine Woche verschoben, damit die Dokumentation zuerst fertig wird.\n",
            ),
        ],
    );
    s.add_collection(&s.path("notes"), "notes");
    for (query, note) in [("développement", "fr.md"), ("development", "en.md")] {
        let found = uris(&s.search(json!({ "query": query })));
        assert_eq!(
            found.first().map(String::as_str),
            Some(format!("svc://notes/{note}").as_str()),
            "{query}: {found:?}"
        );
    }
    // (`short.md` is found as well when its language is guessed: see
    // `a_short_note_is_found_by_other_forms_of_its_words`.)
    let found = uris(&s.search(json!({ "query": "Entwicklung" })));
    let mut german: Vec<&str> = found.iter().map(String::as_str).filter(|u| *u != "svc://notes/short.md").collect();
    german.sort_unstable();
    assert_eq!(german, ["svc://notes/de.md", "svc://notes/kurz.md"], "{found:?}");
    let found = uris(&s.search(json!({ "query": "Vereinbarung" })));
    assert_eq!(found, ["svc://notes/mixed.md"], "a German paragraph in an English note");
    // A query told its language (`lang`) is stemmed by it (and English) alone: told German,
    // "desarrollo" is no Spanish word's form; not told, it finds the Spanish note.
    let query = |body: serde_json::Value| {
        let r = s.post("/api/query", body);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        (uris(&r.json()), r.json()["queryLanguage"].clone())
    };
    let (found, _) = query(json!({ "query": "desarrollo" }));
    assert_eq!(found, ["svc://notes/es.md"]);
    let (found, language) = query(json!({ "query": "desarrollo", "lang": "de" }));
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(language, "de");
    let (found, _) = query(json!({ "query": "desarrollo", "lang": "es" }));
    assert_eq!(found, ["svc://notes/es.md"]);
    let (found, _) = query(json!({ "query": "Entwicklung", "lang": "de" }));
    assert!(found.contains(&"svc://notes/de.md".to_string()), "{found:?}");
}
