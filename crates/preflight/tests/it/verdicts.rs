//! The verdict table of `docs/preflight.md`, one test per row, plus the gate and Codex.

use std::collections::BTreeSet;

use camino::{Utf8Path, Utf8PathBuf};
use preflight::{Input, Outcome, StepId, Verdict, claude_transcript_path, preflight};

const USER: &str = r#"{"type":"user","message":{"role":"user","content":"hello"}}"#;
const SNAPSHOT: &str = r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#;

/// A throwaway config dir and working dir under the build dir.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    pub root: Utf8PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix("preflight-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().canonicalize().unwrap()).unwrap();
        Sandbox { _dir: dir, root }
    }

    fn config(&self) -> Utf8PathBuf {
        self.root.join("config")
    }

    fn cwd(&self) -> Utf8PathBuf {
        let cwd = self.root.join("work/my proj");
        std::fs::create_dir_all(&cwd).unwrap();
        cwd
    }

    /// Writes a transcript of `lines` where Claude Code keeps `session` of the working dir,
    /// `padding` extra user lines making it larger.
    fn transcript(&self, session: &str, text: &str) -> Utf8PathBuf {
        let path =
            claude_transcript_path(self.config().as_str(), self.cwd().as_str(), session, None)
                .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn conversation(&self, session: &str, user_lines: usize) -> Utf8PathBuf {
        self.transcript(session, &format!("{USER}\n").repeat(user_lines))
    }

    fn input(&self, held: Option<&str>) -> Input {
        Input {
            agent: Some("claude".into()),
            session: held.map(str::to_string),
            cwd: Some(self.cwd().into_string()),
            config_dir: Some(self.config().into_string()),
            ..Input::default()
        }
    }
}

fn check(input: &Input, verdict: Verdict, session: Option<&str>) -> Outcome {
    let outcome = preflight(input);
    assert_eq!(
        (outcome.verdict, outcome.session_id.as_deref()),
        (verdict, session),
        "steps: {:#?}",
        outcome.steps
    );
    assert!(!outcome.steps.is_empty(), "every path has a step");
    assert!(outcome.steps.iter().all(|step| !step.label.is_empty()));
    outcome
}

fn step_ids(outcome: &Outcome) -> Vec<StepId> {
    outcome.steps.iter().map(|step| step.id).collect()
}

#[test]
fn row_1_an_agent_without_resume_by_id_is_unknown() {
    let sandbox = Sandbox::new();
    sandbox.conversation("S", 1);
    for agent_name in ["", "aider"] {
        let input = Input {
            agent: Some(agent_name.into()),
            ..sandbox.input(Some("S"))
        };
        let outcome = check(&input, Verdict::Unknown, None);
        assert_eq!(step_ids(&outcome), [StepId::Agent]);
        assert!(!outcome.steps[0].ok);
    }
}

#[test]
fn row_1b_no_config_dir_is_unknown_and_silent() {
    let sandbox = Sandbox::new();
    for config_dir in [None, Some(String::new()), Some("  ".to_string())] {
        let input = Input {
            config_dir,
            ..sandbox.input(Some("S"))
        };
        let outcome = check(&input, Verdict::Unknown, None);
        assert_eq!(step_ids(&outcome), [StepId::Agent, StepId::Transcript]);
    }
}

#[test]
fn row_2_a_held_reachable_transcript_resumes() {
    let sandbox = Sandbox::new();
    sandbox.conversation("S", 1);
    sandbox.conversation("bigger", 5);
    let outcome = check(&sandbox.input(Some("S")), Verdict::Resume, Some("S"));
    assert_eq!(
        step_ids(&outcome),
        [StepId::Agent, StepId::SessionId, StepId::Transcript]
    );
    assert!(outcome.steps.iter().all(|step| step.ok));
}

#[test]
fn row_3_a_missing_transcript_recovers_the_largest_other_session() {
    let sandbox = Sandbox::new();
    sandbox.conversation("small", 1);
    sandbox.conversation("large", 4);
    sandbox.conversation("excluded", 9);
    sandbox.transcript("bookkeeping", &format!("{SNAPSHOT}\n").repeat(50));
    let mut input = sandbox.input(Some("S"));
    input.excluded = BTreeSet::from(["excluded".to_string()]);
    let outcome = check(&input, Verdict::Recover, Some("large"));
    assert_eq!(
        step_ids(&outcome),
        [
            StepId::Agent,
            StepId::SessionId,
            StepId::Transcript,
            StepId::Recovery
        ]
    );
    assert_eq!(outcome.recoverable_session_id, None);
}

