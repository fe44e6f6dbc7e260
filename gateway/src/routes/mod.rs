//! The route table. One module per resource; every API route is documented by its
//! `#[utoipa::path]` and registered through [`OpenApiRouter`], so the served OpenAPI
//! document lists exactly the routes that exist.

mod ask;
mod assets;
mod changes;
mod collections;
mod connectors;
mod context;
mod docs;
mod events;
mod models;
mod search;
mod system;
mod writes;

pub(crate) use changes::{changes_request, impact_request};
pub(crate) use docs::{links_request, similar_request};

use crate::error::ApiReply;
use crate::{openapi, security, AppState};
use axum::Router;
use protocol::{ApiError, ErrorCode};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The API routes with their OpenAPI description (without state or middleware).
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .routes(routes!(system::health))
        .routes(routes!(system::status))
        .routes(routes!(system::capabilities))
        .routes(routes!(collections::list, collections::add))
        .routes(routes!(collections::remove))
        .routes(routes!(collections::sync))
        .routes(routes!(collections::job))
        .routes(routes!(collections::active_job))
        .routes(routes!(collections::explain))
        .routes(routes!(collections::audit))
        .routes(routes!(search::search))
        .routes(routes!(search::vsearch))
        .routes(routes!(search::query))
        .routes(routes!(search::diagnose))
        .routes(routes!(ask::ask))
        .routes(routes!(models::presets, models::set_preset))
        .routes(routes!(models::pull))
        .routes(routes!(models::status))
        .routes(routes!(docs::tags))
        .routes(routes!(docs::list, writes::create))
        .routes(routes!(docs::autocomplete))
        .routes(routes!(writes::update))
        .routes(routes!(writes::deactivate))
        .routes(routes!(writes::refactor_plan))
        .routes(routes!(writes::rename))
        .routes(routes!(writes::move_doc))
        .routes(routes!(writes::duplicate))
        .routes(routes!(writes::folder))
        .routes(routes!(writes::note_presets))
        .routes(routes!(writes::capture))
        .routes(routes!(assets::doc_asset))
        .routes(routes!(events::events))
        .routes(routes!(docs::doc))
        .routes(routes!(docs::links))
        .routes(routes!(docs::backlinks))
        .routes(routes!(docs::sections))
        .routes(routes!(docs::similar))
        .routes(routes!(docs::graph))
        .routes(routes!(changes::changes))
        .routes(routes!(changes::diff))
        .routes(routes!(changes::impact))
        .routes(routes!(context::compile))
        .routes(routes!(context::verify))
        .routes(routes!(connectors::list))
        .routes(routes!(connectors::verify))
}

pub fn router(state: AppState) -> Router {
    let (api, doc) = api().split_for_parts();
    let document = openapi::Document::new(doc);
    let mcp =
        crate::mcp::http::service(state.worker.clone(), state.mcp_writes, &state.dirs, state.shutdown.child_token());
    api.route("/api/openapi.json", axum::routing::get(move || std::future::ready(document.reply())))
        .route_service("/mcp", mcp)
        .merge(crate::web::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::guard))
        .with_state(state)
}

/// Sends a validated request to the worker, or answers the validation error.
pub(crate) async fn call<C: protocol::Call>(s: &AppState, r: Result<C, ApiError>) -> ApiReply {
    match r {
        Ok(c) => ApiReply::ok(s.worker.call(c).await),
        Err(e) => e.into(),
    }
}

async fn not_found() -> ApiReply {
    ApiError::not_found("Not found").into()
}

async fn method_not_allowed() -> ApiReply {
    ApiError::new(ErrorCode::MethodNotAllowed, "Method not allowed").into()
}
