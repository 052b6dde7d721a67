//! The file format: the JavaScript tool's files load here, ours load there, nothing unknown is
//! dropped, a newer version is refused untouched.

use std::process::Command;

use index_store::{StoreError, Warning};
use test_support::process::stdout_of;

use crate::{fixture, rec, store_at, temp_dir};

fn node_tool(args: &[&str]) -> String {
    stdout_of(
        Command::new("node")
            .arg(fixture("js-tool.mjs").as_str())
            .args(args),
        "Node.js is part of the test machine",
    )
}

#[test]
fn a_file_written_by_the_javascript_tool_loads() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    std::fs::copy(fixture("js-index.json"), &path).unwrap();
    let snapshot = store_at(&path).load().unwrap();
    assert!(snapshot.warnings.is_empty(), "{:?}", snapshot.warnings);
    let lead = snapshot.index.lookup("cmux-pane-42").unwrap();
    assert_eq!(lead.session.as_str(), "01J-orc-lead-xyz");
    assert_eq!(lead.repo.as_str(), "orchestrator");
    assert_eq!(lead.role.as_ref().unwrap().as_str(), "lead");
    assert_eq!(lead.captured_at, 1_700_000_000_000);
    assert_eq!(lead.last_active, Some(1_700_000_005_000));
    assert!(snapshot.index.lookup("cmux-pane-7").unwrap().role.is_none());
    assert!(snapshot.index.lookup("cmux-pane-9").unwrap().role.is_none());
}

#[test]
fn the_javascript_tool_writes_and_we_read_then_we_write_and_it_reads() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    node_tool(&[
        "record",
        path.as_str(),
        "pane-1",
        "sess-1",
        "golems",
        "lead",
        "1000",
    ]);
    node_tool(&[
        "record",
        path.as_str(),
        "pane-2",
        "sess-2",
        "orchestrator",
        "2000",
    ]);
    let store = store_at(&path);
    let snapshot = store.load().unwrap();
    assert_eq!(snapshot.index.len(), 2);
    assert_eq!(snapshot.index.lookup("pane-2").unwrap().captured_at, 2000);

    let mut record = rec("pane-3", "sess-3", "brainlayer");
    record.cwd = Some("/home/u/my proj".into());
    store.update(|index| index.record(record, 3000)).unwrap();
    store.update(|index| index.touch("pane-1", 4000)).unwrap();

    let read = node_tool(&["read", path.as_str()]);
    assert_eq!(
        read,
        "pane-1 sess-1 golems lead 1000 4000\n\
         pane-2 sess-2 orchestrator - 2000 2000\n\
         pane-3 sess-3 brainlayer - 3000 3000\n"
    );
    // The JavaScript tool can go on recording into our file.
    node_tool(&[
        "record",
        path.as_str(),
        "pane-3",
        "sess-3",
        "brainlayer",
        "5000",
    ]);
    let entry = store
        .load()
        .unwrap()
        .index
        .lookup("pane-3")
        .unwrap()
        .clone();
    assert_eq!(entry.last_active, Some(5000));
    assert_eq!(
        entry.cwd.as_deref(),
        Some("/home/u/my proj"),
        "our field survives its rewrite"
    );
}

#[test]
fn unknown_fields_are_kept_on_rewrite() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    std::fs::write(
        &path,
        r#"{"version":1,"producer":{"name":"js"},"entries":{
            "a":{"surfaceId":"a","sessionId":"s","repo":"r","role":null,"captured_at":1,"last_active":2,"color":"blue","tags":[1,2]}}}"#,
    )
    .unwrap();
    let store = store_at(&path);
    store.update(|index| index.touch("a", 10)).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["producer"]["name"], "js");
    assert_eq!(json["entries"]["a"]["color"], "blue");
    assert_eq!(json["entries"]["a"]["tags"], serde_json::json!([1, 2]));
    assert_eq!(json["entries"]["a"]["last_active"], 10);
}

#[test]
fn the_window_layout_is_read_written_and_kept_by_a_record_without_one() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let layout = "21be,200x50,0,0{100x50,0,0,0,99x50,101,0,1}";
    let mut first = rec("tmux:w:0.0", "s", "r");
    first.window_layout = Some(layout.to_string());
    let store = store_at(&path);
    store.update(|index| index.record(first, 1)).unwrap();
    // A later record that learnt no layout (a hook's retry) keeps the one recorded.
    store
        .update(|index| index.record(rec("tmux:w:0.0", "s", "r"), 2))
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["entries"]["tmux:w:0.0"]["window_layout"], layout);
    let index = store.load().unwrap().index;
    assert_eq!(
        index.lookup("tmux:w:0.0").unwrap().window_layout.as_deref(),
        Some(layout)
    );
}

