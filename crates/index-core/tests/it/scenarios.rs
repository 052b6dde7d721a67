//! The scenarios the JavaScript crash-resume-index promises, and the rules added here.

use index_core::{
    IdKind, Index, InvalidId, MAX_ID_BYTES, MAX_PREVIOUS_SESSIONS, Record, Repo, Role, SessionId,
    SurfaceId,
};

fn rec(surface: &str, session: &str, repo: &str) -> Record {
    Record::new(
        SurfaceId::new(surface).unwrap(),
        SessionId::new(session).unwrap(),
        Repo::new(repo).unwrap(),
    )
}

#[test]
fn ids_reject_empty_blank_control_and_over_long() {
    let check = |value: &str, expected: Option<InvalidId>| {
        assert_eq!(SurfaceId::new(value).err(), expected, "{value:?}");
    };
    let kind = IdKind::Surface;
    check("cmux-pane-42", None);
    check("tmux:main:0.1", None);
    check(" padded ", None);
    check("pane ünïcødé 😀", None);
    check("", Some(InvalidId::Empty { kind }));
    check("   ", Some(InvalidId::Blank { kind }));
    check(
        "\t",
        Some(InvalidId::Control {
            kind,
            code: 9,
            at: 0,
        }),
    );
    check(
        "a\nb",
        Some(InvalidId::Control {
            kind,
            code: 10,
            at: 1,
        }),
    );
    check(
        "a\u{7f}",
        Some(InvalidId::Control {
            kind,
            code: 0x7f,
            at: 1,
        }),
    );
    check(&"x".repeat(MAX_ID_BYTES), None);
    check(
        &"x".repeat(MAX_ID_BYTES + 1),
        Some(InvalidId::TooLong {
            kind,
            len: MAX_ID_BYTES + 1,
        }),
    );
    assert_eq!(
        SessionId::new(" ").unwrap_err().to_string(),
        "session id is only whitespace; give a non-blank value"
    );
}

#[test]
fn capture_then_lookup() {
    let mut index = Index::default();
    let mut record = rec("cmux-pane-42", "01J-orc-lead-xyz", "orchestrator");
    record.role = Some(Role::new("lead").unwrap());
    let outcome = index.record(record, 1_700_000_000_000);
    assert!(outcome.first_sight);
    let entry = index.lookup("cmux-pane-42").unwrap();
    assert_eq!(entry.session.as_str(), "01J-orc-lead-xyz");
    assert_eq!(entry.repo.as_str(), "orchestrator");
    assert_eq!(entry.role.as_ref().unwrap().as_str(), "lead");
    assert_eq!(entry.captured_at, 1_700_000_000_000);
    assert_eq!(entry.last_active, Some(1_700_000_000_000));
}

#[test]
fn re_record_keeps_captured_at_and_role() {
    let mut index = Index::default();
    let mut first = rec("s1", "a", "golems");
    first.role = Some(Role::new("worker").unwrap());
    index.record(first, 1_000);
    let outcome = index.record(rec("s1", "a", "golems"), 5_000);
    assert!(!outcome.first_sight);
    assert_eq!(outcome.superseded, None);
    let entry = index.lookup("s1").unwrap();
    assert_eq!(entry.captured_at, 1_000);
    assert_eq!(entry.last_active, Some(5_000));
    assert_eq!(entry.role.as_ref().unwrap().as_str(), "worker");
}

#[test]
fn touch_keeps_a_long_running_session_resumable() {
    let mut index = Index::default();
    index.record(rec("s1", "a", "r"), 0);
    let hour = 3_600_000;
    assert!(index.touch("s1", 10 * hour));
    assert!(
        index
            .resumable_for("s1", Some(2 * hour), 11 * hour)
            .is_some()
    );
    assert!(
        index
            .resumable_for("s1", Some(2 * hour), 13 * hour)
            .is_none()
    );
}

#[test]
fn touch_of_unknown_surface_changes_nothing() {
    let mut index = Index::default();
    index.record(rec("s1", "a", "r"), 0);
    let before = index.clone();
    assert!(!index.touch("nope", 10));
    assert_eq!(index, before);
}

#[test]
fn no_max_age_never_denies() {
    let mut index = Index::default();
    index.record(rec("s1", "a", "r"), 0);
    assert!(index.resumable_for("s1", None, u64::MAX).is_some());
}

#[test]
fn unknown_surface_gives_nothing() {
    let index = Index::default();
    assert!(index.lookup("ghost").is_none());
    assert!(index.resumable_for("ghost", None, 0).is_none());
}

#[test]
fn staleness_is_measured_from_last_active_else_captured_at() {
    let mut index = Index::default();
    index.record(rec("s1", "a", "r"), 100);
    // Exactly max age is still resumable; one millisecond more is not.
    assert!(index.resumable_for("s1", Some(50), 150).is_some());
    assert!(index.resumable_for("s1", Some(50), 151).is_none());

    let (index, _) = Index::from_entries([{
        let mut entry = index.lookup("s1").unwrap().clone();
        entry.last_active = None;
        entry.captured_at = 1_000;
        entry
    }]);
    assert!(index.resumable_for("s1", Some(10), 1_010).is_some());
    assert!(index.resumable_for("s1", Some(10), 1_011).is_none());
}

