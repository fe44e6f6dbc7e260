//! Bodies of the collection, sync and model routes.

use super::{collection_opt, required};
use protocol::{AddCollection, ApiError, CollectionName};
use serde::Deserialize;
use utoipa::ToSchema;

/// `POST /api/collections`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddCollectionBody {
    /// The folder to index (absolute, or relative to the server's working directory).
    #[schema(required = true)]
    pub path: Option<String>,
    /// Default: the folder's name as a slug.
    pub name: Option<String>,
    /// Glob of the files to index (default `**/*.md` and the other supported types).
    pub pattern: Option<String>,
    pub include: Option<String>,
    pub exclude: Option<String>,
    /// Run `git pull` before each sync.
    pub git_pull: Option<bool>,
    /// Follow the folder's changes as they happen (default true; false for a slow network
    /// mount, whose changes then come in with syncs).
    pub watch: Option<bool>,
    /// The language the notes are written in (`de`, `de-AT`, `German`): a note whose front
    /// matter declares none is stemmed by it in keyword search, whatever its text reads as.
    pub lang: Option<String>,
    /// Share the collection with the team this server joined (`svc serve --cluster URL
    /// --team NAME`): every member holds a replica and may write to it. 400 when the server
    /// joined no team.
    pub shared: Option<bool>,
}

/// The longest `lang` a collection may declare (a language tag or an English name).
const MAX_LANG_CHARS: usize = 35;

impl AddCollectionBody {
    pub fn into_request(self) -> Result<AddCollection, ApiError> {
        Ok(AddCollection {
            path: required("path", self.path)?,
            name: self.name,
            pattern: self.pattern,
            include: self.include,
            exclude: self.exclude,
            git_pull: self.git_pull.unwrap_or(false),
            watch: self.watch,
            shared: self.shared.unwrap_or(false),
            lang: match self.lang {
                Some(l)
                    if l.is_empty()
                        || l.chars().count() > MAX_LANG_CHARS
                        || !l.chars().all(|c| c.is_ascii_alphabetic() || c == '-' || c == '_' || c == ' ') =>
                {
                    return Err(ApiError::validation(
                        "lang must be a language tag or name (letters, spaces, '-' or '_', at most 35 characters)",
                    ))
                }
                other => other,
            },
        })
    }
}

/// `POST /api/sync`: one collection, or all.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncBody {
    pub collection: Option<String>,
    pub git_pull: Option<bool>,
}

impl SyncBody {
    /// `(collection, git_pull)`.
    pub fn into_parts(self) -> Result<(Option<CollectionName>, Option<bool>), ApiError> {
        Ok((collection_opt(self.collection)?, self.git_pull))
    }
}

/// `POST /api/presets`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetPresetBody {
    #[schema(required = true)]
    pub preset_id: Option<String>,
}

impl SetPresetBody {
    pub fn into_id(self) -> Result<String, ApiError> {
        Ok(required("presetId", self.preset_id)?.trim().to_string())
    }
}
