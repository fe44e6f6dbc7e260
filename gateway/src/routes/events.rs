//! `GET /api/events`: Server-Sent Events. First frame `retry: 2000`, a comment keepalive
//! every 15 s, then `event: <kind>` / `data: <json>` frames pushed by the worker. A subscriber
//! that reads too slowly gets `events-dropped` in place of what it missed, never a silent gap.

use crate::AppState;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use protocol::api::{EventKind, EventsDroppedEvent};
use std::convert::Infallible;
use std::time::Duration;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;

/// Server-Sent Events: `document-changed`, `job-finished`, ... as the worker publishes them.
#[utoipa::path(get, path = "/api/events", tag = "system",
    responses((status = 200, description = "An event stream that stays open", content_type = "text/event-stream", body = String)))]
pub async fn events(State(s): State<AppState>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let first = stream::once(async { Ok(Event::default().retry(Duration::from_millis(2000)).comment("connected")) });
    let live = BroadcastStream::new(s.worker.events()).filter_map(|ev| async move {
        let ev = match ev {
            Ok(ev) => ev,
            // This subscriber read too slowly: it is told, to fetch what it shows again.
            Err(BroadcastStreamRecvError::Lagged(n)) => {
                let data = serde_json::to_string(&EventsDroppedEvent::new(n)).ok()?;
                return Some(Ok(Event::default().event(EventKind::EventsDropped.as_str()).data(data)));
            }
        };
        let data = String::from_utf8(ev.data.bytes).ok()?;
        Some(Ok(Event::default().event(ev.kind.as_str()).data(data)))
    });
    Sse::new(first.chain(live)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)).text("keepalive"))
}
