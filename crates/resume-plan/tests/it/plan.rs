//! The restore plan's rules (`resume_plan::plan`) through the library alone: who holds a
//! session elsewhere (another surface, a running agent), entries refused for a control
//! character in a stored dir, the retention risk, Codex's and Gemini's reasons from the evidence
//! of where their end was seen, and the sessions other surfaces claim, which are never recovered
//! into this one. No binary, no multiplexer, no agent process: the agents' files are written
//! into a sandbox, and the running agents are told to the planner's cache.

use std::fs;
use std::path::PathBuf;

use camino::Utf8PathBuf;
use index_core::{AgentName, Index, Record, Repo, SessionId, SurfaceId};
use launcher_map::Registry;
use preflight::Verdict;
use resume_plan::Environment;
use resume_plan::PlanItem;
use resume_plan::plan::{PlanOptions, Planner, build_plan};
use resume_plan::reasons::{EndEvidence, HeldElsewhere, Refusal, StoredDir, UnclearEnd};
use test_support::sandbox::Sandbox;
use test_support::transcript::{ClaudeLine, jsonl};

/// A sandbox with a Claude Code config dir, a Codex home, a Gemini home and a working dir, and
/// the index the test builds.
struct World {
    sandbox: Sandbox,
    index: Index,
    env: Environment,
    registry: Registry,
}

impl World {
    fn new() -> World {
        let sandbox = Sandbox::default();
        let env = Environment::from_lookup(Some(sandbox.home()), |_| None);
        let world = World {
            sandbox,
            index: Index::default(),
            env,
            registry: Registry::builtin(),
        };
        fs::create_dir_all(world.cwd()).unwrap();
        world
    }

    /// The working dir every session runs in, with its symlinks resolved (as Claude Code names
    /// its project folder).
    fn cwd(&self) -> Utf8PathBuf {
        let dir = self.sandbox.root().join("work");
        fs::create_dir_all(&dir).unwrap();
        utf8(fs::canonicalize(dir).unwrap())
    }

    fn config_dir(&self, agent_name: &str) -> Utf8PathBuf {
        let dir = utf8(self.sandbox.root().join(format!("{agent_name}-config")));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Records `session` of `provider` in `surface`, in the working dir, with its config dir.
    fn record(&mut self, surface: &str, session: &str, agent_name: &str) {
        let mut record = Record::new(
            SurfaceId::new(surface).unwrap(),
            SessionId::new(session).unwrap(),
            Repo::new("repo").unwrap(),
        );
        record.agent = Some(AgentName::new(agent_name).unwrap());
        record.cwd = Some(self.cwd().into_string());
        record.config_dir = Some(self.config_dir(agent_name).into_string());
        self.index.record(record, 1_000);
    }

    /// A Claude Code transcript of `session` in the working dir's project folder, `prompts`
    /// prompts long (the recovery scan takes the largest).
    fn claude_transcript(&self, session: &str, prompts: usize) -> Utf8PathBuf {
        let cwd = self.cwd();
        let folder = preflight::claude::project_dir(&self.config_dir("claude"), &cwd);
        fs::create_dir_all(&folder).unwrap();
        let lines: Vec<_> = (0..prompts)
            .flat_map(|n| {
                let line = ClaudeLine {
                    session,
                    cwd: cwd.as_std_path(),
                    uuid: "00000000-0000-4000-8000-000000000001",
                    parent: None,
                    timestamp: "2026-12-01T07:49:08.000Z",
                };
                [
                    line.user(&format!("prompt {n}")),
                    line.assistant(&format!("msg_{n}"), "answer"),
                ]
            })
            .collect();
        let path = folder.join(format!("{session}.jsonl"));
        fs::write(&path, jsonl(&lines)).unwrap();
        path
    }

    /// A Codex rollout of `session`, as Codex 0.171 writes it, found by the search (no state
    /// database).
    fn codex_rollout(&self, session: &str) {
        let dir = self.config_dir("codex").join("sessions/2026/12/01");
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join(format!("rollout-2026-12-01T07-49-08-{session}.jsonl")),
            "{\"timestamp\":\"2026-12-01T07:49:08.000Z\",\"type\":\"session_meta\",\"payload\":{}}\n",
        )
        .unwrap();
    }