#[test]
fn row_3_ties_go_to_the_smaller_id_and_the_failed_id_is_never_offered() {
    let sandbox = Sandbox::new();
    sandbox.conversation("b", 2);
    sandbox.conversation("a", 2);
    // The held id's transcript is a directory: the CLI fails with EISDIR, the retry recovers.
    let held = sandbox.transcript("held", "");
    std::fs::remove_file(&held).unwrap();
    std::fs::create_dir(&held).unwrap();
    check(&sandbox.input(Some("held")), Verdict::Recover, Some("a"));
}

#[test]
fn row_4_a_missing_transcript_with_nothing_else_is_fresh() {
    let sandbox = Sandbox::new();
    sandbox.transcript("empty", "");
    // A subagent transcript in a subfolder is never a candidate.
    let sub = sandbox
        .conversation("x", 1)
        .parent()
        .unwrap()
        .join("S/subagents");
    std::fs::remove_file(sub.parent().unwrap().parent().unwrap().join("x.jsonl")).unwrap();
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("agent-1.jsonl"), format!("{USER}\n")).unwrap();
    let outcome = check(&sandbox.input(Some("S")), Verdict::Fresh, None);
    assert_eq!(outcome.steps.last().unwrap().id, StepId::Recovery);
    assert!(!outcome.steps.last().unwrap().ok);
}

#[test]
fn row_5_no_id_held_but_the_pane_history_is_reachable_resumes_it() {
    let sandbox = Sandbox::new();
    sandbox.conversation("H", 1);
    sandbox.conversation("larger", 7);
    let input = Input {
        history_session: Some("H".into()),
        ..sandbox.input(None)
    };
    let outcome = check(&input, Verdict::Resume, Some("H"));
    assert_eq!(
        step_ids(&outcome),
        [StepId::Agent, StepId::SessionId, StepId::History]
    );
}

#[test]
fn row_6_no_id_held_is_fresh_and_reports_what_is_on_disk() {
    let sandbox = Sandbox::new();
    sandbox.conversation("on-disk", 3);
    sandbox.conversation("other-pane", 8);
    let mut input = Input {
        history_session: Some("gone".into()),
        ..sandbox.input(None)
    };
    input.excluded = BTreeSet::from(["other-pane".to_string()]);
    let outcome = check(&input, Verdict::Fresh, None);
    assert_eq!(outcome.recoverable_session_id.as_deref(), Some("on-disk"));
    assert_eq!(
        step_ids(&outcome),
        [
            StepId::Agent,
            StepId::SessionId,
            StepId::History,
            StepId::Scan
        ]
    );

    let empty = Sandbox::new();
    let outcome = check(&empty.input(None), Verdict::Fresh, None);
    assert_eq!(outcome.recoverable_session_id, None);
}

#[test]
fn the_gate_redirects_an_earlier_id_to_a_reachable_head() {
    let sandbox = Sandbox::new();
    sandbox.conversation("old", 1);
    sandbox.conversation("new", 1);
    let input = Input {
        history_session: Some("old".into()),
        chain: vec!["old".into(), "new".into()],
        ..sandbox.input(None)
    };
    let outcome = check(&input, Verdict::Resume, Some("new"));
    let chain = outcome
        .steps
        .iter()
        .find(|step| step.id == StepId::Chain)
        .unwrap();
    assert!(
        chain.ok && chain.detail.contains("moved on to new"),
        "{chain:?}"
    );
}

#[test]
fn the_gate_refuses_an_earlier_id_whose_head_is_not_reachable() {
    let sandbox = Sandbox::new();
    sandbox.conversation("old", 1);
    let input = Input {
        history_session: Some("old".into()),
        chain: vec!["old".into(), "new".into()],
        ..sandbox.input(None)
    };
    let outcome = check(&input, Verdict::Fresh, None);
    let chain = outcome
        .steps
        .iter()
        .find(|step| step.id == StepId::Chain)
        .unwrap();
    assert!(
        !chain.ok && chain.detail.contains("moved on to new"),
        "{chain:?}"
    );
}

#[test]
fn the_head_of_the_chain_stands() {
    let sandbox = Sandbox::new();
    sandbox.conversation("new", 1);
    let input = Input {
        chain: vec!["old".into(), "new".into()],
        ..sandbox.input(Some("new"))
    };
    check(&input, Verdict::Resume, Some("new"));
}

#[test]
fn continued_in_records_are_followed_to_the_head() {
    let sandbox = Sandbox::new();
    sandbox.transcript(
        "A",
        &format!("{USER}\n{{\"type\":\"system\",\"continuedInSessionId\":\"B\"}}\n"),
    );
    sandbox.transcript(
        "B",
        &format!("{USER}\n{{\"type\":\"system\",\"continuedInSessionId\":\"C\"}}\n"),
    );
    sandbox.conversation("C", 1);
    check(&sandbox.input(Some("A")), Verdict::Resume, Some("C"));
}

