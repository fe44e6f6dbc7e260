//! `POST /api/ask`: an answer with citations, as one JSON reply, or with
//! `Accept: text/event-stream` as Server-Sent Events: a `token` event per piece of generated
//! text, then one `answer` event with the complete reply (or an `error` event with the
//! error envelope when generation fails mid-way).

use crate::bodies::AskBody;
use crate::error::{error_response, ApiReply};
use crate::extract::Body;
use crate::AppState;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, StreamExt};
use protocol::api::{AnswerToken, AskReply};
use protocol::{ApiError, AskCall, JsonBody};
use std::convert::Infallible;
use tokio_stream::wrappers::UnboundedReceiverStream;

/// An answer from the local generator, grounded in the best sources for the question.
#[utoipa::path(post, path = "/api/ask", tag = "search", request_body = AskBody,
    responses((status = 200, description = "The answer with its citations and sources (`AskResponse`; with `verify: true`, `VerifiedAskResponse`); with `Accept: text/event-stream`, `token` events (`AnswerToken`) and one `answer` event holding the reply",
                content((AskReply = "application/json"), (String = "text/event-stream"))),
              (status = 404, description = "Unknown collection", body = protocol::ErrorEnvelope),
              (status = 503, description = "No generation model loaded", body = protocol::ErrorEnvelope)))]
pub async fn ask(State(s): State<AppState>, headers: HeaderMap, Body(b): Body<AskBody>) -> Response {
    let stream = wants_event_stream(&headers);
    let ask = match b.into_request(stream) {
        Ok(r) => r.into_call(),
        Err(e) => return error_response(&e),
    };
    if !stream {
        return match ask {
            AskCall::Raw(ask) => ApiReply::ok(s.worker.call(ask).await),
            AskCall::Verified(ask) => ApiReply::ok(s.worker.call(ask).await),
        }
        .into_response();
    }
    let (mut parts, reply) = match s.worker.call_streamed(ask).await {
        Ok(call) => call,
        Err(e) => return error_response(&e),
    };
    // Until the first token, a failure is still an ordinary error reply with its status. The
    // parts end with the reply, or at the call's deadline (then the reply is a 503).
    let deadline = reply.deadline();
    let Ok(Some(first)) = tokio::time::timeout_at(deadline, parts.recv()).await else {
        return match reply.get().await {
            Ok(body) => events(stream::once(async move { answer_event(body) }).boxed()),
            Err(e) => error_response(&e),
        };
    };
    // A client that goes away drops the stream, and with it this guard: the worker stops
    // generating for nobody.
    let cancel = reply.cancel_on_drop();
    let tokens = stream::once(async move { first })
        .chain(UnboundedReceiverStream::new(parts))
        .take_until(tokio::time::sleep_until(deadline))
        .map(token_event);
    let last = stream::once(async move {
        let _cancel = cancel;
        match reply.get().await {
            Ok(body) => answer_event(body),
            Err(e) => error_event(&e),
        }
    });
    events(tokens.chain(last).boxed())
}

fn wants_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream")))
}

fn events(s: futures_util::stream::BoxStream<'static, Event>) -> Response {
    Sse::new(s.map(Ok::<_, Infallible>)).into_response()
}

fn token_event(text: String) -> Event {
    json_event("token", &AnswerToken { text })
}

fn answer_event(body: JsonBody) -> Event {
    Event::default().event("answer").data(String::from_utf8_lossy(&body.bytes))
}

fn error_event(e: &ApiError) -> Event {
    json_event("error", &e.to_envelope())
}

fn json_event<T: serde::Serialize>(kind: &str, value: &T) -> Event {
    let data = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_string());
    Event::default().event(kind).data(data)
}