    /// The plan of every surface (those that ended cleanly too).
    fn plan(&self) -> Vec<PlanItem> {
        let options = PlanOptions {
            all: true,
            ..PlanOptions::default()
        };
        build_plan(&self.index, &self.registry, &self.env, options).unwrap()
    }

    fn item(&self, surface: &str) -> PlanItem {
        self.plan()
            .into_iter()
            .find(|item| item.surface == surface)
            .unwrap_or_else(|| panic!("{surface} is not planned"))
    }
}

fn utf8(path: PathBuf) -> Utf8PathBuf {
    Utf8PathBuf::from_path_buf(path).unwrap()
}

#[test]
fn a_session_on_disk_resumes_with_its_command() {
    let mut world = World::new();
    world.record("pane-a", "11111111-aaaa", "claude");
    world.claude_transcript("11111111-aaaa", 1);
    let item = world.item("pane-a");
    assert_eq!(item.verdict, Verdict::Resume);
    assert_eq!(item.session_id.as_deref(), Some("11111111-aaaa"));
    assert!(item.resumable(), "{item:?}");
    let command = item.command.as_deref().unwrap();
    assert!(
        command.ends_with("claude --resume 11111111-aaaa"),
        "{command}"
    );
    assert_eq!(item.held_elsewhere, None);
    assert_eq!(item.refused, None);
    // Claude Code's end reason tells a quit from a crash: no evidence is needed.
    assert_eq!(item.why, None);
}

/// pane-a's plan item while a running Claude Code process (pid 4242) holds `running`.
fn planned_while_an_agent_runs(running: &str) -> PlanItem {
    let mut world = World::new();
    world.record("pane-a", "11111111-aaaa", "claude");
    world.claude_transcript("11111111-aaaa", 1);
    let cache = preflight::Cache::default();
    cache.claude.assume_live_holders(
        &world.config_dir("claude"),
        vec![(running.to_string(), 4242)],
    );
    let entry = world.index.lookup("pane-a").unwrap();
    Planner::with_cache(&world.index, &world.registry, &world.env, cache)
        .item(entry)
        .unwrap()
}

#[test]
fn a_session_a_running_agent_holds_is_held_elsewhere() {
    let item = planned_while_an_agent_runs("11111111-aaaa");
    assert_eq!(
        item.held_elsewhere,
        Some(HeldElsewhere::Agent { pid: 4242 })
    );
    assert!(!item.resumable(), "{item:?}");
    assert_eq!(
        item.held_elsewhere.unwrap().to_string(),
        "a running agent (pid 4242)"
    );
}

#[test]
fn a_running_agent_of_another_session_holds_nothing_here() {
    let item = planned_while_an_agent_runs("22222222-bbbb");
    assert_eq!(item.held_elsewhere, None);
    assert!(item.resumable(), "{item:?}");
}

#[test]
fn a_session_another_surface_holds_is_held_elsewhere() {
    // The entry as a reader got it before its session was recorded again in another pane
    // (`resume-cmd` reads the one entry alone, then the index).
    let mut world = World::new();
    world.record("pane-a", "11111111-aaaa", "claude");
    world.claude_transcript("11111111-aaaa", 1);
    let before = world.index.lookup("pane-a").unwrap().clone();
    world.record("pane-c", "11111111-aaaa", "claude");
    let item = Planner::new(&world.index, &world.registry, &world.env)
        .item(&before)
        .unwrap();
    assert_eq!(item.verdict, Verdict::Resume, "{item:?}");
    assert_eq!(
        item.held_elsewhere,
        Some(HeldElsewhere::Surface {
            surface: "pane-c".to_string()
        }),
        "{item:?}"
    );
    assert!(!item.resumable());
    assert_eq!(item.held_elsewhere.unwrap().to_string(), "surface pane-c");
}