/// How the agent was started is read and written back, survives the JavaScript tool's rewrite,
/// and one this version cannot read (a later version's) is kept as it was.
#[test]
fn the_launch_round_trips_and_an_unreadable_one_is_kept() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let mut record = rec("pane-1", "sess-1", "r");
    let launch = index_core::Launch {
        args: vec!["--model".into(), "opus".into()],
        env: [("ANTHROPIC_MODEL".to_string(), "m 1".to_string())].into(),
        wrapper: Some(index_core::Wrapper {
            path: "/home/u/bin/cl".into(),
            passes_args: true,
        }),
    };
    record.launch = Some(launch.clone());
    let store = store_at(&path);
    store.update(|index| index.record(record, 1000)).unwrap();
    node_tool(&["record", path.as_str(), "pane-1", "sess-1", "r", "2000"]);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        json["entries"]["pane-1"]["launch"],
        serde_json::json!({"args": ["--model", "opus"], "env": {"ANTHROPIC_MODEL": "m 1"},
            "wrapper": {"path": "/home/u/bin/cl", "passes_args": true}})
    );
    let entry = store
        .load()
        .unwrap()
        .index
        .lookup("pane-1")
        .unwrap()
        .clone();
    assert_eq!(entry.launch, Some(launch));
    assert_eq!(entry.last_active, Some(2000));

    let later = br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1,"launch":{"argv":["x"]}}}}"#;
    let document = index_store::format::parse(later).unwrap();
    assert_eq!(document.index.lookup("a").unwrap().launch, None);
    let written: serde_json::Value =
        serde_json::from_slice(&index_store::format::serialize(&document)).unwrap();
    assert_eq!(
        written["entries"]["a"]["launch"],
        serde_json::json!({"argv": ["x"]})
    );
}

/// A restore's claim and its claimant are read, written back as they were, and a claimant
/// that does not read is no claimant (the claim is then an earlier version's).
#[test]
fn a_claim_and_its_restore_round_trip() {
    let bytes = br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1,"restore_claimed_at":4,"restore_claimed_by":{"pid":42,"started":3,"opened":true}}}}"#;
    let document = index_store::format::parse(bytes).unwrap();
    let entry = document.index.lookup("a").unwrap();
    assert_eq!(
        entry.restore_claimed_by,
        Some(index_core::Claimant {
            pid: 42,
            started: 3,
            opened: true
        })
    );
    let written = index_store::format::serialize(&document);
    let again: serde_json::Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(
        again["entries"]["a"]["restore_claimed_by"],
        serde_json::json!({"pid": 42, "started": 3, "opened": true})
    );
    let malformed = br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1,"restore_claimed_at":4,"restore_claimed_by":[1]}}}"#;
    let entry = index_store::format::parse(malformed).unwrap().index;
    let entry = entry.lookup("a").unwrap();
    assert_eq!(
        (entry.restore_claimed_at, entry.restore_claimed_by),
        (Some(4), None)
    );
}

#[test]
fn the_six_fields_are_always_written_with_their_names() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    store_at(&path)
        .update(|index| index.record(rec("p", "s", "r"), 1_700_000_000_000))
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"version": 1, "entries": {"p": {
            "surfaceId": "p", "sessionId": "s", "repo": "r", "role": null,
            "captured_at": 1_700_000_000_000u64, "last_active": 1_700_000_000_000u64}}})
    );
}

#[test]
fn an_unusable_entry_is_kept_verbatim_and_reported() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    std::fs::write(
        &path,
        r#"{"version":1,"entries":{"bad":{"surfaceId":"bad","sessionId":"","repo":"r","captured_at":1},
            "good":{"surfaceId":"good","sessionId":"s","repo":"r","captured_at":1,"last_active":1}}}"#,
    )
    .unwrap();
    let store = store_at(&path);
    let updated = store.update(|index| index.touch("good", 5)).unwrap();
    assert!(
        matches!(&updated.warnings[..], [Warning::Problem { .. }]),
        "{:?}",
        updated.warnings
    );
    assert!(
        updated.warnings[0]
            .to_string()
            .contains("entry bad is not usable")
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["entries"]["bad"]["sessionId"], "");
    assert_eq!(json["entries"]["good"]["last_active"], 5);
}

