//! A team: two svc members kept in step by a real NATS JetStream server (Debian's
//! `nats-server`, started here on loopback with its store in a temp dir), no mock.

use crate::common::{free_port, free_ports, uris, write_notes, Server};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One `nats-server` with JetStream on a loopback port.
struct Nats {
    port: u16,
    store: tempfile::TempDir,
    config: Option<PathBuf>,
    child: Option<Child>,
}

/// Debian's `nats-server` (in /usr/sbin, which a non-root PATH may not hold).
fn nats_server() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/bin".into()])
        .map(|d: PathBuf| d.join("nats-server"))
        .find(|p| p.is_file())
}

/// Whether `nats-server` is installed; under `scripts/test` (`SVC_TEST_REQUIRE_MODELS`) a
/// missing one fails the test instead of skipping it.
fn nats_ready(test: &str) -> bool {
    if nats_server().is_some() {
        return true;
    }
    assert!(std::env::var_os("SVC_TEST_REQUIRE_MODELS").is_none(), "{test}: nats-server is not installed");
    eprintln!("skipped {test}: nats-server is not installed (scripts/test installs it)");
    false
}

impl Nats {
    fn start() -> Nats {
        Self::start_with(None)
    }

    /// With a configuration (users, say) written to the store's folder.
    fn start_with(config: Option<&str>) -> Nats {
        Self::start_on(free_port(), config)
    }

    /// On `port` (which the caller chose free).
    fn start_on(port: u16, config: Option<&str>) -> Nats {
        let store = tempfile::tempdir().unwrap();
        let config = config.map(|text| {
            let p = store.path().join("nats.conf");
            std::fs::write(&p, text).unwrap();
            p
        });
        let mut n = Nats { port, store, config, child: None };
        n.spawn();
        n
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    fn spawn(&mut self) {
        let mut cmd = Command::new(nats_server().unwrap());
        cmd.args(["-js", "-a", "127.0.0.1", "-p", &self.port.to_string()]).arg("-sd").arg(self.store.path().join("js"));
        if let Some(c) = &self.config {
            cmd.arg("-c").arg(c);
        }
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.store.path().join("log")).unwrap();
        self.child = Some(cmd.stdout(Stdio::null()).stderr(log).spawn().expect("start nats-server"));
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let log = || std::fs::read_to_string(self.store.path().join("log")).unwrap_or_default();
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                panic!("nats-server exited ({status}) before it listened on {}:\n{}", self.port, log());
            }
            assert!(start.elapsed() < Duration::from_secs(15), "nats-server did not listen:\n{}", log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.stop();
    }
}

fn member(nats: &Nats, name: &str, extra: &[(&str, &str)]) -> Server {
    joined(&nats.url(), "eng", name, extra)
}

/// A server that joins `team` through the cluster at `urls` as `name`.
fn joined(urls: &str, team: &str, name: &str, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![("SVC_CLUSTER", urls), ("SVC_TEAM", team), ("SVC_MEMBER", name)];
    env.extend_from_slice(extra);
    Server::start_with(&env)
}

fn cluster(s: &Server) -> Value {
    s.get("/api/status").json()["cluster"].clone()
}

fn wait_connected(s: &Server) {
    s.wait_until(Duration::from_secs(30), |s| cluster(s)["connected"] == true);
}