#[test]
fn a_continued_in_cycle_ends() {
    let sandbox = Sandbox::new();
    sandbox.transcript(
        "A",
        &format!("{USER}\n{{\"type\":\"system\",\"continuedInSessionId\":\"B\"}}\n"),
    );
    sandbox.transcript(
        "B",
        &format!("{USER}\n{{\"type\":\"system\",\"continuedInSessionId\":\"A\"}}\n"),
    );
    check(&sandbox.input(Some("A")), Verdict::Resume, Some("B"));
}

#[cfg(unix)]
#[test]
fn a_symlinked_working_dir_is_resolved_as_the_cli_resolves_it() {
    let sandbox = Sandbox::new();
    sandbox.conversation("S", 1);
    let link = sandbox.root.join("link");
    std::os::unix::fs::symlink(sandbox.cwd(), &link).unwrap();
    let input = Input {
        cwd: Some(link.to_string()),
        ..sandbox.input(Some("S"))
    };
    check(&input, Verdict::Resume, Some("S"));
}

#[test]
fn tilde_in_the_working_and_config_dirs_is_expanded() {
    let sandbox = Sandbox::new();
    sandbox.conversation("S", 1);
    let home = sandbox.root.clone();
    let input = Input {
        cwd: Some("~/work/my proj".into()),
        config_dir: Some("~/config".into()),
        home: Some(home),
        ..sandbox.input(Some("S"))
    };
    check(&input, Verdict::Resume, Some("S"));
}

fn codex_rollout(home: &Utf8Path, day: &str, session: &str, text: &str) {
    let dir = home.join("sessions").join(day);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("rollout-2026-11-30T10-00-00-{session}.jsonl")),
        text,
    )
    .unwrap();
}

#[test]
fn codex_resumes_a_present_rollout_and_never_recovers() {
    let sandbox = Sandbox::new();
    let home = sandbox.root.join("codex");
    codex_rollout(&home, "2026/11/30", "abc", "{\"type\":\"session_meta\"}\n");
    codex_rollout(&home, "2026/11/29", "empty", "");
    let input = |held: &str| Input {
        agent: Some("codex".into()),
        session: Some(held.into()),
        cwd: Some("/anywhere".into()),
        config_dir: Some(home.to_string()),
        ..Input::default()
    };
    check(&input("abc"), Verdict::Resume, Some("abc"));
    check(&input("empty"), Verdict::Fresh, None);
    check(&input("missing"), Verdict::Fresh, None);
}

#[test]
fn a_session_id_that_is_not_a_file_name_is_never_reachable() {
    let sandbox = Sandbox::new();
    sandbox.conversation("S", 1);
    check(&sandbox.input(Some("../S")), Verdict::Recover, Some("S"));
}

#[test]
fn the_outcome_serialises_to_the_wire_names() {
    let sandbox = Sandbox::new();
    sandbox.conversation("S", 1);
    let json = serde_json::to_value(preflight(&sandbox.input(None))).unwrap();
    assert_eq!(json["verdict"], "fresh");
    assert_eq!(json["session_id"], serde_json::Value::Null);
    assert_eq!(json["recoverable_session_id"], "S");
    assert_eq!(json["steps"][1]["id"], "session-id");
    for key in ["id", "label", "ok", "detail", "duration_ms"] {
        assert!(json["steps"][0].get(key).is_some(), "{key}");
    }
    assert!(json["duration_ms"].is_number());
}

#[test]
fn a_conversation_another_surface_holds_is_named_when_nothing_is_free_to_recover() {
    let sandbox = Sandbox::new();
    sandbox.conversation("other-pane", 3);
    let mut input = sandbox.input(Some("gone"));
    input.excluded = BTreeSet::from(["other-pane".to_string()]);
    let outcome = check(&input, Verdict::Fresh, None);
    let recovery = outcome.steps.last().unwrap();
    assert_eq!(recovery.id, StepId::Recovery);
    assert!(
        !recovery.detail.contains("no other conversation"),
        "{recovery:?}"
    );
    assert!(
        recovery
            .detail
            .contains("other-pane is on disk but bound to another surface"),
        "{recovery:?}"
    );

    // Without a held id the scan's evidence says the same.
    let outcome = check(&sandbox.input(None), Verdict::Fresh, None);
    assert_eq!(
        outcome.recoverable_session_id.as_deref(),
        Some("other-pane")
    );
    let outcome = check(&input_without_held(&sandbox), Verdict::Fresh, None);
    let scan = outcome.steps.last().unwrap();
    assert!(
        scan.detail
            .contains("other-pane is on disk but bound to another surface"),
        "{scan:?}"
    );

    // With nothing on disk at all, the plain wording stays.
    let empty = Sandbox::new();
    let outcome = check(&empty.input(Some("gone")), Verdict::Fresh, None);
    assert_eq!(
        outcome.steps.last().unwrap().detail,
        "no other conversation on disk for this working dir"
    );
}