#[test]
fn prune_drops_old_entries_only() {
    let mut index = Index::default();
    index.record(rec("old", "a", "r"), 0);
    index.record(rec("new", "b", "r"), 900);
    let dropped = index.prune_stale(500, 1_000);
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].surface.as_str(), "old");
    assert!(index.lookup("old").is_none());
    assert!(index.lookup("new").is_some());
    assert!(index.owner_of("a").is_none());
}

#[test]
fn forget_drops_one_entry() {
    let mut index = Index::default();
    index.record(rec("s1", "a", "r"), 0);
    index.record(rec("s2", "b", "r"), 0);
    assert_eq!(index.forget("s1").unwrap().session.as_str(), "a");
    assert!(index.forget("s1").is_none());
    assert_eq!(index.len(), 1);
}

#[test]
fn a_new_session_on_a_surface_extends_its_chain() {
    let mut index = Index::default();
    index.record(rec("s1", "a", "r"), 0);
    let outcome = index.record(rec("s1", "b", "r"), 1);
    assert_eq!(outcome.superseded.unwrap().as_str(), "a");
    index.record(rec("s1", "c", "r"), 2);
    let entry = index.lookup("s1").unwrap();
    let chain: Vec<&str> = entry.chain().map(SessionId::as_str).collect();
    assert_eq!(chain, ["a", "b", "c"]);
    // Returning to an earlier id moves it to the head, once.
    index.record(rec("s1", "a", "r"), 3);
    let chain: Vec<&str> = index
        .lookup("s1")
        .unwrap()
        .chain()
        .map(SessionId::as_str)
        .collect();
    assert_eq!(chain, ["b", "c", "a"]);
}

#[test]
fn the_chain_is_bounded_newest_last() {
    let mut index = Index::default();
    for n in 0..(MAX_PREVIOUS_SESSIONS + 5) {
        index.record(rec("s1", &format!("id{n}"), "r"), n as u64);
    }
    let entry = index.lookup("s1").unwrap();
    assert_eq!(entry.previous_sessions.len(), MAX_PREVIOUS_SESSIONS);
    assert_eq!(entry.previous_sessions.first().unwrap().as_str(), "id4");
    assert_eq!(
        entry.previous_sessions.last().unwrap().as_str(),
        format!("id{}", MAX_PREVIOUS_SESSIONS + 3)
    );
}

#[test]
fn one_session_belongs_to_one_surface() {
    let mut index = Index::default();
    index.record(rec("A", "S", "r"), 0);
    let outcome = index.record(rec("B", "S", "r"), 1);
    assert_eq!(outcome.displaced.unwrap().as_str(), "A");
    assert!(index.lookup("A").is_none());
    assert_eq!(index.owner_of("S").unwrap().as_str(), "B");
}

#[test]
fn optional_fields_not_given_keep_prior_values() {
    let mut index = Index::default();
    let mut first = rec("s1", "a", "r");
    first.cwd = Some("/home/u/proj".into());
    first.config_dir = Some("/home/u/.claude".into());
    index.record(first, 0);
    index.record(rec("s1", "b", "r2"), 1);
    let entry = index.lookup("s1").unwrap();
    assert_eq!(entry.cwd.as_deref(), Some("/home/u/proj"));
    assert_eq!(entry.config_dir.as_deref(), Some("/home/u/.claude"));
    assert_eq!(entry.repo.as_str(), "r2");
}

#[test]
fn end_marks_only_the_current_session_and_record_clears_it() {
    let mut index = Index::default();
    index.record(rec("s1", "a", "r"), 0);
    assert!(!index.end("s1", "other", 5));
    assert!(index.end("s1", "a", 5));
    assert_eq!(index.lookup("s1").unwrap().ended_at, Some(5));
    index.record(rec("s1", "a", "r"), 6);
    assert_eq!(index.lookup("s1").unwrap().ended_at, None);
}

#[test]
fn from_entries_keeps_the_latest_holder_of_a_session() {
    let mut index = Index::default();
    index.record(rec("A", "S", "r"), 0);
    let a = index.lookup("A").unwrap().clone();
    let mut b = a.clone();
    b.surface = SurfaceId::new("B").unwrap();
    b.last_active = Some(10);
    let (index, conflicts) = Index::from_entries([b, a]);
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].dropped.surface.as_str(), "A");
    assert_eq!(conflicts[0].kept.as_str(), "B");
    assert_eq!(index.owner_of("S").unwrap().as_str(), "B");
    assert_eq!(index.len(), 1);
}