fn wait_for(what: &str, within: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < within {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("{what}: not within {within:?}");
}

fn hits(s: &Server, word: &str) -> Vec<String> {
    uris(&s.search(json!({ "query": word })))
}

fn share(s: &Server, folder: &Path, name: &str) {
    let r = s.post("/api/collections", json!({ "path": folder, "name": name, "shared": true, "watch": true }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    let job = s.wait_job(r.json()["jobId"].as_str().unwrap());
    assert_eq!(job["status"], "completed", "{job}");
}

fn docid(s: &Server, uri: &str) -> String {
    s.get(&format!("/api/doc?uri={uri}")).json()["docid"].as_str().unwrap().replace('#', "%23")
}

/// Updates the note at `uri` (named by its URI: a docid changes with the note's content, which
/// another member may have changed meanwhile).
fn put(s: &Server, uri: &str, body: Value) -> crate::common::Resp {
    let id = docid(s, uri);
    s.request("PUT", &format!("/api/docs/{id}?uri={uri}"), Some(&body))
}

#[test]
fn a_team_shares_notes_both_ways_and_one_of_two_racing_writes_wins() {
    if !nats_ready("a_team_shares_notes_both_ways_and_one_of_two_racing_writes_wins") {
        return;
    }
    let nats = Nats::start();
    let a = member(&nats, "alpha", &[]);
    let b = member(&nats, "beta", &[]);
    wait_connected(&a);
    wait_connected(&b);
    let folder = a.path("team-notes");
    write_notes(
        &folder,
        &[("plan.md", "# Plan\n\nThe quokka migration starts Monday.\n"), ("sub/old.md", "# Old\n\nwombat\n")],
    );
    share(&a, &folder, "team");

    // A's notes reach B: listed as a shared replica, searchable and readable there.
    wait_for("A's notes searchable on B", Duration::from_secs(30), || hits(&b, "quokka") == ["svc://team/plan.md"]);
    let listed = b.get("/api/collections").json();
    let team = listed.as_array().unwrap().iter().find(|c| c["name"] == "team").cloned().unwrap();
    assert_eq!((team["shared"].clone(), team["replica"].clone()), (json!(true), json!(true)), "{team}");
    let doc = b.get("/api/doc?uri=svc://team/plan.md").json();
    assert!(doc["content"].as_str().unwrap().contains("quokka"), "{doc}");
    wait_for("the other note on B", Duration::from_secs(30), || hits(&b, "wombat") == ["svc://team/sub/old.md"]);

    // A note created through B lands as a file in A's folder and is searchable on A.
    let r = b.post(
        "/api/docs",
        json!({ "collection": "team", "relPath": "from-b.md", "content": "# From B\n\nA zebracorn.\n" }),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(hits(&b, "zebracorn"), ["svc://team/from-b.md"], "searchable on B at once");
    wait_for("B's note in A's folder", Duration::from_secs(20), || {
        std::fs::read_to_string(folder.join("from-b.md")).is_ok_and(|t| t == "# From B\n\nA zebracorn.\n")
    });
    wait_for("B's note searchable on A", Duration::from_secs(20), || hits(&a, "zebracorn") == ["svc://team/from-b.md"]);

    // Edits on A's disk (the watcher) reach B; a deletion too.
    std::fs::write(folder.join("plan.md"), "# Plan\n\nThe quokka migration starts Tuesday, with a numbat.\n").unwrap();
    wait_for("A's edit on B", Duration::from_secs(20), || hits(&b, "numbat") == ["svc://team/plan.md"]);
    std::fs::remove_file(folder.join("sub/old.md")).unwrap();
    wait_for("A's deletion on B", Duration::from_secs(20), || hits(&b, "wombat").is_empty());

    // Two members update the same note from the same version: one 2xx, one 409.
    let version = b.get("/api/doc?uri=svc://team/from-b.md").json();
    let hash = version["source"]["sourceHash"].as_str().unwrap().to_string();
    wait_for("A holds B's version", Duration::from_secs(20), || {
        a.get("/api/doc?uri=svc://team/from-b.md").json()["source"]["sourceHash"] == hash.as_str()
    });
    let (ra, rb) = std::thread::scope(|scope| {
        let ta = scope.spawn(|| {
            let body = json!({ "content": "# From B\n\nedited on A: axolotl\n", "expectedSourceHash": hash });
            put(&a, "svc://team/from-b.md", body)
        });
        let tb = scope.spawn(|| {
            let body = json!({ "content": "# From B\n\nedited on B: blobfish\n", "expectedSourceHash": hash });
            put(&b, "svc://team/from-b.md", body)
        });
        (ta.join().unwrap(), tb.join().unwrap())
    });
    let mut statuses = [ra.status, rb.status];
    statuses.sort();
    assert_eq!(
        statuses,
        [200, 409],
        "A: {} B: {}",
        String::from_utf8_lossy(&ra.body),
        String::from_utf8_lossy(&rb.body)
    );
    let loser = if ra.status == 409 { &ra } else { &rb };
    loser.assert_error(409, "CONFLICT");
    let winner = if ra.status == 200 { "axolotl" } else { "blobfish" };
    wait_for("the winner in A's file", Duration::from_secs(20), || {
        std::fs::read_to_string(folder.join("from-b.md")).is_ok_and(|t| t.contains(winner))
    });
    for s in [&a, &b] {
        wait_for("the winner searchable on both", Duration::from_secs(20), || {
            hits(s, winner) == ["svc://team/from-b.md"]
        });
    }

    // A burst from A: every note reaches B.
    let burst: Vec<(String, String)> =
        (0..60).map(|i| (format!("burst/n{i:03}.md"), format!("# Burst {i}\n\nburstword{i} and pangolin\n"))).collect();
    let refs: Vec<(&str, &str)> = burst.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    write_notes(&folder, &refs);
    wait_for("the burst on B", Duration::from_secs(60), || {
        b.search(json!({ "query": "pangolin", "limit": 50 }))["results"].as_array().map_or(0, |r| r.len()) == 50
    });
    wait_for("burstword59 on B", Duration::from_secs(30), || hits(&b, "burstword59") == ["svc://team/burst/n059.md"]);

    // Status: both members known, the replica caught up, no secret anywhere.
    wait_for("B caught up and both members heard", Duration::from_secs(30), || {
        let c = cluster(&b);
        let names: Vec<&str> = c["members"].as_array().unwrap().iter().filter_map(|m| m["name"].as_str()).collect();
        c["lag"] == 0 && names.contains(&"alpha") && names.contains(&"beta") && c["team"] == "eng"
    });
    // Every member lists the same documents with the same contents.
    wait_for("the same documents on both", Duration::from_secs(30), || {
        listing(&a, "team") == listing(&b, "team") && listing(&a, "team").len() == 62
    });
}

#[test]
fn without_the_cluster_shared_writes_answer_503_and_converge_once_it_is_back() {
    if !nats_ready("without_the_cluster_shared_writes_answer_503_and_converge_once_it_is_back") {
        return;
    }
    let mut nats = Nats::start();
    let a = member(&nats, "alpha", &[]);
    let b = member(&nats, "beta", &[]);
    wait_connected(&a);
    wait_connected(&b);
    let folder = a.path("shared");
    write_notes(&folder, &[("n.md", "# N\n\nfirst version\n")]);
    share(&a, &folder, "team");
    wait_for("the note on B", Duration::from_secs(30), || hits(&b, "first") == ["svc://team/n.md"]);
    let local = b.path("local");
    write_notes(&local, &[("l.md", "# L\n\nlocal note\n")]);
    b.add_collection(&local, "mine");

    nats.stop();
    wait_for("B sees the cluster gone", Duration::from_secs(30), || cluster(&b)["connected"] == false);
    let started = Instant::now();
    let r = put(&b, "svc://team/n.md", json!({ "content": "# N\n\nwritten while away\n" }));
    r.assert_error(503, "UNAVAILABLE");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    // Nothing half-written, reads go on from the replica, local collections take writes.
    assert_eq!(hits(&b, "first"), ["svc://team/n.md"]);
    assert!(hits(&b, "away").is_empty());
    let r =
        b.post("/api/docs", json!({ "collection": "mine", "relPath": "l2.md", "content": "# L2\n\nstill local\n" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    // An edit on A's disk while the cluster is away is published once it is back.
    std::fs::write(folder.join("n.md"), "# N\n\nsecond version, offline\n").unwrap();
    wait_for("A indexed its own edit", Duration::from_secs(20), || hits(&a, "offline") == ["svc://team/n.md"]);

    nats.spawn();
    wait_connected(&a);
    wait_connected(&b);
    wait_for("A's offline edit on B", Duration::from_secs(30), || hits(&b, "offline") == ["svc://team/n.md"]);
    let r = put(&b, "svc://team/n.md", json!({ "content": "# N\n\nthird version from B\n" }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    wait_for("B's write in A's folder", Duration::from_secs(20), || {
        std::fs::read_to_string(folder.join("n.md")).is_ok_and(|t| t.contains("third version"))
    });
}

#[test]
fn a_member_with_wrong_credentials_is_refused_and_the_password_is_shown_nowhere() {
    if !nats_ready("a_member_with_wrong_credentials_is_refused_and_the_password_is_shown_nowhere") {
        return;
    }
    let nats = Nats::start_with(Some("authorization { user: svc, password: right-horse-battery }\n"));
    let secret = "wrong-staple-7731";
    let m =
        member(&nats, "gamma", &[("SVC_CLUSTER_USER", "svc"), ("SVC_CLUSTER_PASSWORD", secret), ("SVC_LOG", "info")]);
    m.wait_until(Duration::from_secs(30), |s| cluster(s)["error"].as_str().is_some_and(|e| !e.is_empty()));
    let status = m.get("/api/status");
    let c = status.json()["cluster"].clone();
    assert_eq!(c["connected"], false, "{c}");
    assert!(c["error"].as_str().unwrap().to_lowercase().contains("auth"), "{c}");
    assert!(!String::from_utf8_lossy(&status.body).contains(secret));
    assert!(!m.log().contains(secret), "the log holds the password");

    // The right password joins.
    let ok = member(&nats, "delta", &[("SVC_CLUSTER_USER", "svc"), ("SVC_CLUSTER_PASSWORD", "right-horse-battery")]);
    wait_connected(&ok);
}

/// A CA and a certificate for 127.0.0.1 it signed, made with `openssl` in `dir`: `ca.pem`,
/// `server.pem`, `server-key.pem`. `None` (the test says it skipped) without `openssl`.
fn make_certs(dir: &Path, test: &str) -> Option<()> {
    let openssl = |args: &[&str]| {
        Command::new("openssl").args(args).current_dir(dir).stdout(Stdio::null()).stderr(Stdio::null()).status()
    };
    if openssl(&["version"]).is_err() {
        assert!(std::env::var_os("SVC_TEST_REQUIRE_MODELS").is_none(), "{test}: openssl is not installed");
        eprintln!("skipped {test}: openssl is not installed");
        return None;
    }
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    let steps: [Vec<&str>; 3] = [
        [
            &["req", "-x509"][..],
            &ec,
            &["-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=svc test CA"],
        ]
        .concat(),
        [&["req"][..], &ec, &["-keyout", "server-key.pem", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]].concat(),
        vec![
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ],
    ];
    for step in steps {
        assert!(openssl(&step).unwrap().success(), "openssl {step:?} failed");
    }
    Some(())
}

/// The permissions `docs/team.md` documents for a member of team `team`.
fn member_permissions(team: &str) -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/team.md")).unwrap();
    let start = doc.find("permissions: {").expect("docs/team.md documents a permission set");
    let block = &doc[start..];
    let end = block.find("} }").expect("the permission set ends") + 1;
    block[..end].replace("eng", team)
}

#[test]
fn over_tls_with_its_own_ca_a_member_is_confined_to_its_teams_subjects() {
    let test = "team::over_tls_with_its_own_ca_a_member_is_confined_to_its_teams_subjects";
    let certs = tempfile::tempdir().unwrap();
    if !nats_ready(test) || make_certs(certs.path(), test).is_none() {
        return;
    }
    let pem = |name: &str| certs.path().join(name).display().to_string();
    let config = format!(
        "tls {{ cert_file: \"{}\", key_file: \"{}\" }}\nauthorization {{ users: [\n  {{ user: eng, password: eng-secret, {} }}\n  {{ user: ops, password: ops-secret, {} }}\n] }}\n",
        pem("server.pem"),
        pem("server-key.pem"),
        member_permissions("eng"),
        member_permissions("ops"),
    );
    let nats = Nats::start_with(Some(&config));
    let url = format!("tls://127.0.0.1:{}", nats.port);
    let ca = pem("ca.pem");
    let eng = [("SVC_CLUSTER_USER", "eng"), ("SVC_CLUSTER_PASSWORD", "eng-secret"), ("SVC_CLUSTER_CA", ca.as_str())];
    let ops = [("SVC_CLUSTER_USER", "ops"), ("SVC_CLUSTER_PASSWORD", "ops-secret"), ("SVC_CLUSTER_CA", ca.as_str())];

    // Two members of eng over TLS, each with the documented permissions and nothing more.
    let a = joined(&url, "eng", "alpha", &eng);
    let b = joined(&url, "eng", "beta", &eng);
    wait_connected(&a);
    wait_connected(&b);
    let folder = a.path("notes");
    write_notes(&folder, &[("tls.md", "# Over TLS\n\nthe encrypted narwhal\n")]);
    share(&a, &folder, "eng-notes");
    wait_for("A's note on B", Duration::from_secs(30), || hits(&b, "narwhal") == ["svc://eng-notes/tls.md"]);
    let r = b.post("/api/docs", json!({ "collection": "eng-notes", "relPath": "b.md", "content": "# B\n\nbeluga\n" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    wait_for("B's note in A's folder", Duration::from_secs(20), || folder.join("b.md").is_file());

    // A file larger than one message travels through the team's object store (within the
    // same permissions): its versions, and its deletion.
    let big = |word: &str| format!("# Big\n\n{}{word}\n", "filler text for a large note. ".repeat(50_000));
    std::fs::write(folder.join("big.md"), big("leviathan")).unwrap();
    wait_for("the large note on B", Duration::from_secs(60), || hits(&b, "leviathan") == ["svc://eng-notes/big.md"]);
    let on_b = b.get("/api/doc?uri=svc://eng-notes/big.md").json();
    assert_eq!(on_b["content"].as_str().unwrap().len(), big("leviathan").len());
    std::fs::write(folder.join("big.md"), big("kraken")).unwrap();
    wait_for("its new version on B", Duration::from_secs(60), || {
        hits(&b, "kraken") == ["svc://eng-notes/big.md"] && hits(&b, "leviathan").is_empty()
    });
    std::fs::remove_file(folder.join("big.md")).unwrap();
    wait_for("its deletion on B", Duration::from_secs(30), || hits(&b, "kraken").is_empty());
    assert_eq!(cluster(&a)["unpublished"], 0, "{}", cluster(&a));
    assert!(!a.log().contains("stay in the object store"), "an old version's bytes were not deleted: {}", a.log());

    // Without the CA the server's certificate is not trusted: never connected.
    let untrusting = joined(&url, "eng", "gamma", &eng[..2]);
    // ops' credentials cannot join eng: its subjects and stream are not ops'.
    let intruder = joined(&url, "eng", "delta", &ops);
    // ops' own team works with the same permission set.
    let own = joined(&url, "ops", "epsilon", &ops);
    wait_connected(&own);
    for s in [&untrusting, &intruder] {
        s.wait_until(Duration::from_secs(30), |s| cluster(s)["error"].as_str().is_some_and(|e| !e.is_empty()));
    }
    std::thread::sleep(Duration::from_secs(3));
    for s in [&untrusting, &intruder, &own] {
        assert!(hits(s, "narwhal").is_empty(), "eng's notes reached a member outside it");
        assert!(s.get("/api/collections").json().as_array().unwrap().is_empty());
    }
    for s in [&untrusting, &intruder] {
        let c = cluster(s);
        assert_eq!(c["connected"], false, "{c}");
        let body = s.get("/api/status").body;
        assert!(!String::from_utf8_lossy(&body).contains("secret"), "a password in the status");
    }
    let refused = cluster(&intruder)["error"].as_str().unwrap().to_lowercase();
    assert!(refused.contains("permissions violation") && refused.contains("svc_eng"), "{refused}");
    assert!(!untrusting.log().contains("eng-secret") && !intruder.log().contains("ops-secret"));
}

#[test]
fn a_collection_is_shared_only_by_a_server_that_joined_a_team() {
    let s = Server::start();
    let folder = s.path("notes");
    write_notes(&folder, &[("a.md", "# A\n\nx\n")]);
    let r = s.post("/api/collections", json!({ "path": folder, "name": "n", "shared": true }));
    r.assert_error(400, "VALIDATION");
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("team"), "{}", r.json());
    let r = s.post("/api/collections", json!({ "path": folder, "name": "n", "shared": "yes" }));
    r.assert_error(400, "VALIDATION");
    assert!(s.get("/api/status").json().get("cluster").is_none());
}

#[test]
fn a_cluster_the_egress_policy_does_not_allow_is_not_joined() {
    let s = Server::start_with(&[("SVC_CLUSTER", "nats://10.9.8.7:4222"), ("SVC_TEAM", "eng")]);
    let folder = s.path("notes");
    write_notes(&folder, &[("a.md", "# A\n\nx\n")]);
    let r = s.post("/api/collections", json!({ "path": folder, "name": "n", "shared": true }));
    r.assert_error(400, "VALIDATION");
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("local_only"), "{}", r.json());
}

/// Three `nats-server` nodes with routes and JetStream: an R3 stream.
struct NatsCluster {
    nodes: Vec<Nats>,
}

impl NatsCluster {
    fn start() -> NatsCluster {
        // Six ports held at once, so no two are the same (one port let go and asked for again
        // may come back: a node whose client port was another's route port never listened).
        let ports = free_ports(6);
        let (client_ports, route_ports) = ports.split_at(3);
        let routes: Vec<String> = route_ports.iter().map(|p| format!("nats-route://127.0.0.1:{p}")).collect();
        let nodes = (0..3)
            .map(|i| {
                let config = format!(
                    "server_name: n{i}\ncluster {{\n  name: svc-test\n  listen: 127.0.0.1:{}\n  routes: [{}]\n}}\n",
                    route_ports[i],
                    routes.join(", ")
                );
                Nats::start_on(client_ports[i], Some(&config))
            })
            .collect();
        NatsCluster { nodes }
    }

    fn urls(&self) -> String {
        self.nodes.iter().map(Nats::url).collect::<Vec<_>>().join(",")
    }
}

#[test]
fn with_three_nodes_one_may_die_during_writes() {
    if !nats_ready("with_three_nodes_one_may_die_during_writes") {
        return;
    }
    let mut nats = NatsCluster::start();
    let urls = nats.urls();
    let a = joined(&urls, "ops", "alpha", &[]);
    let b = joined(&urls, "ops", "beta", &[]);
    wait_connected(&a);
    wait_connected(&b);
    let folder = a.path("ops");
    write_notes(&folder, &[("runbook.md", "# Runbook\n\nrestart the gizzard service\n")]);
    share(&a, &folder, "ops");
    wait_for("the runbook on B", Duration::from_secs(60), || hits(&b, "gizzard") == ["svc://ops/runbook.md"]);

    // Notes created through B while a node dies: each is acknowledged (a write the cluster
    // could not take in the moment answers 503 and is tried again) and reaches A.
    for i in 0..20 {
        if i == 5 {
            nats.nodes[0].stop();
        }
        let body = json!({ "collection": "ops", "relPath": format!("b/{i}.md"), "content": format!("# B {i}\n\nkestrel{i}\n") });
        let started = Instant::now();
        loop {
            let r = b.post("/api/docs", body.clone());
            if r.status == 202 {
                break;
            }
            r.assert_error(503, "UNAVAILABLE");
            assert!(started.elapsed() < Duration::from_secs(30), "note {i} was never acknowledged");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    for i in [0, 7, 19] {
        wait_for("B's notes in A's folder", Duration::from_secs(60), || folder.join(format!("b/{i}.md")).is_file());
        wait_for("B's notes on A", Duration::from_secs(30), || {
            hits(&a, &format!("kestrel{i}")) == [format!("svc://ops/b/{i}.md")]
        });
    }
}

#[test]
fn a_member_stopped_while_others_write_catches_up_and_a_killed_worker_leaves_no_gap() {
    if !nats_ready("a_member_stopped_while_others_write_catches_up_and_a_killed_worker_leaves_no_gap") {
        return;
    }
    let nats = Nats::start();
    let a = member(&nats, "alpha", &[]);
    let mut b = member(&nats, "beta", &[]);
    wait_connected(&a);
    wait_connected(&b);
    let folder = a.path("notes");
    write_notes(
        &folder,
        &[
            ("keep.md", "# Keep\n\nunchanged\n"),
            ("edit.md", "# Edit\n\nbefore\n"),
            ("gone.md", "# Gone\n\nremoved later\n"),
            ("old-name.md", "# Moved\n\nmovable marmot\n"),
        ],
    );
    share(&a, &folder, "t");
    wait_for("the notes on B", Duration::from_secs(30), || hits(&b, "marmot") == ["svc://t/old-name.md"]);

    // B is away while A creates, edits, deletes and renames.
    b.stop();
    write_notes(&folder, &[("new.md", "# New\n\nwhile beta slept: ocelot\n")]);
    std::fs::write(folder.join("edit.md"), "# Edit\n\nafter: serval\n").unwrap();
    std::fs::remove_file(folder.join("gone.md")).unwrap();
    std::fs::rename(folder.join("old-name.md"), folder.join("new-name.md")).unwrap();
    wait_for("A indexed its changes", Duration::from_secs(20), || {
        hits(&a, "ocelot").len() == 1 && hits(&a, "serval").len() == 1 && hits(&a, "marmot") == ["svc://t/new-name.md"]
    });
    b.spawn();
    wait_connected(&b);
    wait_for("B caught up", Duration::from_secs(30), || {
        hits(&b, "ocelot") == ["svc://t/new.md"]
            && hits(&b, "serval") == ["svc://t/edit.md"]
            && hits(&b, "removed").is_empty()
            && hits(&b, "marmot") == ["svc://t/new-name.md"]
    });

    // A burst while B's worker is killed in the middle of applying it: after the restart B
    // holds every note once, with its content.
    let burst: Vec<(String, String)> =
        (0..150).map(|i| (format!("burst/{i:03}.md"), format!("# N{i}\n\nlynx{i} caracal\n"))).collect();
    let refs: Vec<(&str, &str)> = burst.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    write_notes(&folder, &refs);
    wait_for("part of the burst on B", Duration::from_secs(30), || !hits(&b, "caracal").is_empty());
    let worker = b.child_pid("worker").unwrap();
    crate::common::nix_kill(worker, libc::SIGKILL);
    wait_for("B's worker back", Duration::from_secs(30), || b.child_pid("worker").is_some_and(|p| p != worker));
    let total = |s: &Server| s.get("/api/docs?collection=t&limit=1").json()["total"].as_u64().unwrap_or(0);
    wait_for("the whole burst on B", Duration::from_secs(60), || total(&b) == total(&a) && total(&a) == 154);
    for i in [0, 77, 149] {
        wait_for("a burst note searchable on B", Duration::from_secs(20), || {
            hits(&b, &format!("lynx{i}")) == [format!("svc://t/burst/{i:03}.md")]
        });
    }
    wait_for("B's lag 0", Duration::from_secs(20), || cluster(&b)["lag"] == 0);
}

/// A member that joins once the stream holds thousands of notes takes them in large batches
/// (more than the server's default of 1,000 unacknowledged messages, more than a pull's 200):
/// every note reaches it, none skipped.
#[test]
fn a_member_that_joins_after_thousands_of_notes_holds_every_one() {
    if !nats_ready("a_member_that_joins_after_thousands_of_notes_holds_every_one") {
        return;
    }
    const NOTES: u64 = 3_000;
    let nats = Nats::start();
    let a = member(&nats, "alpha", &[]);
    wait_connected(&a);
    let folder = a.path("notes");
    let notes: Vec<(String, String)> =
        (0..NOTES).map(|i| (format!("n/{i:04}.md"), format!("# N{i}\n\nquokka{i} wombat\n"))).collect();
    let refs: Vec<(&str, &str)> = notes.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    write_notes(&folder, &refs);
    share(&a, &folder, "t");
    wait_for("A published every note", Duration::from_secs(120), || {
        let c = cluster(&a);
        c["streamSeq"].as_u64().unwrap_or(0) >= NOTES && c["unpublished"] == 0
    });
    let b = member(&nats, "beta", &[]);
    wait_connected(&b);
    let total = |s: &Server| s.get("/api/docs?collection=t&limit=1").json()["total"].as_u64().unwrap_or(0);
    wait_for("every note on B", Duration::from_secs(120), || total(&b) == NOTES && cluster(&b)["lag"] == 0);
    for i in [0, 1_499, NOTES - 1] {
        assert_eq!(hits(&b, &format!("quokka{i}")), [format!("svc://t/n/{i:04}.md")]);
    }
}

/// Every note's vector search score on `s`, by URI (all of the collection's notes).
fn vector_scores(s: &Server, query: &str) -> Vec<(String, i64)> {
    let r = s.post("/api/vsearch", json!({ "query": query, "limit": 100 }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let mut out: Vec<(String, i64)> = r.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["uri"].as_str().unwrap().to_string(), (h["score"].as_f64().unwrap() * 1e5).round() as i64))
        .collect();
    out.sort();
    out
}

/// A member with the team's embedder, its models installed.
fn embedding_member(nats: &Nats, name: &str) -> Server {
    let s = member(nats, name, &[]);
    let tiny = crate::models::test_models().join("tiny");
    crate::models::install(&s.path("cache"), &tiny.join("embed"), crate::models::EMBED);
    wait_connected(&s);
    s
}

#[test]
fn a_member_that_joins_later_takes_the_vectors_from_the_stream_and_embeds_nothing() {
    let test = "team::a_member_that_joins_later_takes_the_vectors_from_the_stream_and_embeds_nothing";
    if !nats_ready(test) || !crate::prepared::models(test) {
        return;
    }
    const NOTES: usize = 40;
    let nats = Nats::start();
    let a = embedding_member(&nats, "alpha");
    let folder = a.path("team-notes");
    let notes: Vec<(String, String)> = (0..NOTES)
        .map(|i| (format!("n{i:02}.md"), format!("# Note {i}\n\nvectorword{i} about topic {i} and the team.\n")))
        .collect();
    let refs: Vec<(&str, &str)> = notes.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    write_notes(&folder, &refs);
    share(&a, &folder, "team");
    crate::models::wait_embedded(&a);
    // Published at once, the vectors follow once A has embedded the notes.
    wait_for("A sent every note's vectors", Duration::from_secs(60), || cluster(&a)["vectorsSent"] == NOTES);

    // B joins afterwards: its replica comes with the vectors, and nothing is embedded there.
    let b = embedding_member(&nats, "beta");
    let count = |s: &Server| s.get("/api/status").json()["collections"][0]["documentCount"].as_u64().unwrap_or(0);
    wait_for("B's replica", Duration::from_secs(60), || count(&b) == NOTES as u64);
    crate::models::wait_embedded(&b);
    assert_eq!(cluster(&b)["vectorsReceived"], NOTES, "{}", cluster(&b));
    assert_eq!(cluster(&b)["vectorsSent"], 0, "a replica sends no vectors: {}", cluster(&b));
    assert_eq!(vector_scores(&b, "topic 7 and the team"), vector_scores(&a, "topic 7 and the team"));

    // An edit once B is there: B embeds it itself; A sends its vectors for members to come.
    std::fs::write(folder.join("n00.md"), "# Note 0\n\nrewritten: lemming\n").unwrap();
    wait_for("the edit on B", Duration::from_secs(30), || hits(&b, "lemming") == ["svc://team/n00.md"]);
    crate::models::wait_embedded(&b);
    wait_for("A sent the edit's vectors", Duration::from_secs(60), || cluster(&a)["vectorsSent"] == NOTES + 1);
    // B knew the edit before its vectors came (unless both reached it in one batch).
    assert!(cluster(&b)["vectorsReceived"].as_u64().unwrap() <= NOTES as u64 + 1, "{}", cluster(&b));

    // A third member takes every note's latest version with its vectors.
    let c = embedding_member(&nats, "gamma");
    wait_for("C's replica", Duration::from_secs(60), || count(&c) == NOTES as u64);
    crate::models::wait_embedded(&c);
    assert_eq!(cluster(&c)["vectorsReceived"], NOTES, "{}", cluster(&c));
    assert_eq!(hits(&c, "lemming"), ["svc://team/n00.md"]);
    assert_eq!(vector_scores(&c, "rewritten"), vector_scores(&a, "rewritten"));
}

/// The bounded team soak: writers on two members (API creates through B, files written on
/// A's disk) while NATS nodes and both workers are SIGKILLed in turn; afterwards every
/// acknowledged write is on both members and the two replicas list the same documents.
/// Bounded (about half a minute): `scripts/test` runs it with the rest. In stop 63 it passed 3
/// runs of 5; stop 64 mended two causes of a soak waiting out the test: a consumer a NATS
/// restart leaves stranded delivers nothing (now made again after two quiet periods with the
/// stream ahead), and a member's idea of the stream's last sequence stayed above what the
/// stream held after two nodes were killed (seen once; now read from the stream when quiet).
/// Passed 16 of 16 runs after that, 9 of them beside other tests.
#[test]
fn team_soak_writers_on_two_members_while_nodes_and_workers_are_killed() {
    let test = "team_soak_writers_on_two_members_while_nodes_and_workers_are_killed";
    if !nats_ready(test) {
        return;
    }
    let mut nats = NatsCluster::start();
    let urls = nats.urls();
    let a = joined(&urls, "soak", "alpha", &[]);
    let b = joined(&urls, "soak", "beta", &[]);
    wait_connected(&a);
    wait_connected(&b);
    let folder = a.path("soak");
    write_notes(&folder, &[("seed.md", "# Seed\n\nthe first note\n")]);
    share(&a, &folder, "soak");
    wait_for("the seed on B", Duration::from_secs(60), || hits(&b, "first") == ["svc://soak/seed.md"]);

    let stop = AtomicBool::new(false);
    let (acked_b, written_a) = std::thread::scope(|scope| {
        let api_writer = scope.spawn(|| {
            let mut acked = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let rel = format!("b/{i:03}.md");
                let body = json!({ "collection": "soak", "relPath": rel, "content": format!("# B{i}\n\nbword{i}\n") });
                let r = b.post("/api/docs", body);
                match r.status {
                    202 => acked.push(i),
                    // Not acknowledged: the worker restarting, or the cluster not taking it now.
                    503 | 409 => {}
                    other => panic!("create {i}: {other} {}", String::from_utf8_lossy(&r.body)),
                }
                i += 1;
                std::thread::sleep(Duration::from_millis(60));
            }
            acked
        });
        let disk_writer = scope.spawn(|| {
            let mut written = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let rel = format!("a/{i:03}.md");
                std::fs::create_dir_all(folder.join("a")).unwrap();
                std::fs::write(folder.join(&rel), format!("# A{i}\n\naword{i}\n")).unwrap();
                written.push(i);
                i += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
            written
        });
        // Kills in turn: a NATS node (back after a second), A's worker, B's worker.
        for round in 0..6 {
            std::thread::sleep(Duration::from_secs(3));
            match round % 3 {
                0 => {
                    let n = &mut nats.nodes[round / 3];
                    n.stop();
                    std::thread::sleep(Duration::from_secs(1));
                    n.spawn();
                }
                1 => {
                    if let Some(pid) = a.child_pid("worker") {
                        crate::common::nix_kill(pid, libc::SIGKILL);
                    }
                }
                _ => {
                    if let Some(pid) = b.child_pid("worker") {
                        crate::common::nix_kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_secs(2));
        stop.store(true, Ordering::SeqCst);
        (api_writer.join().unwrap(), disk_writer.join().unwrap())
    });
    assert!(acked_b.len() >= 20, "B acknowledged only {} creates", acked_b.len());
    wait_connected(&a);
    wait_connected(&b);
    for i in &acked_b {
        let rel = format!("b/{i:03}.md");
        wait_for(&format!("B's acknowledged {rel} in A's folder"), Duration::from_secs(60), || {
            std::fs::read_to_string(folder.join(&rel)).is_ok_and(|t| t == format!("# B{i}\n\nbword{i}\n"))
        });
    }
    let total = |s: &Server| s.get("/api/docs?collection=soak&limit=1").json()["total"].as_u64().unwrap_or(0);
    let on_disk =
        std::fs::read_dir(folder.join("a")).unwrap().count() + std::fs::read_dir(folder.join("b")).unwrap().count() + 1;
    let agreed = || total(&a) == on_disk as u64 && total(&b) == on_disk as u64;
    let started = Instant::now();
    while !agreed() && started.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(100));
    }
    if !agreed() {
        let listed = |s: &Server| -> std::collections::BTreeSet<String> {
            let mut paths = std::collections::BTreeSet::new();
            for offset in (0..on_disk + 100).step_by(100) {
                let page = s.get(&format!("/api/docs?collection=soak&limit=100&offset={offset}")).json();
                for d in page["documents"].as_array().into_iter().flatten() {
                    paths.insert(d["relPath"].as_str().unwrap_or_default().to_string());
                }
            }
            paths
        };
        let (on_a, on_b) = (listed(&a), listed(&b));
        let mut disk: std::collections::BTreeSet<String> = ["seed.md".to_string()].into();
        for sub in ["a", "b"] {
            for e in std::fs::read_dir(folder.join(sub)).unwrap().flatten() {
                disk.insert(format!("{sub}/{}", e.file_name().to_string_lossy()));
            }
        }
        panic!(
            "on disk {on_disk}, A {}, B {}; not on A: {:?}; not on B: {:?}\nB: {}\nA: {}\nB's log: {}\nA's log: {}",
            total(&a),
            total(&b),
            disk.difference(&on_a).collect::<Vec<_>>(),
            disk.difference(&on_b).collect::<Vec<_>>(),
            cluster(&b),
            cluster(&a),
            b.log().lines().filter(|l| l.contains("team")).rev().take(40).collect::<Vec<_>>().join("\n"),
            a.log().lines().filter(|l| l.contains("team")).rev().take(40).collect::<Vec<_>>().join("\n"),
        );
    }
    for i in [written_a[0], written_a[written_a.len() / 2], written_a[written_a.len() - 1]] {
        wait_for("A's disk writes on B", Duration::from_secs(30), || {
            hits(&b, &format!("aword{i}")) == [format!("svc://soak/a/{i:03}.md")]
        });
    }
    for i in [acked_b[0], acked_b[acked_b.len() - 1]] {
        wait_for("B's writes searchable on A", Duration::from_secs(30), || {
            hits(&a, &format!("bword{i}")) == [format!("svc://soak/b/{i:03}.md")]
        });
    }
    let started = Instant::now();
    while cluster(&b)["lag"] != 0 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        cluster(&b)["lag"],
        0,
        "B: {}\nA: {}\nB's log: {}",
        cluster(&b),
        cluster(&a),
        b.log().lines().rev().take(30).collect::<Vec<_>>().join("\n")
    );
}

/// A member's network path to the cluster that a test cuts as a partition does: bytes stop
/// both ways and nothing is reset (no FIN, no RST: the member learns of it only from its own
/// timeouts), new connections hang, and once healed the bytes held meanwhile flow on, as TCP's
/// retransmissions would deliver them. Its threads end with the test's process.
struct Partition {
    port: u16,
    cut: Arc<AtomicBool>,
}

impl Partition {
    /// A path to 127.0.0.1:`upstream`, whole.
    fn to(upstream: u16) -> Partition {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cut);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let cut = Arc::clone(&flag);
                std::thread::spawn(move || {
                    Partition::hold(&cut);
                    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { return };
                    let (Ok(client_out), Ok(server_out)) = (client.try_clone(), server.try_clone()) else { return };
                    let up = Arc::clone(&cut);
                    std::thread::spawn(move || Partition::pump(client, server_out, &up));
                    Partition::pump(server, client_out, &cut);
                });
            }
        });
        Partition { port, cut }
    }

    /// Returns once the path is whole.
    fn hold(cut: &AtomicBool) {
        while cut.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Copies `from` to `to`, holding what it read (and the end of the stream) while the path
    /// is cut.
    fn pump(mut from: TcpStream, mut to: TcpStream, cut: &AtomicBool) {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            Partition::hold(cut);
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        Partition::hold(cut);
        let _ = to.shutdown(Shutdown::Write);
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
    }

    fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// (URI, docid) of every document of `collection` on `s`, sorted: a docid changes with the
/// content, so equal listings are equal contents.
fn listing(s: &Server, collection: &str) -> Vec<(String, String)> {
    let mut docs: Vec<(String, String)> = s.get(&format!("/api/docs?collection={collection}&limit=100")).json()
        ["documents"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| (d["uri"].as_str().unwrap_or("").to_string(), d["docid"].as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    docs.sort();
    docs
}

#[test]
fn a_member_partitioned_away_answers_from_its_replica_and_converges_once_healed() {
    if !nats_ready("a_member_partitioned_away_answers_from_its_replica_and_converges_once_healed") {
        return;
    }
    let nats = Nats::start();
    let path = Partition::to(nats.port);
    let a = member(&nats, "alpha", &[]);
    let b = joined(&path.url(), "eng", "beta", &[]);
    wait_connected(&a);
    wait_connected(&b);
    let folder = a.path("shared");
    write_notes(
        &folder,
        &[
            ("n.md", "# N\n\nbefore the partition\n"),
            ("gone.md", "# Gone\n\nsoon deleted\n"),
            ("keep.md", "# K\n\nkept\n"),
        ],
    );
    share(&a, &folder, "team");
    wait_for("the notes on B", Duration::from_secs(30), || {
        listing(&b, "team").len() == 3 && hits(&b, "soon").len() == 1
    });
    let local = b.path("local");
    write_notes(&local, &[("l.md", "# L\n\nlocal note\n")]);
    b.add_collection(&local, "mine");

    path.cut();
    // A shared write on B cannot be acknowledged: 503 within the publish timeout, nothing of
    // it on B. (Its bytes are held on the cut path, as the network would hold them; A's edit
    // of the same note below makes the stream refuse them if they arrive after the heal.)
    let started = Instant::now();
    let r = put(&b, "svc://team/n.md", json!({ "content": "# N\n\nwritten by beta while cut off\n" }));
    r.assert_error(503, "UNAVAILABLE");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(hits(&b, "cut").is_empty());
    // A goes on: a note created, one edited on disk, one deleted.
    let r = a.post("/api/docs", json!({ "collection": "team", "relPath": "new.md", "content": "# New\n\nnarwhal\n" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    std::fs::write(folder.join("n.md"), "# N\n\nedited on alpha during the partition: dugong\n").unwrap();
    std::fs::remove_file(folder.join("gone.md")).unwrap();
    wait_for("A indexed its changes", Duration::from_secs(20), || {
        hits(&a, "dugong") == ["svc://team/n.md"] && hits(&a, "soon").is_empty()
    });
    // B answers from its replica meanwhile, and its own collections take writes.
    assert_eq!(hits(&b, "before"), ["svc://team/n.md"]);
    assert!(hits(&b, "narwhal").is_empty());
    let r =
        b.post("/api/docs", json!({ "collection": "mine", "relPath": "l2.md", "content": "# L2\n\nstill local\n" }));
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
    // Nothing reset the connection: B learns of the partition from its pings, and says so.
    wait_for("B's status says it is cut off", Duration::from_secs(60), || cluster(&b)["connected"] == false);

    path.heal();
    wait_connected(&b);
    wait_for("B converged with A", Duration::from_secs(60), || {
        let on_a = listing(&a, "team");
        on_a.len() == 3 && listing(&b, "team") == on_a
    });
    wait_for("B's keyword index caught up", Duration::from_secs(20), || {
        hits(&b, "dugong") == ["svc://team/n.md"]
            && hits(&b, "narwhal") == ["svc://team/new.md"]
            && hits(&b, "soon").is_empty()
    });
    assert!(hits(&b, "cut").is_empty());
    assert!(std::fs::read_to_string(folder.join("n.md")).unwrap().contains("dugong"), "the 503 write never landed");
    // Healed, B's writes are acknowledged again and land in A's folder.
    let r = put(&b, "svc://team/n.md", json!({ "content": "# N\n\nafter the heal, from beta\n" }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    wait_for("B's write in A's folder", Duration::from_secs(20), || {
        std::fs::read_to_string(folder.join("n.md")).is_ok_and(|t| t.contains("after the heal"))
    });
    wait_for("B's lag 0", Duration::from_secs(20), || cluster(&b)["lag"] == 0);
}