#[test]
fn recovery_takes_a_conversation_no_other_surface_claims() {
    let mut world = World::new();
    world.record("pane-a", "11111111-aaaa", "claude");
    world.record("pane-b", "22222222-bbbb", "claude");
    // pane-a's transcript is gone; of its dir's conversations, pane-b's is the largest but
    // pane-b's own, so the free one is recovered.
    world.claude_transcript("22222222-bbbb", 5);
    world.claude_transcript("33333333-cccc", 1);
    let item = world.item("pane-a");
    assert_eq!(item.verdict, Verdict::Recover, "{item:?}");
    assert_eq!(item.session_id.as_deref(), Some("33333333-cccc"));
    assert_eq!(item.held_elsewhere, None);
    assert!(item.resumable());
    let other = world.item("pane-b");
    assert_eq!(other.verdict, Verdict::Resume);
    assert_eq!(other.session_id.as_deref(), Some("22222222-bbbb"));
}

#[test]
fn a_control_character_in_a_stored_dir_refuses_the_entry() {
    for (dir, field) in [
        (StoredDir::Cwd, "cwd"),
        (StoredDir::ConfigDir, "config_dir"),
    ] {
        let mut world = World::new();
        world.record("pane-a", "11111111-aaaa", "claude");
        world.claude_transcript("11111111-aaaa", 1);
        let mut entry = world.index.lookup("pane-a").unwrap().clone();
        let crafted = format!("{}/x\u{15}y", world.cwd());
        let at = crafted.find('\u{15}').unwrap();
        match dir {
            StoredDir::Cwd => entry.cwd = Some(crafted),
            StoredDir::ConfigDir => entry.config_dir = Some(crafted),
        }
        let (index, _) = Index::from_entries([entry]);
        let item = Planner::new(&index, &world.registry, &world.env)
            .item(index.lookup("pane-a").unwrap())
            .unwrap();
        let expected = Refusal::ControlCharacter {
            surface: "pane-a".to_string(),
            dir,
            code: 0x15,
            at,
        };
        assert_eq!(item.refused.as_ref(), Some(&expected), "{field}");
        assert_eq!(
            item.command, None,
            "{field}: a refused entry gets no command"
        );
        assert!(!item.resumable());
        assert_eq!(item.usable_dir(), None);
        let kind = match dir {
            StoredDir::Cwd => "working dir",
            StoredDir::ConfigDir => "config dir",
        };
        assert_eq!(
            expected.to_string(),
            format!(
                "the entry of surface pane-a is refused: its {kind} contains a control character \
                 (U+0015) at byte {at}; remove it; record the surface again or drop it with \
                 `crash-resume forget`"
            )
        );
    }
}

#[test]
fn a_transcript_near_the_retention_cut_off_is_a_risk() {
    let mut world = World::new();
    world.record("pane-a", "11111111-aaaa", "claude");
    world.claude_transcript("11111111-aaaa", 1);
    assert_eq!(world.item("pane-a").retention, None);
    // A fresh transcript is within the margin of a 5-day cut-off.
    fs::write(
        world.config_dir("claude").join("settings.json"),
        r#"{"cleanupPeriodDays": 5}"#,
    )
    .unwrap();
    let risk = world.item("pane-a").retention.expect("a risk");
    assert_eq!(risk.age_days, 0);
    assert_eq!(risk.cleanup_period_days, 5);
}

