//! Codex's title items (`[tui] terminal_title` in its `config.toml`): whether they show the
//! thread id, where a hook that runs in Codex's daemon finds the session's pane, and the edit
//! `hook install codex --codex-title` makes to add it. Without the item, and without `codex
//! --no-daemon`, Codex sessions are not recorded.

/// The title item that shows the thread id.
pub const THREAD_ID_ITEM: &str = "thread-id";

/// Codex's own title items when `[tui] terminal_title` is not set (0.171; `codex doctor` lists
/// them), kept when the thread id is added.
pub const DEFAULT_TITLE_ITEMS: [&str; 2] = ["activity", "project-name"];

/// What adding the thread id to a `config.toml` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TitleEdit {
    /// The items already hold it.
    Already,
    /// They do not: the file with the item added.
    Added {
        /// The new text of the file.
        text: String,
        /// The title items it sets.
        items: Vec<String>,
    },
}

/// `config` (a `config.toml`'s text, empty when there is none) with [`THREAD_ID_ITEM`] added to
/// `terminal_title` under `[tui]`: after the items there, or after Codex's defaults when none
/// are set; the rest of the file is kept as written. An error (the file left alone) when the
/// file is not TOML, or `tui` or `terminal_title` is not what Codex reads.
pub fn add_thread_id_to_title(config: &str) -> Result<TitleEdit, String> {
    let mut document: toml_edit::DocumentMut = config
        .parse()
        .map_err(|error| format!("it is not valid TOML: {error}"))?;
    let tui = document
        .entry("tui")
        .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
        .as_table_like_mut()
        .ok_or("its `tui` is not a table")?;
    let items = match tui.get_mut("terminal_title") {
        None => {
            let mut items: toml_edit::Array = DEFAULT_TITLE_ITEMS.into_iter().collect();
            items.push(THREAD_ID_ITEM);
            tui.insert("terminal_title", toml_edit::value(items));
            tui.get("terminal_title")
                .and_then(toml_edit::Item::as_array)
                .expect("just set")
        }
        Some(item) => {
            let items = item
                .as_array_mut()
                .ok_or("its `terminal_title` under [tui] is not a list of title items")?;
            if items
                .iter()
                .any(|item| item.as_str() == Some(THREAD_ID_ITEM))
            {
                return Ok(TitleEdit::Already);
            }
            items.push(THREAD_ID_ITEM);
            items
        }
    };
    let items = items
        .iter()
        .map(|item| {
            item.as_str()
                .map_or_else(|| item.to_string(), str::to_string)
        })
        .collect();
    Ok(TitleEdit::Added {
        text: document.to_string(),
        items,
    })
}

/// Whether a `config.toml` (its text) has the thread id among its title items.
pub fn title_has_thread_id(config: &str) -> bool {
    matches!(add_thread_id_to_title(config), Ok(TitleEdit::Already))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_id_joins_codex_defaults_or_the_user_items() {
        let added = |config: &str| match add_thread_id_to_title(config).unwrap() {
            TitleEdit::Added { text, .. } => text,
            TitleEdit::Already => panic!("already in {config}"),
        };
        assert_eq!(
            added(""),
            "[tui]\nterminal_title = [\"activity\", \"project-name\", \"thread-id\"]\n"
        );
        let config = "# mine\nmodel = \"gpt-5\"\n\n[tui]\n# titles\nterminal_title = [\"project\", \"spinner\"] # two\nstatus_line = []\n";
        assert_eq!(
            added(config),
            "# mine\nmodel = \"gpt-5\"\n\n[tui]\n# titles\nterminal_title = [\"project\", \"spinner\", \"thread-id\"] # two\nstatus_line = []\n"
        );
        assert_eq!(
            added("tui = { theme = \"dark\" }\n"),
            // toml_edit keeps the space that closed the table before the new key's comma.
            "tui = { theme = \"dark\" , terminal_title = [\"activity\", \"project-name\", \"thread-id\"] }\n"
        );
        let with = "[tui]\nterminal_title = [\"thread-id\"]\n";
        assert_eq!(add_thread_id_to_title(with), Ok(TitleEdit::Already));
        assert!(title_has_thread_id(with));
        assert!(!title_has_thread_id(""));
        assert!(add_thread_id_to_title("tui = 1\n").is_err());
        assert!(add_thread_id_to_title("[tui]\nterminal_title = \"x\"\n").is_err());
        assert!(add_thread_id_to_title("[tui\n").is_err());
    }
}
