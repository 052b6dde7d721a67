//! Values that reach a shell, an agent's command line or a terminal are inert: ids and dirs
//! with control characters and option-like session ids are refused; human output escapes what
//! a terminal would act on.

use index_core::text::escape;
use index_core::{IdKind, InvalidId, SessionId, check_dirs, validate_dir};

#[test]
fn a_session_id_that_looks_like_an_option_is_refused() {
    for id in ["-", "--dangerously-skip-permissions", "-r", "- x"] {
        assert_eq!(
            SessionId::new(id),
            Err(InvalidId::OptionLike {
                kind: IdKind::Session
            }),
            "{id:?}"
        );
    }
    for id in ["a-b", "01J-orc", "x--y"] {
        assert!(SessionId::new(id).is_ok(), "{id:?}");
    }
}

#[test]
fn a_dir_with_a_control_character_is_refused() {
    let check = |dir: &str, expected: Option<(u32, usize)>| {
        let got = validate_dir(IdKind::WorkingDir, dir).err();
        let expected = expected.map(|(code, at)| InvalidId::Control {
            kind: IdKind::WorkingDir,
            code,
            at,
        });
        assert_eq!(got, expected, "{dir:?}");
    };
    check("/home/u/my dir", None);
    check("/home/u/é☃/\u{202e}", None);
    check("", None);
    check("/x/\u{15}touch X\n", Some((0x15, 3)));
    check("/x\u{7f}", Some((0x7f, 2)));
    check("/x\u{9b}2J", Some((0x9b, 2)));
    check("/é\u{1b}", Some((0x1b, 3)));
    assert_eq!(
        check_dirs(Some("/ok"), Some("/c/\u{7}")),
        Err(InvalidId::Control {
            kind: IdKind::ConfigDir,
            code: 7,
            at: 3
        })
    );
    assert_eq!(check_dirs(None, None), Ok(()));
}

#[test]
fn human_output_escapes_what_a_terminal_would_act_on() {
    let check = |value: &str, expected: &str| assert_eq!(escape(value), expected, "{value:?}");
    check("tmux:work:0.1", "tmux:work:0.1");
    check("my dir/é☃", "my dir/é☃");
    check("e\u{301}", "e\u{301}");
    check("", "");
    check("a\u{1b}[2Jb", r#""a\e[2Jb""#);
    check("bel\u{7}", r#""bel\x07""#);
    check("\u{15}touch X\n", r#""\x15touch X\n""#);
    check("tab\there", r#""tab\there""#);
    check("del\u{7f}", r#""del\x7f""#);
    check("csi\u{9b}", r#""csi\u{9b}""#);
    check("rtl\u{202e}", r#""rtl\u{202e}""#);
    check("zero\u{200b}width", r#""zero\u{200b}width""#);
    check("quote\"and\\\u{7}", r#""quote\"and\\\x07""#);
}