#[test]
fn codex_sessions_are_offered_by_where_their_end_was_seen() {
    let mut world = World::new();
    for (surface, session) in [
        ("pane-live", "01a23094-0000-7000-8000-000000000001"),
        ("pane-quit", "01a23094-0000-7000-8000-000000000002"),
        ("pane-gone", "01a23094-0000-7000-8000-000000000003"),
    ] {
        world.record(surface, session, "codex");
    }
    world.codex_rollout("01a23094-0000-7000-8000-000000000001");
    world.codex_rollout("01a23094-0000-7000-8000-000000000002");
    world
        .index
        .end("pane-quit", "01a23094-0000-7000-8000-000000000002", 2_000);

    let live = world.item("pane-live");
    assert!(
        matches!(
            &live.why,
            Some(EndEvidence::Offered {
                agent: UnclearEnd::Codex,
                ..
            })
        ),
        "{live:?}"
    );
    assert!(live.why.as_ref().unwrap().offered());
    assert!(live.why.unwrap().to_string().starts_with(
        "offered: no end was reported from its pane (Codex in its shared daemon reports \
             none), and the rollout resumes ("
    ));

    let quit = world.item("pane-quit");
    assert_eq!(
        quit.why,
        Some(EndEvidence::Ended {
            agent: UnclearEnd::Codex
        })
    );
    assert_eq!(
        quit.why.unwrap().to_string(),
        "not offered: Codex reported its end from its pane, which stayed open (a /quit, Ctrl-C, \
         the end of an exec run or a SIGTERM)"
    );
    // Without --all the plan leaves out what ended cleanly.
    let crashed_only = build_plan(
        &world.index,
        &world.registry,
        &world.env,
        PlanOptions::default(),
    )
    .unwrap();
    assert!(crashed_only.iter().all(|item| item.surface != "pane-quit"));

    let gone = world.item("pane-gone");
    assert_eq!(gone.verdict, Verdict::Fresh);
    let Some(EndEvidence::CannotResume { agent, detail }) = &gone.why else {
        panic!("{gone:?}");
    };
    assert_eq!(*agent, UnclearEnd::Codex);
    assert!(detail.contains("no rollout"), "{detail}");
    assert!(gone.why.unwrap().to_string().starts_with(
        "no end was reported from its pane (Codex in its shared daemon reports none), but \
             Codex cannot resume it: "
    ));
}

#[test]
fn gemini_sessions_say_why_in_gemini_s_words() {
    let mut world = World::new();
    world.record(
        "pane-quit",
        "a1b2c3d4-0000-4000-8000-000000000001",
        "gemini",
    );
    world.record(
        "pane-gone",
        "a1b2c3d4-0000-4000-8000-000000000002",
        "gemini",
    );
    world
        .index
        .end("pane-quit", "a1b2c3d4-0000-4000-8000-000000000001", 2_000);

    let quit = world.item("pane-quit").why.unwrap();
    assert_eq!(
        quit,
        EndEvidence::Ended {
            agent: UnclearEnd::Gemini
        }
    );
    assert_eq!(
        quit.to_string(),
        "not offered: Gemini reported its end from its pane, which stayed open (a /quit, or a \
         SIGINT, SIGTERM or SIGHUP sent to Gemini alone)"
    );

    let gone = world.item("pane-gone");
    assert_eq!(gone.verdict, Verdict::Fresh);
    let why = gone.why.unwrap();
    assert!(
        matches!(
            why,
            EndEvidence::CannotResume {
                agent: UnclearEnd::Gemini,
                ..
            }
        ),
        "{why:?}"
    );
    assert!(
        why.to_string()
            .starts_with("no end was reported from its pane, but Gemini cannot resume it: "),
        "{why}"
    );
}

#[test]
fn the_json_form_says_each_reason_in_words_and_typed_and_reads_back_the_typed() {
    let mut world = World::new();
    world.record("pane-a", "01a23094-0000-7000-8000-000000000001", "codex");
    world.record("pane-b", "11111111-aaaa", "claude");
    let mut item = world.item("pane-a");
    item.held_elsewhere = Some(HeldElsewhere::Surface {
        surface: "pane-z".to_string(),
    });
    let document = serde_json::to_value(&item).unwrap();
    assert_eq!(document["held_elsewhere"], "surface pane-z");
    assert_eq!(
        document["held_by"],
        serde_json::json!({"kind": "surface", "surface": "pane-z"})
    );
    assert_eq!(document["why"], item.why.as_ref().unwrap().to_string());
    assert_eq!(document["end_evidence"]["kind"], "cannot_resume");
    assert_eq!(document["end_evidence"]["agent"], "codex");
    assert_eq!(document["refused"], serde_json::Value::Null);
    assert_eq!(document["refusal"], serde_json::Value::Null);
    let read: PlanItem = serde_json::from_value(document.clone()).unwrap();
    assert_eq!(read, item);
    // The words are never parsed: a reader goes by the typed keys.
    let mut words_changed = document;
    words_changed["held_elsewhere"] = "anything".into();
    let read: PlanItem = serde_json::from_value(words_changed).unwrap();
    assert_eq!(read.held_elsewhere, item.held_elsewhere);

    let plain = world.item("pane-b");
    let document = serde_json::to_value(&plain).unwrap();
    assert_eq!(document["why"], serde_json::Value::Null);
    assert_eq!(document["end_evidence"], serde_json::Value::Null);
    assert!(document.get("cleanup").is_none(), "{document}");
}