#[test]
fn activity_is_the_later_of_last_active_and_the_conversation() {
    let mut index = Index::default();
    index.record(rec("busy", "s-busy", "r"), 1_000);
    index.record(rec("idle", "s-idle", "r"), 1_000);
    index.record(rec("unknown", "s-unknown", "r"), 1_000);
    let conversation = |entry: &index_core::Entry| match entry.surface.as_str() {
        "busy" => Some(9_000),
        "idle" => Some(500),
        _ => None,
    };
    let busy = index.lookup("busy").unwrap();
    assert_eq!(busy.last_activity(conversation(busy)), 9_000);
    assert_eq!(busy.activity_age(conversation(busy), 10_000), 1_000);
    let idle = index.lookup("idle").unwrap();
    assert_eq!(
        idle.last_activity(conversation(idle)),
        1_000,
        "an older file never ages it"
    );
    // Exactly the max age is still active.
    assert!(!busy.is_inactive(1_000, conversation(busy), 10_000));
    assert!(busy.is_inactive(999, conversation(busy), 10_000));

    let dropped: Vec<String> = index
        .prune_inactive(2_000, 10_000, conversation)
        .into_iter()
        .map(|entry| entry.surface.to_string())
        .collect();
    assert_eq!(dropped, ["idle", "unknown"]);
    assert!(index.lookup("busy").is_some());
}

#[test]
fn a_restore_claim_is_taken_back_only_by_its_own_restore() {
    let mut index = Index::default();
    index.record(rec("tmux:w:0.0", "s-1", "r"), 1);
    assert!(index.claim_restore("tmux:w:0.0", "s-1", 600_000, 10));
    // Another claim time, another session, another surface: left alone.
    assert!(!index.release_restore("tmux:w:0.0", "s-1", 11));
    assert!(!index.release_restore("tmux:w:0.0", "s-2", 10));
    assert!(!index.release_restore("tmux:w:9.9", "s-1", 10));
    assert_eq!(
        index.lookup("tmux:w:0.0").unwrap().restore_claimed_at,
        Some(10)
    );
    assert!(index.release_restore("tmux:w:0.0", "s-1", 10));
    assert_eq!(index.lookup("tmux:w:0.0").unwrap().restore_claimed_at, None);
    // Free again: the next restore claims it at once.
    assert!(index.claim_restore("tmux:w:0.0", "s-1", 600_000, 12));
}

#[test]
fn a_restore_claim_survives_the_agents_record_and_is_judged_by_the_caller() {
    let mut index = Index::default();
    index.record(rec("wezterm:3", "s-1", "r"), 1);
    let claimant = index_core::Claimant {
        pid: 42,
        started: 5,
        opened: false,
    };
    assert!(index.claim_restore_by("wezterm:3", "s-1", Some(claimant), 10, |_| true));
    assert!(index.mark_restore_opened("wezterm:3", 10));
    assert!(
        !index.mark_restore_opened("wezterm:3", 11),
        "another claim's time"
    );
    // The resumed agent records itself: the claim stays, opened, with its restore named.
    index.record(rec("wezterm:3", "s-1", "r"), 20);
    let entry = index.lookup("wezterm:3").unwrap();
    assert_eq!(entry.restore_claimed_at, Some(10));
    assert_eq!(
        entry.restore_claimed_by,
        Some(index_core::Claimant {
            opened: true,
            ..claimant
        })
    );
    // A claim the caller judges to hold keeps the next restore away; one it judges void does
    // not, and the new claim replaces it.
    assert!(
        !index.claim_restore_by("wezterm:3", "s-1", None, 30, |entry| {
            entry.last_active == Some(20)
        })
    );
    assert!(index.claim_restore_by("wezterm:3", "s-1", None, 31, |_| false));
    let entry = index.lookup("wezterm:3").unwrap();
    assert_eq!(
        (entry.restore_claimed_at, entry.restore_claimed_by),
        (Some(31), None)
    );
}

#[test]
fn rename_moves_an_entry_with_its_chain_to_a_free_surface_only() {
    let mut index = Index::default();
    index.record(rec("tmux:w:0.0", "s1", "r"), 1);
    index.record(rec("tmux:w:0.0", "s2", "r"), 2);
    index.record(rec("taken", "s3", "r"), 3);
    let new = SurfaceId::new("tmux:/tmp/tmux-0/default:w:0.0").unwrap();
    assert!(!index.rename("tmux:w:0.0", SurfaceId::new("taken").unwrap()));
    assert!(!index.rename("nowhere", new.clone()));
    assert!(index.rename("tmux:w:0.0", new.clone()));
    assert!(index.lookup("tmux:w:0.0").is_none());
    let moved = index.lookup(new.as_str()).unwrap();
    assert_eq!(moved.session.as_str(), "s2");
    assert_eq!(moved.captured_at, 1);
    let chain: Vec<&str> = moved
        .previous_sessions
        .iter()
        .map(|id| id.as_str())
        .collect();
    assert_eq!(chain, ["s1"]);
    assert_eq!(index.owner_of("s2"), Some(&new));
    // A new session there supersedes the moved one, as on the old surface.
    index.record(rec(new.as_str(), "s4", "r"), 4);
    let chain: Vec<&str> = index
        .lookup(new.as_str())
        .unwrap()
        .previous_sessions
        .iter()
        .map(|id| id.as_str())
        .collect();
    assert_eq!(chain, ["s1", "s2"]);
}