fn input_without_held(sandbox: &Sandbox) -> Input {
    let mut input = sandbox.input(None);
    input.excluded = BTreeSet::from(["other-pane".to_string()]);
    input
}

#[test]
fn durations_are_whole_microseconds() {
    let sandbox = Sandbox::new();
    sandbox.conversation("on-disk", 3);
    for _ in 0..20 {
        let outcome = preflight(&sandbox.input(Some("gone")));
        let text = serde_json::to_string(&outcome).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut durations = vec![value["duration_ms"].clone()];
        durations.extend(
            value["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|step| step["duration_ms"].clone()),
        );
        for duration in durations {
            let printed = duration.to_string();
            let decimals = printed
                .split_once('.')
                .map_or(0, |(_, fraction)| fraction.len());
            assert!(decimals <= 3, "{printed} in {text}");
            let micros = duration.as_f64().unwrap() * 1000.0;
            assert!((micros - micros.round()).abs() < 1e-6, "{printed}");
        }
    }
}

/// A batch asked through one shared cache gets the answers each input gets alone: held
/// transcripts reachable, missing (recovered from the dir, or found in another dir's folder by
/// UUID, or in two folders and so not), a folder with nothing left, across several dirs.
#[test]
fn a_shared_cache_answers_a_batch_as_each_input_alone() {
    let sandbox = Sandbox::new();
    let config = sandbox.config();
    let uuid = |n: u32| format!("{n:08x}-7e57-4c1a-9d2b-00c0ffee0000");
    let dirs: Vec<Utf8PathBuf> = (0..5)
        .map(|n| {
            let dir = sandbox.root.join(format!("work/dir-{n}"));
            std::fs::create_dir_all(&dir).unwrap();
            dir
        })
        .collect();
    let write = |dir: &Utf8Path, session: &str, lines: usize| {
        let path = claude_transcript_path(config.as_str(), dir.as_str(), session, None).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{USER}\n").repeat(lines)).unwrap();
    };
    // dir 0: three transcripts; dir 1: one; dir 2: a UUID also in dir 3 (two folders hold it);
    // dir 4: none.
    write(&dirs[0], &uuid(1), 3);
    write(&dirs[0], &uuid(2), 5);
    write(&dirs[0], "named", 1);
    write(&dirs[1], &uuid(10), 2);
    write(&dirs[2], &uuid(20), 1);
    write(&dirs[3], &uuid(20), 1);
    let mut inputs = Vec::new();
    for (n, dir) in dirs.iter().enumerate() {
        for held in [
            uuid(1),
            uuid(2),
            uuid(10),
            uuid(20),
            uuid(99),
            "named".to_string(),
            "gone".to_string(),
        ] {
            for excluded in [BTreeSet::new(), BTreeSet::from([uuid(2)])] {
                inputs.push(Input {
                    agent: Some("claude".into()),
                    session: Some(held.clone()),
                    cwd: Some(dir.to_string()),
                    config_dir: Some(config.to_string()),
                    excluded,
                    history_session: (n == 3).then(|| uuid(1)),
                    ..Input::default()
                });
            }
        }
    }
    let cache = preflight::Cache::default();
    let answer = |outcome: Outcome| {
        (
            outcome.verdict,
            outcome.session_id,
            outcome.recoverable_session_id,
            outcome
                .steps
                .into_iter()
                .map(|step| (step.id, step.ok, step.detail))
                .collect::<Vec<_>>(),
        )
    };
    let mut verdicts = BTreeSet::new();
    let mut modified = BTreeSet::new();
    for input in &inputs {
        let alone = answer(preflight(input));
        verdicts.insert(format!("{:?}", alone.0));
        assert_eq!(
            answer(preflight::preflight_with(input, &cache)),
            alone,
            "{input:?}"
        );
        // The last change a batch reads (one `stat` where the CLI looks first) is that of the
        // transcript the preflight's rule locates, found in another folder or not at all.
        let located = preflight::open_layout(input, &preflight::Cache::default())
            .and_then(|layout| layout.locate(input.session.as_deref()?).modified());
        assert_eq!(
            preflight::transcript_modified_with(input, &cache),
            located,
            "{input:?}"
        );
        modified.insert(located.is_some());
    }
    assert_eq!(
        modified.len(),
        2,
        "some sessions have a last change, some none"
    );
    assert_eq!(
        verdicts.len(),
        3,
        "resume, recover and fresh all occur: {verdicts:?}"
    );
}
