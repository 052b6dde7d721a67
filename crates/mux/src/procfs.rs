//! The process table as Linux's `/proc` shows it: one parser of `/proc/<pid>/stat` lines for
//! everything that walks processes: the tmux backend's idle-shell check, and the binary's hook and Codex daemon walk.

/// The parent pid of `pid` (a number, or `self`) from `/proc/<pid>/stat`; `None` where there is
/// no `/proc` or the process is gone.
pub fn proc_parent(pid: &str) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_proc_stat(&stat).map(|(_, parent, _)| parent)
}

/// The name, parent pid and `tty_nr` of a `/proc/<pid>/stat` line. The name is in parentheses
/// and may hold spaces and parentheses; the fields after the last `)` are state, parent, group,
/// session, tty.
pub fn parse_proc_stat(stat: &str) -> Option<(String, u32, i64)> {
    let (head, rest) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_string();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((
        name,
        fields.get(1)?.parse().ok()?,
        fields.get(4)?.parse().ok()?,
    ))
}
