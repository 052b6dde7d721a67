//! Qwen Code specifics of capture: a runtime dir that only the environment names.
//!
//! Qwen Code 0.24 keeps its sessions in its runtime dir: `QWEN_RUNTIME_DIR`, else the setting
//! `advanced.runtimeOutputDir`, else its config dir (`preflight::qwen::runtime_dir`). The index
//! records the config dir alone, from which a restore finds the setting and the `.env` files
//! again; a `QWEN_RUNTIME_DIR` set only in the environment Qwen Code ran with is not recorded,
//! so the hook says so in its log.

use camino::Utf8Path;

use crate::context::Context;

/// What the hook log says when the environment's `QWEN_RUNTIME_DIR` puts the sessions where
/// the recorded config dir does not lead; `None` when it is unset or leads to the same dir.
pub fn unrecorded_runtime_dir(cx: &Context, cwd: Option<&str>) -> Option<String> {
    let variable = std::env::var("QWEN_RUNTIME_DIR")
        .ok()
        .filter(|value| !value.is_empty())?;
    let home = cx.home();
    let cwd = cwd.map(Utf8Path::new);
    let config_dir = cx.config_dir(crate::args::Agent::Qwen).ok()?;
    let config_dir = preflight::qwen::resolve(&config_dir, cwd, home.as_deref());
    let used = preflight::qwen::resolve(&variable, cwd, home.as_deref());
    let found = preflight::qwen::runtime_dir(&config_dir, None, cwd, home.as_deref());
    (used != found).then(|| {
        format!(
            "Qwen Code keeps this session under QWEN_RUNTIME_DIR ({}), which only its \
             environment names: a restore looks under {} and will not find it; set \
             QWEN_RUNTIME_DIR in {}/.env or advanced.runtimeOutputDir in its settings.json \
             instead",
            index_core::text::escape(used.as_str()),
            index_core::text::escape(found.as_str()),
            index_core::text::escape(config_dir.as_str()),
        )
    })
}