#[test]
fn a_working_dir_that_is_gone_is_resumed_from_the_home_dir_without_a_cd() {
    let mut world = World::new();
    // A UUID id: Claude Code, started in the home dir, finds it in the other project folder.
    let claude = "5e551010-0000-4000-8000-00000000000a";
    world.record("pane-a", claude, "claude");
    world.claude_transcript(claude, 1);
    world.record("pane-b", "019a0000-0000-7000-8000-00000000000b", "codex");
    world.codex_rollout("019a0000-0000-7000-8000-00000000000b");
    let cwd = world.cwd();
    fs::remove_dir_all(&cwd).unwrap();
    let home = utf8(world.sandbox.home());

    let plan = world.plan();
    for item in &plan {
        assert_eq!(item.cwd.as_deref(), Some(cwd.as_str()), "{}", item.surface);
        assert_eq!(item.verdict, Verdict::Resume, "{item:#?}");
        assert_eq!(item.starts_in.as_deref(), Some(home.as_str()), "{item:#?}");
        assert_eq!(item.usable_dir(), Some(home.as_str()), "{item:#?}");
        let command = item.command.as_deref().unwrap();
        assert!(
            !command.contains("cd "),
            "no cd into a dir that is gone: {command}"
        );
    }
    let config = world.config_dir("claude");
    assert_eq!(
        plan[0].command.as_deref(),
        Some(format!("CLAUDE_CONFIG_DIR={config} claude --resume {claude}").as_str())
    );
    let codex_home = world.config_dir("codex");
    assert_eq!(
        plan[1].command.as_deref(),
        Some(
            format!("CODEX_HOME={codex_home} codex resume 019a0000-0000-7000-8000-00000000000b")
                .as_str()
        )
    );
    // The plan's JSON form says where it starts, and reads back the same.
    let json = serde_json::to_value(&plan[0]).unwrap();
    assert_eq!(json["starts_in"], home.as_str());
    assert_eq!(serde_json::from_value::<PlanItem>(json).unwrap(), plan[0]);

    // With the dir back, the command changes into it again and nothing is noted.
    fs::create_dir_all(&cwd).unwrap();
    let item = world.item("pane-a");
    assert_eq!(item.starts_in, None);
    assert!(item.command.unwrap().starts_with(&format!("cd {cwd} && ")));
}

#[test]
fn a_claude_id_that_is_not_a_uuid_is_fresh_when_its_dir_is_gone() {
    // Started in the home dir, Claude Code looks in the home dir's project folder, and looks
    // further only for a UUID.
    let mut world = World::new();
    world.record("pane-a", "11111111-aaaa", "claude");
    world.claude_transcript("11111111-aaaa", 1);
    fs::remove_dir_all(world.cwd()).unwrap();
    let item = world.item("pane-a");
    assert_eq!(item.verdict, Verdict::Fresh, "{item:#?}");
    assert_eq!(item.command, None);
    assert_eq!(
        item.starts_in.as_deref(),
        Some(utf8(world.sandbox.home()).as_str())
    );
}

