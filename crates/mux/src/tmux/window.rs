//! Whole tmux windows: a recorded pane with nothing to resume comes back as a shell in its
//! recorded dir, a window this restore created places in gets the panes its recorded layout has
//! and then that layout (`select-layout`, as tmux-resurrect restores one; tmux sizes the window
//! to the layout's size), and the pane a restore runs in is found, so that its agent starts
//! there last.

use crate::backend::{Created, MuxError};
use crate::script::shell_script;

use super::{MAX_NEW_PANES, Made, Server, TmuxPane};

/// The longest layout taken from the index: a window of [`MAX_NEW_PANES`] panes and more
/// writes far less.
const MAX_LAYOUT_LENGTH: usize = 8192;

impl Server {
    /// [`crate::Backend::open_shell`] for a tmux pane.
    pub(super) fn open_shell_pane(
        &self,
        target: &TmuxPane,
        dir: Option<&str>,
    ) -> Result<Option<Vec<Created>>, MuxError> {
        self.undone_on_failure(target, |made| self.shell_in(target, dir, made))
    }

    fn shell_in(
        &self,
        target: &TmuxPane,
        dir: Option<&str>,
        made: &mut Made,
    ) -> Result<Option<Vec<Created>>, MuxError> {
        let pane = self.make_pane(target, made)?;
        let filler = self.fillers.borrow().contains(&pane.id);
        if made.is_empty() && !filler {
            return Ok(None);
        }
        // A pane this restore made is a fresh shell: it is replaced by one in the recorded dir.
        self.fillers.borrow_mut().retain(|id| *id != pane.id);
        let script = shell_script(dir, &self.user_shell());
        self.tmux(&[
            "respawn-pane",
            "-k",
            "-t",
            &pane.id,
            "/bin/sh",
            "-c",
            &script,
        ])?;
        Ok(Some(made.created()))
    }

    /// [`crate::Backend::lay_out`] for a tmux pane's window.
    pub(super) fn lay_out_window(&self, target: &TmuxPane, layout: &str) -> Result<bool, MuxError> {
        let key = (target.session.clone(), target.window);
        if self.touched.borrow().get(&key) != Some(&false) {
            return Ok(false);
        }
        self.touched.borrow_mut().insert(key, true);
        let Some(cells) = panes_of_layout(layout) else {
            return Err(MuxError::Answer(format!(
                "the layout recorded for the window of {target} is not a tmux layout; the window is left as it is"
            )));
        };
        let window = format!("={}:{}", target.session, target.window);
        let panes = self.tmux(&["list-panes", "-t", &window, "-F", "#{pane_id}"])?;
        let have = panes.lines().count();
        let mut after = panes.lines().last().unwrap_or_default().to_string();
        let wanted = cells.min(have + MAX_NEW_PANES as usize);
        for _ in have..wanted {
            after = self.split(target, &after)?;
        }
        // The layout is not a format (tmux parses it as a layout only), and was checked to hold
        // only a layout's characters.
        self.tmux(&["select-layout", "-t", &window, layout])?;
        Ok(true)
    }

    /// The pane this process runs in, when its `$TMUX` names this server's socket and the
    /// pane `TMUX_PANE` names is this process's controlling terminal: a process started from a
    /// pane (a terminal an editor or a launcher opened) inherits both variables, and is not in
    /// that pane.
    pub(super) fn caller_pane(&self) -> Option<TmuxPane> {
        let variable = std::env::var("TMUX").ok()?;
        let socket = variable.split(',').next()?;
        let pane = std::env::var("TMUX_PANE").ok()?;
        if !super::same_socket(socket, &self.socket_path()) {
            return None;
        }
        let terminal = proc_table::table()
            .process(
                std::process::id(),
                std::time::Instant::now() + super::CALL_DEADLINE,
            )?
            .terminal?;
        let answer = self
            .tmux(&[
                "display-message",
                "-p",
                "-t",
                &pane,
                "#{pane_id}\t#{window_index}\t#{pane_index}\t#{pane_tty}\t#{socket_path}\t#{session_name}",
            ])
            .ok()?;
        let fields: Vec<&str> = answer.splitn(6, '\t').collect();
        let [id, window, index, tty, server, session] = fields[..] else {
            return None;
        };
        (id == pane).then_some(())?;
        super::is_pane_terminal(tty, terminal)
            .unwrap_or(false)
            .then_some(())?;
        Some(TmuxPane {
            server: Some(server.to_string()),
            session: session.to_string(),
            window: window.parse().ok()?,
            pane: index.parse().ok()?,
        })
    }
}

/// How many panes a tmux layout (`#{window_layout}`: a checksum, then cells `WxH,X,Y` that are
/// a pane `,ID` or a split `{…}` / `[…]` of cells) lays out; `None` for a text that holds
/// anything but a layout's characters.
fn panes_of_layout(layout: &str) -> Option<usize> {
    let layout_characters = layout
        .bytes()
        .all(|byte| byte.is_ascii_hexdigit() || b"x,{}[]".contains(&byte));
    if layout.is_empty() || layout.len() > MAX_LAYOUT_LENGTH || !layout_characters {
        return None;
    }
    let count = |wanted: u8| layout.bytes().filter(|byte| *byte == wanted).count();
    let cells = count(b'x');
    let splits = count(b'{') + count(b'[');
    cells.checked_sub(splits).filter(|panes| *panes > 0)
}

#[cfg(test)]
mod tests {
    use super::panes_of_layout;

    #[test]
    fn a_layout_counts_its_panes_and_nothing_else_is_one() {
        let check = |layout: &str, panes: Option<usize>| {
            assert_eq!(panes_of_layout(layout), panes, "{layout}");
        };
        check(
            "21be,200x50,0,0{100x50,0,0,0,99x50,101,0[99x25,101,0,1,99x24,101,26,2]}",
            Some(3),
        );
        check("b25f,80x24,0,0,3", Some(1));
        check("", None);
        check("21be,200x50 #(touch x)", None);
        check("abc,{}", None);
    }
}