/// JavaScript has one number type: a version written `1.0` or `1e0` is the version 1 its reader
/// accepts, not damage; one that is not whole is.
#[test]
fn a_version_written_as_a_whole_float_is_that_version() {
    let entries = r#""entries":{"a":{"surfaceId":"a","sessionId":"s","repo":"r","captured_at":1}}"#;
    for version in ["1.0", "1e0", "1.0E0"] {
        let document =
            index_store::format::parse(format!(r#"{{"version":{version},{entries}}}"#).as_bytes())
                .unwrap_or_else(|error| panic!("{version}: {error:?}"));
        assert!(document.index.lookup("a").is_some(), "{version}");
    }
    let newer = index_store::format::parse(br#"{"version":2.0,"entries":{}}"#);
    assert!(
        matches!(newer, Err(index_store::format::ParseError::NewerVersion(2))),
        "{newer:?}"
    );
    let torn = index_store::format::parse(br#"{"version":1.5,"entries":{}}"#);
    assert!(
        matches!(torn, Err(index_store::format::ParseError::Corrupt(_))),
        "{torn:?}"
    );
}

#[test]
fn fractional_javascript_times_are_read() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    std::fs::write(
        &path,
        r#"{"version":1,"entries":{"a":{"surfaceId":"a","sessionId":"s","repo":"r","captured_at":1700000000000.5}}}"#,
    )
    .unwrap();
    let entry = store_at(&path)
        .load()
        .unwrap()
        .index
        .lookup("a")
        .unwrap()
        .clone();
    assert_eq!(entry.captured_at, 1_700_000_000_000);
    assert_eq!(entry.last_active, None);
}

#[test]
fn a_newer_version_is_refused_and_left_untouched() {
    let (_dir, dir) = temp_dir();
    let path = dir.join("index.json");
    let text = r#"{"version":2,"entries":{}}"#;
    std::fs::write(&path, text).unwrap();
    let store = store_at(&path);
    let error = store.update(|index| index.touch("a", 1)).unwrap_err();
    assert!(
        matches!(error, StoreError::NewerVersion { found: 2, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("upgrade crash-resume"));
    assert!(matches!(store.load(), Err(StoreError::NewerVersion { .. })));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "only the index and its lock"
    );
}

/// The fast path of `parse` gives the same document as the general path, whatever the file.
#[test]
fn the_fast_path_agrees_with_the_general_path() {
    let js = std::fs::read(fixture("js-index.json")).unwrap();
    let cases: Vec<Vec<u8>> = vec![
        js,
        br#"{"version":1,"entries":{}}"#.to_vec(),
        br#"{"entries":null}"#.to_vec(),
        br#"{}"#.to_vec(),
        br#"{"version":1,"producer":"x","entries":{"a":{"surfaceId":"a","sessionId":"s","repo":"r","role":"lead","captured_at":1,"last_active":2,"provider":"claude","cwd":"/w","config_dir":"/c","previous_sessions":["p1","p2"],"ended_at":3,"restore_claimed_at":4,"window_layout":"21be,200x50,0,0,0"}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1,"restore_claimed_at":4,"restore_claimed_by":{"pid":42,"started":3,"opened":true}}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1,"restore_claimed_at":4,"restore_claimed_by":"x"}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1,"launch":{"args":["--model","opus"],"env":{"ANTHROPIC_MODEL":"m"},"wrapper":{"path":"/w","passes_args":true}}}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1,"launch":{"args":"--model","later":1}}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"surfaceId":"a","sessionId":"s","repo":"r","captured_at":1.5,"extra":true}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"","repo":"r","captured_at":1},"b":{"sessionId":"s","repo":"r","captured_at":2}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1},"b":{"sessionId":"s","repo":"r","captured_at":2}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","captured_at":1},"a":{"sessionId":"t","repo":"r","captured_at":2}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"s","repo":"r","role":"","captured_at":1,"previous_sessions":[" "]}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a\u0001":{"sessionId":"s","repo":"r","captured_at":1}}}"#.to_vec(),
        br#"{"version":1,"entries":{"a":{"sessionId":"s\"q","repo":"r\u00e9","captured_at":1}}}"#.to_vec(),
        br#"{"version":2,"entries":{}}"#.to_vec(),
        br#"{"version":2,"version":1,"entries":{}}"#.to_vec(),
        br#"{"version":"1","entries":{}}"#.to_vec(),
        br#"{"version":1,"entries":[]}"#.to_vec(),
        br#"[1,2]"#.to_vec(),
        br#"{"version":1,"entries":{"a":"#.to_vec(),
    ];
    for bytes in cases {
        let text = String::from_utf8_lossy(&bytes).to_string();
        // Reading one entry gives what the full parse gives, or defers to it.
        if let Ok(full) = index_store::format::parse(&bytes) {
            for surface in ["a", "b", "cmux-pane-42", "cmux-pane-7", "missing"] {
                if let Some(one) = index_store::format::parse_one(&bytes, surface) {
                    assert_eq!(
                        one.as_ref(),
                        full.index.lookup(surface),
                        "{surface} in {text}"
                    );
                }
            }
        }
        let fast = index_store::format::parse(&bytes);
        let general = index_store::format::parse_general_for_tests(&bytes);
        match (fast, general) {
            (Ok(fast), Ok(general)) => {
                assert_eq!(
                    index_store::format::serialize(&fast),
                    index_store::format::serialize(&general),
                    "{text}"
                );
                assert_eq!(fast.problems, general.problems, "{text}");
                assert_eq!(fast.index, general.index, "{text}");
            }
            (Err(fast), Err(general)) => assert_eq!(fast, general, "{text}"),
            (fast, general) => panic!(
                "{text}: fast {:?}, general {:?}",
                fast.is_ok(),
                general.is_ok()
            ),
        }
    }
}
