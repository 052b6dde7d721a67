//! The table's answers, from `/proc` and from `ps`, against what `ps -o
//! pid=,ppid=,stat=,comm=,args=` prints for the same processes: this test process, a child tree
//! it starts, processes that stop, end and are reaped, and the holders of file locks.

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use proc_table::{LockHolder, LockKind, Table};

/// What any question may take.
fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

/// Both tables on Linux, where the `ps` one is the macOS fallback checked against `/proc`.
const TABLES: [Table; 2] = [Table::Proc, Table::Ps];

/// One row of `ps -o pid=,ppid=,stat=,comm=,args= -p PID`, read here independently of the
/// crate: the state's letter, the parent, the name, and the command line as `ps` joins it.
#[derive(Debug, PartialEq, Eq)]
struct PsRow {
    parent: u32,
    state: char,
    name: String,
    arguments: String,
}

fn ps_row(pid: u32) -> Option<PsRow> {
    let output = Command::new("ps")
        .args([
            "-ww",
            "-o",
            "pid=,ppid=,stat=,comm=,args=",
            "-p",
            &pid.to_string(),
        ])
        .output()
        .expect("ps runs");
    let text = String::from_utf8(output.stdout).expect("ps prints UTF-8 here");
    let line = text.lines().next()?;
    let mut fields = line.split_whitespace();
    let listed: u32 = fields.next()?.parse().ok()?;
    assert_eq!(listed, pid);
    let parent = fields.next()?.parse().ok()?;
    let state = fields.next()?.chars().next()?;
    // The names of the processes of these tests hold no blank.
    let name = fields.next()?.to_string();
    let arguments = fields.collect::<Vec<_>>().join(" ");
    Some(PsRow {
        parent,
        state,
        name,
        arguments,
    })
}

/// The table's answer for `pid` in the shape of a [`PsRow`].
fn table_row(table: Table, pid: u32) -> Option<PsRow> {
    let process = table.process(pid, deadline())?;
    let arguments = table.command_line(pid, deadline())?;
    Some(PsRow {
        parent: process.parent,
        state: process.state,
        name: process.name.into_string().expect("a UTF-8 name"),
        arguments: join(&arguments),
    })
}