/// The launch its hook recorded: the command passes the kept flags the pinned CLI still takes
/// and sets the agent's variables (quoted); a flag it does not take is dropped with a note, a
/// variable that is not the agent's is left out.
#[test]
fn the_command_starts_the_agent_as_it_was_started() {
    let mut world = World::new();
    world.record("pane-a", "11111111-aaaa", "claude");
    world.claude_transcript("11111111-aaaa", 1);
    let mut entry = world.index.lookup("pane-a").unwrap().clone();
    entry.launch = Some(index_core::Launch {
        args: [
            "--model",
            "opus",
            "--old-flag",
            "--add-dir",
            "../my dir",
            "-p",
            "secret",
        ]
        .map(String::from)
        .to_vec(),
        env: [
            ("ANTHROPIC_MODEL".to_string(), "claude $(x)".to_string()),
            ("ANTHROPIC_API_KEY".to_string(), "sk-1".to_string()),
        ]
        .into(),
        wrapper: None,
    });
    world.index = Index::from_entries([entry]).0;
    let item = world.item("pane-a");
    let command = item.command.as_deref().unwrap();
    assert!(
        command.ends_with(
            "ANTHROPIC_MODEL='claude $(x)' claude --resume 11111111-aaaa --model opus --add-dir \
             '../my dir'"
        ),
        "{command}"
    );
    let launch = item.launch.as_ref().unwrap();
    assert_eq!(launch.dropped, ["--old-flag"]);
    assert!(
        !command.contains("sk-1") && !command.contains("secret"),
        "{command}"
    );
    let notes = launch.notes(&item.surface, &item.agent);
    let note = &notes[0];
    assert!(
        note.contains("--old-flag") && note.contains("Claude Code"),
        "{note}"
    );
    // The --json form holds it, and reads back.
    let json = serde_json::to_value(&item).unwrap();
    assert_eq!(json["launch"]["args"][1], "opus", "{json}");
    assert_eq!(json["launch"]["dropped"][0], "--old-flag", "{json}");
    assert_eq!(
        json["launch"]["env"]["ANTHROPIC_MODEL"], "claude $(x)",
        "{json}"
    );
    let back: PlanItem = serde_json::from_value(json).unwrap();
    assert_eq!(back, item);
}

/// Qwen Code's `QWEN_RUNTIME_DIR`, recorded from its environment: the preflight looks for the
/// session there, and the command sets it again.
#[test]
fn qwens_recorded_runtime_dir_is_where_its_session_is_looked_for_and_is_set_again() {
    let mut world = World::new();
    let session = "22222222-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    world.record("pane-q", session, "qwen");
    let runtime = world.sandbox.root().join("qwen runtime");
    let runtime = Utf8PathBuf::from_path_buf(runtime).unwrap();
    let cwd = world.cwd();
    let chats =
        preflight::qwen::chats_dir(&runtime, &preflight::qwen::physical_dir(cwd.as_str(), None));
    fs::create_dir_all(&chats).unwrap();
    let line = serde_json::json!({
        "uuid": "u1", "parentUuid": null, "sessionId": session, "type": "user",
        "cwd": cwd, "timestamp": "2026-12-01T07:49:08.000Z",
        "message": {"role": "user", "parts": [{"text": "hi"}]},
    });
    fs::write(chats.join(format!("{session}.jsonl")), format!("{line}\n")).unwrap();
    assert_eq!(world.item("pane-q").verdict, Verdict::Fresh);
    let mut entry = world.index.lookup("pane-q").unwrap().clone();
    entry.launch = Some(index_core::Launch {
        env: [("QWEN_RUNTIME_DIR".to_string(), runtime.to_string())].into(),
        ..index_core::Launch::default()
    });
    world.index = Index::from_entries([entry]).0;
    let item = world.item("pane-q");
    assert_eq!(item.verdict, Verdict::Resume, "{item:?}");
    let command = item.command.as_deref().unwrap();
    assert!(
        command.ends_with(&format!(
            "QWEN_RUNTIME_DIR='{runtime}' qwen --resume {session}"
        )),
        "{command}"
    );
}
