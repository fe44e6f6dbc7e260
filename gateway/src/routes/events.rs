//! `GET /api/events`: Server-Sent Events. First frame `retry: 2000`, a comment keepalive
//! every 15 s, then `event: <kind>` / `data: <json>` frames pushed by the worker. A
//! `document-changed` event carries the change journal's cursor as its `id:`; a client that
//! reconnects with it as `Last-Event-ID` first gets the changes it missed, replayed from the
//! journal. A subscriber that reads too slowly, or whose missed changes cannot all be
//! replayed, gets `events-dropped` in place of what it missed, never a silent gap.

use crate::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use protocol::api::{DocumentChangedEvent, EventKind, EventsDroppedEvent};
use protocol::ChangeCursor;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;

/// Server-Sent Events: `document-changed`, `job-finished`, ... as the worker publishes them.
#[utoipa::path(get, path = "/api/events", tag = "system",
    params(("Last-Event-ID" = Option<String>, Header, description = "The `id:` of the last `document-changed` event received: the changes after it are sent first")),
    responses((status = 200, description = "An event stream that stays open", content_type = "text/event-stream", body = String)))]
pub async fn events(
    State(s): State<AppState>,
    headers: HeaderMap,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // Subscribed before the replay is read, so that nothing falls between the two.
    let live_events = s.worker.events();
    let resume = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| ChangeCursor::parse(v.trim()));
    let mut replayed: Vec<Result<Event, Infallible>> = Vec::new();
    let mut replayed_up_to = resume.map_or(0, |c| c.0);
    if let Some(after) = resume {
        match s.worker.call(protocol::ReplayEvents { after }).await.and_then(|r| r.decode()) {
            Ok(r) => {
                for e in &r.events {
                    replayed_up_to = replayed_up_to.max(sequence(e.change_id.as_deref()));
                    replayed.extend(document_changed(e).map(Ok));
                }
                if !r.complete {
                    replayed.extend(dropped(0).map(Ok));
                }
            }
            // The worker is not there to say what was missed: fetch again.
            Err(_) => replayed.extend(dropped(0).map(Ok)),
        }
    }
    let first = stream::once(async { Ok(Event::default().retry(Duration::from_millis(2000)).comment("connected")) });
    Sse::new(first.chain(stream::iter(replayed)).chain(live(live_events, replayed_up_to)))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)).text("keepalive"))
}

/// The worker's events as they come, past what the replay covered (`replayed_up_to`, a journal
/// sequence; 0 for none); a lag is told as `events-dropped`.
fn live(
    events: broadcast::Receiver<protocol::Event>,
    replayed_up_to: u64,
) -> impl Stream<Item = Result<Event, Infallible>> {
    BroadcastStream::new(events).filter_map(move |ev| async move {
        let ev = match ev {
            Ok(ev) => ev,
            // This subscriber read too slowly: it is told, to fetch what it shows again.
            Err(BroadcastStreamRecvError::Lagged(n)) => return dropped(n).map(Ok),
        };
        // Already replayed.
        if ev.kind == EventKind::DocumentChanged && replayed_up_to > 0 && sequence(ev.id.as_deref()) <= replayed_up_to {
            return None;
        }
        let data = String::from_utf8(ev.data.bytes).ok()?;
        Some(Ok(sse(ev.kind, ev.id, data)))
    })
}

/// One server-sent event: its name, its `id:` when it has one, its data.
fn sse(kind: EventKind, id: Option<String>, data: String) -> Event {
    let event = Event::default().event(kind.as_str()).data(data);
    match id {
        Some(id) => event.id(id),
        None => event,
    }
}

/// The journal sequence of an event id (0 for none).
fn sequence(id: Option<&str>) -> u64 {
    id.and_then(ChangeCursor::parse).map_or(0, |c| c.0)
}

fn document_changed(e: &DocumentChangedEvent) -> Option<Event> {
    Some(sse(EventKind::DocumentChanged, e.change_id.clone(), serde_json::to_string(e).ok()?))
}

fn dropped(n: u64) -> Option<Event> {
    Some(sse(EventKind::EventsDropped, None, serde_json::to_string(&EventsDroppedEvent::new(n)).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::JsonBody;

    fn changed(seq: u64) -> protocol::Event {
        protocol::Event {
            kind: EventKind::DocumentChanged,
            id: Some(ChangeCursor(seq).encode()),
            data: JsonBody::of(&serde_json::json!({ "seq": seq })).unwrap(),
        }
    }

    /// The SSE text of an event (axum's `Event` shows its buffer in its `Debug` form).
    fn text(e: &Event) -> String {
        format!("{e:?}")
    }

    #[tokio::test]
    async fn a_lagging_subscriber_is_told_and_then_goes_on() {
        let (tx, rx) = broadcast::channel(2);
        for seq in 1..=5 {
            tx.send(changed(seq)).unwrap();
        }
        drop(tx);
        let got: Vec<String> = live(rx, 0).map(|e| text(&e.unwrap())).collect().await;
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0].contains("events-dropped") && got[0].contains("\\\"dropped\\\":3"), "{got:?}");
        assert!(got[1].contains("document-changed") && got[1].contains(&ChangeCursor(4).encode()), "{got:?}");
    }

    #[tokio::test]
    async fn what_the_replay_covered_is_not_sent_twice() {
        let (tx, rx) = broadcast::channel(8);
        for seq in [3, 4, 5] {
            tx.send(changed(seq)).unwrap();
        }
        drop(tx);
        let got: Vec<String> = live(rx, 4).map(|e| text(&e.unwrap())).collect().await;
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].contains(&ChangeCursor(5).encode()), "{got:?}");
    }
}
