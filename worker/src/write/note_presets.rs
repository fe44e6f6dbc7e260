//! Note presets: small scaffolds for new notes (`GET /api/note-presets`, `presetId`).

use protocol::api::{NotePresetsResponse, PresetFrontmatter};

#[derive(Debug, Clone)]
pub struct NotePreset {
    pub id: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    pub default_tags: &'static [&'static str],
    /// Extra front-matter keys (`type`, `category`).
    pub kind: Option<&'static str>,
    pub sections: &'static [&'static str],
}

pub const PRESETS: &[NotePreset] = &[
    NotePreset {
        id: "blank",
        label: "Blank",
        description: "An empty note with a title.",
        default_tags: &[],
        kind: None,
        sections: &[],
    },
    NotePreset {
        id: "project-note",
        label: "Project note",
        description: "Goals, status and next steps of a project.",
        default_tags: &["project"],
        kind: None,
        sections: &["Goal", "Status", "Next steps"],
    },
    NotePreset {
        id: "research-note",
        label: "Research note",
        description: "A question, sources and findings.",
        default_tags: &["research"],
        kind: None,
        sections: &["Question", "Sources", "Findings"],
    },
    NotePreset {
        id: "decision-note",
        label: "Decision note",
        description: "Context, options, decision and consequences.",
        default_tags: &["decision"],
        kind: None,
        sections: &["Context", "Options", "Decision", "Consequences"],
    },
    NotePreset {
        id: "source-summary",
        label: "Source summary",
        description: "What a source says and what to take from it.",
        default_tags: &["source", "summary"],
        kind: None,
        sections: &["Summary", "Key points", "Quotes"],
    },
    NotePreset {
        id: "meeting",
        label: "Meeting",
        description: "Attendees, notes and action items.",
        default_tags: &[],
        kind: Some("meeting"),
        sections: &["Attendees", "Notes", "Action items"],
    },
];

pub fn find(id: &str) -> Option<&'static NotePreset> {
    PRESETS.iter().find(|p| p.id == id)
}

impl NotePreset {
    /// The body under the title: one empty section per heading.
    pub fn body(&self) -> String {
        self.sections.iter().map(|s| format!("## {s}\n\n")).collect()
    }

    /// The whole scaffold for a title (what `preview` shows).
    pub fn scaffold(&self, title: &str) -> String {
        let tags: Vec<String> = self.default_tags.iter().map(|t| t.to_string()).collect();
        let extra: Vec<(String, String)> =
            self.kind.map(|k| vec![("type".to_string(), k.to_string())]).unwrap_or_default();
        format!("{}# {title}\n\n{}", super::front_matter_edit::new_block(None, &tags, &extra), self.body())
    }
}

/// `GET /api/note-presets`
pub fn list() -> NotePresetsResponse {
    let presets = PRESETS
        .iter()
        .map(|p| protocol::api::NotePreset {
            id: p.id.to_string(),
            label: p.label.to_string(),
            description: p.description.to_string(),
            default_tags: p.default_tags.iter().map(|t| t.to_string()).collect(),
            frontmatter: PresetFrontmatter { kind: p.kind.map(str::to_string) },
            preview: p.scaffold("Untitled"),
        })
        .collect();
    NotePresetsResponse { presets }
}