fn join(words: &[OsString]) -> String {
    words
        .iter()
        .map(|word| word.to_str().expect("UTF-8 words"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Polls `check` until it answers (the kernel shows a new program's command line a moment
/// after the spawn returned), for at most the deadline.
fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let end = deadline();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < end, "gave up waiting for {what}");
        std::thread::yield_now();
    }
}

/// A child with its stdin and stdout piped, killed and reaped when dropped.
struct Spawned {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Spawned {
    fn new(command: &mut Command) -> Spawned {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {command:?}: {error}"));
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Spawned { child, stdout }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next line the child prints: what it says once it has done something.
    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("the child prints");
        line.trim().to_string()
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn this_process_as_ps_shows_it() {
    let me = std::process::id();
    let expected = ps_row(me).expect("ps lists this process");
    for table in TABLES {
        let row = table_row(table, me).unwrap_or_else(|| panic!("{table:?} reads this process"));
        assert_eq!(row.parent, expected.parent, "{table:?}");
        assert_eq!(row.parent, std::os::unix::process::parent_id());
        assert_eq!(row.name, expected.name, "{table:?}");
        assert_eq!(row.arguments, expected.arguments, "{table:?}");
        assert!(matches!(row.state, 'R' | 'S'), "{table:?}: {}", row.state);
        assert!(
            table
                .processes(deadline())
                .iter()
                .any(|process| process.pid == me),
            "{table:?} lists this process"
        );
    }
    assert_eq!(proc_table::table(), Table::Proc);
}

#[test]
fn the_ancestors_and_the_terminal_agree() {
    let me = std::process::id();
    let from_proc = Table::Proc.ancestry(me, 64, deadline()).expect("read");
    let from_ps = Table::Ps.ancestry(me, 64, deadline()).expect("read");
    // The states may differ between the two reads (a busy ancestor runs or sleeps); the rest
    // may not.
    let without_states = |ancestry: &proc_table::Ancestry| {
        std::iter::once(&ancestry.process)
            .chain(&ancestry.ancestors)
            .map(|process| {
                (
                    process.pid,
                    process.parent,
                    process.name.clone(),
                    process.terminal,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(without_states(&from_proc), without_states(&from_ps));
    assert_eq!(from_proc.process.pid, me);
    let mut expected = Vec::new();
    let mut pid = expected_parent(me);
    while pid > 1 {
        expected.push(pid);
        pid = expected_parent(pid);
    }
    let pids: Vec<u32> = from_proc
        .ancestors
        .iter()
        .map(|process| process.pid)
        .collect();
    assert_eq!(pids, expected);
    let nearest = Table::Proc.ancestry(me, 1, deadline()).expect("read");
    assert_eq!(nearest.ancestors.len(), expected.len().min(1));
}

fn expected_parent(pid: u32) -> u32 {
    ps_row(pid).expect("an ancestor is listed").parent
}

#[test]
fn a_child_tree_its_children_and_descendants() {
    // sh starts a sleep in the background, says its pid, and waits on its stdin.
    let mut shell = Spawned::new(Command::new("sh").args(["-c", "sleep 1000 & echo $!; read x"]));
    let shell_pid = shell.pid();
    let sleep_pid: u32 = shell.line().parse().expect("a pid");
    let sleep_row = wait_for("the sleep's command line", || {
        ps_row(sleep_pid).filter(|row| row.arguments == "sleep 1000")
    });
    assert_eq!(sleep_row.parent, shell_pid);
    let me = std::process::id();
    for table in TABLES {
        // The shell may still run or already wait on its stdin: the state is not compared.
        for pid in [sleep_pid, shell_pid] {
            let row = table_row(table, pid).map(|row| PsRow { state: '-', ..row });
            let expected = ps_row(pid).map(|row| PsRow { state: '-', ..row });
            assert_eq!(row, expected, "{table:?}");
        }
        assert_eq!(
            table.children(shell_pid, deadline()),
            [sleep_pid],
            "{table:?}"
        );
        assert!(
            table.children(sleep_pid, deadline()).is_empty(),
            "{table:?}"
        );
        let below = table.descendants(me, deadline());
        assert!(
            below.contains(&shell_pid) && below.contains(&sleep_pid),
            "{table:?}: {below:?}"
        );
        assert_eq!(
            table.descendants(shell_pid, deadline()),
            [sleep_pid],
            "{table:?}"
        );
        let ancestry = table.ancestry(sleep_pid, 64, deadline()).expect("read");
        let nearest: Vec<u32> = ancestry
            .ancestors
            .iter()
            .take(2)
            .map(|process| process.pid)
            .collect();
        assert_eq!(nearest, [shell_pid, me], "{table:?}");
        let lines = table.command_lines(&[shell_pid, sleep_pid, u32::MAX], deadline());
        let mut pids: Vec<u32> = lines.iter().map(|(pid, _)| *pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, [shell_pid, sleep_pid], "{table:?}");
    }
    // `/proc` keeps every argument whole.
    assert_eq!(
        Table::Proc.command_line(shell_pid, deadline()).unwrap(),
        ["sh", "-c", "sleep 1000 & echo $!; read x"]
    );
    let sleeping = Table::Proc.process(sleep_pid, deadline()).unwrap();
    assert_eq!(sleeping.name, "sleep");
    writeln!(shell.child.stdin.as_mut().unwrap()).unwrap();
    kill(sleep_pid);
}

#[test]
fn a_stopped_an_ended_and_a_vanished_process() {
    let mut child = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = child.id();
    let raw = rustix::process::Pid::from_raw(pid as i32).unwrap();
    rustix::process::kill_process(raw, rustix::process::Signal::STOP).unwrap();
    // Returns once the child has stopped.
    rustix::process::waitpid(Some(raw), rustix::process::WaitOptions::UNTRACED).unwrap();
    for table in TABLES {
        assert_eq!(
            table.process(pid, deadline()).unwrap().state,
            'T',
            "{table:?}"
        );
    }
    assert_eq!(ps_row(pid).unwrap().state, 'T');
    // Killed and not reaped: a zombie, listed but ended, its command line empty.
    rustix::process::kill_process(raw, rustix::process::Signal::KILL).unwrap();
    rustix::process::waitid(
        rustix::process::WaitId::Pid(raw),
        rustix::process::WaitIdOptions::EXITED | rustix::process::WaitIdOptions::NOWAIT,
    )
    .unwrap();
    for table in TABLES {
        let zombie = table.process(pid, deadline()).unwrap();
        assert_eq!(zombie.state, 'Z', "{table:?}");
        assert!(zombie.has_ended());
    }
    assert_eq!(ps_row(pid).unwrap().state, 'Z');
    assert_eq!(Table::Proc.command_line(pid, deadline()), Some(Vec::new()));
    assert!(proc_table::exists(pid));
    // Reaped: gone, an answer rather than an error.
    child.wait().unwrap();
    assert_eq!(ps_row(pid), None);
    assert!(!proc_table::exists(pid));
    for table in TABLES {
        assert_eq!(table.process(pid, deadline()), None, "{table:?}");
        assert_eq!(table.command_line(pid, deadline()), None, "{table:?}");
        assert_eq!(table.environment(pid, deadline()), None, "{table:?}");
        assert_eq!(table.ancestry(pid, 64, deadline()), None, "{table:?}");
        assert!(
            table.processes_of(&[pid], deadline()).is_empty(),
            "{table:?}"
        );
        assert!(table.children(pid, deadline()).is_empty(), "{table:?}");
    }
}

#[test]
fn the_environment_and_the_standard_input() {
    let mut child = Spawned::new(
        Command::new("sh")
            .args(["-c", "echo started; read x"])
            .env_clear()
            .env("PROC_TABLE_TEST", "a value with spaces")
            .env("PATH", std::env::var_os("PATH").unwrap_or_default()),
    );
    assert_eq!(child.line(), "started");
    let environment = Table::Proc.environment(child.pid(), deadline()).unwrap();
    assert!(environment.contains(&OsString::from("PROC_TABLE_TEST=a value with spaces")));
    let stdin = Table::Proc.standard_input(child.pid()).unwrap();
    assert!(stdin.to_string_lossy().starts_with("pipe:"), "{stdin:?}");
    assert_eq!(Table::Ps.standard_input(child.pid()), None);
}

#[test]
fn the_holders_of_a_flock_and_of_a_posix_lock() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("locked");
    std::fs::write(&file, "").unwrap();
    let (device, inode) = {
        let stat = rustix::fs::stat(&file).unwrap();
        (stat.st_dev, stat.st_ino)
    };
    assert!(Table::Proc.lock_holders(device, inode).is_empty());
    // `flock FILE -c CMD` takes the lock itself and runs CMD as its child.
    let mut flock = Spawned::new(
        Command::new("flock")
            .arg("--exclusive")
            .arg(&file)
            .args(["-c", "echo locked; read x"]),
    );
    assert_eq!(flock.line(), "locked");
    let held_by = |pid, kind| [LockHolder { pid, kind }];
    assert_eq!(
        Table::Proc.lock_holders(device, inode),
        held_by(flock.pid(), LockKind::Flock)
    );
    // A waiter for the same lock is not a holder.
    let mut waiter = Command::new("flock")
        .arg("--exclusive")
        .arg(&file)
        .arg("true")
        .spawn()
        .unwrap();
    wait_for("the waiter to wait", || {
        std::fs::read_to_string("/proc/locks")
            .unwrap()
            .lines()
            .any(|line| line.contains("->") && line.contains(&format!(" {} ", waiter.id())))
            .then_some(())
    });
    assert_eq!(
        Table::Proc.lock_holders(device, inode),
        held_by(flock.pid(), LockKind::Flock)
    );
    drop(flock);
    waiter.wait().unwrap();
    // A record lock, as `fcntl(F_SETLK)` takes it.
    let mut posix = Spawned::new(
        Command::new("python3")
            .arg("-c")
            .arg(
                "import fcntl, sys\n\
                 f = open(sys.argv[1], 'a')\n\
                 fcntl.lockf(f, fcntl.LOCK_EX)\n\
                 print('locked', flush=True)\n\
                 sys.stdin.read()",
            )
            .arg(&file),
    );
    assert_eq!(posix.line(), "locked");
    assert_eq!(
        Table::Proc.lock_holders(device, inode),
        held_by(posix.pid(), LockKind::Posix)
    );
    assert!(Table::Ps.lock_holders(device, inode).is_empty());
    drop(posix);
    assert!(Table::Proc.lock_holders(device, inode).is_empty());
}

fn kill(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}
