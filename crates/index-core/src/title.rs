//! Which pane a Codex session runs in when its hook runs in Codex's shared daemon, whose
//! environment names no pane of its own: the pane whose title shows the session's thread id.
//!
//! With `thread-id` among `[tui] terminal_title` in Codex's `config.toml`, each Codex TUI writes
//! its thread id, cut to a prefix and followed by `...`, into its own pane's title. A pane holds
//! a session when its title shows at least [`MIN_PREFIX`] characters of the session id and the
//! pane still runs Codex (a title can outlive the program that wrote it). Exactly one such pane
//! names the session's surface; none or several name nothing.

/// The fewest characters of the session id a title must show: 24 characters of a UUIDv7
/// (`xxxxxxxx-xxxx-7xxx-xxxx-`) hold its millisecond and 14 random bits, so two live sessions
/// share them only when started in the same millisecond with the same random bits.
pub const MIN_PREFIX: usize = 24;

/// A pane as its multiplexer lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitledPane {
    /// The pane's surface id.
    pub surface: String,
    /// The pane's title, as the program in it last set it.
    pub title: String,
    /// Whether the pane still runs Codex.
    pub runs_codex: bool,
}

/// Which pane shows a session's thread id in its title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TitleMatch {
    /// Exactly this pane (its index in the listing).
    One(usize),
    /// No pane running Codex shows it; `stale` panes show it but no longer run Codex.
    None {
        /// Surfaces whose title shows the id but which run something else now.
        stale: Vec<String>,
    },
    /// Several panes running Codex show it (their surfaces): nothing may be recorded.
    Several(Vec<String>),
}

/// Whether `title` shows `session`: the whole id, or a prefix of it at least [`MIN_PREFIX`]
/// characters long that the title ends or follows with something that cannot continue an id
/// (Codex writes `...` after the cut).
pub fn title_shows(title: &str, session: &str) -> bool {
    if session.len() < MIN_PREFIX || !session.is_ascii() {
        return !session.is_empty() && title.contains(session);
    }
    let head = &session[..MIN_PREFIX];
    title.match_indices(head).any(|(start, _)| {
        let shown = &title[start..];
        let common = shown
            .bytes()
            .zip(session.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        common == session.len()
            || !shown[common..]
                .chars()
                .next()
                .is_some_and(|next| next.is_ascii_alphanumeric() || next == '-')
    })
}

/// The one pane of `panes` whose title shows `session` and which runs Codex.
pub fn pane_by_title(session: &str, panes: &[TitledPane]) -> TitleMatch {
    let showing: Vec<usize> = (0..panes.len())
        .filter(|at| title_shows(&panes[*at].title, session))
        .collect();
    let (live, stale): (Vec<usize>, Vec<usize>) =
        showing.into_iter().partition(|at| panes[*at].runs_codex);
    match live.as_slice() {
        [one] => TitleMatch::One(*one),
        [] => TitleMatch::None {
            stale: stale.iter().map(|at| panes[*at].surface.clone()).collect(),
        },
        several => TitleMatch::Several(
            several
                .iter()
                .map(|at| panes[*at].surface.clone())
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "01a2323a-58b9-7f73-aba8-bf7830000001";
    const B: &str = "01a2323a-58b9-7f73-aba8-bf7830000002";

    fn pane(surface: &str, title: &str, runs_codex: bool) -> TitledPane {
        TitledPane {
            surface: surface.to_string(),
            title: title.to_string(),
            runs_codex,
        }
    }

    #[test]
    fn a_cut_id_is_shown() {
        assert!(title_shows("alpha | 01a2323a-58b9-7f73-aba8-bf783...", A));
        assert!(title_shows(&format!("⠋ alpha | {A}"), A));
        assert!(title_shows("01a2323a-58b9-7f73-aba8-", A));
        // Too short a prefix, or one continued by other id characters, is not.
        assert!(!title_shows("alpha | 01a2323a-58b9-7f73-ab...", A));
        assert!(!title_shows("alpha | 01a2323a-58b9-7f73-aba8-bf7831...", A));
        assert!(!title_shows("alpha", A));
        assert!(!title_shows("", A));
    }

    #[test]
    fn one_live_pane_names_the_surface() {
        let panes = [
            pane(
                "tmux:s:0.0",
                "alpha | 01a2323a-58b9-7f73-aba8-bf7830000001",
                true,
            ),
            pane(
                "tmux:s:0.1",
                "alpha | 01a2323a-58b9-7f73-aba8-bf7830000002",
                true,
            ),
        ];
        assert_eq!(pane_by_title(A, &panes), TitleMatch::One(0));
        assert_eq!(pane_by_title(B, &panes), TitleMatch::One(1));
    }

    #[test]
    fn a_pane_no_longer_running_codex_is_stale() {
        let panes = [
            pane(
                "tmux:s:0.0",
                "alpha | 01a2323a-58b9-7f73-aba8-bf783...",
                false,
            ),
            pane("tmux:s:0.1", "bash", true),
        ];
        assert_eq!(
            pane_by_title(A, &panes),
            TitleMatch::None {
                stale: vec!["tmux:s:0.0".to_string()]
            }
        );
    }

    #[test]
    fn two_live_panes_showing_the_id_name_nothing() {
        let panes = [
            pane(
                "tmux:s:0.0",
                "alpha | 01a2323a-58b9-7f73-aba8-bf783...",
                true,
            ),
            pane(
                "tmux:t:1.0",
                "beta | 01a2323a-58b9-7f73-aba8-bf783...",
                true,
            ),
        ];
        assert_eq!(
            pane_by_title(A, &panes),
            TitleMatch::Several(vec!["tmux:s:0.0".to_string(), "tmux:t:1.0".to_string()])
        );
        assert_eq!(pane_by_title(A, &[]), TitleMatch::None { stale: vec![] });
    }
}
