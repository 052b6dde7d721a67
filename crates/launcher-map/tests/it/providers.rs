//! AgentName defaults: the command, the `cd`, and the config-dir assignment.

use launcher_map::{Registry, RenderContext, RenderError, Target};

use crate::{S, check, cx, render_in};

#[test]
fn claude_is_the_default_provider() {
    check(S, "claude --resume s1");
    check(
        Target {
            agent: Some("claude"),
            ..S
        },
        "claude --resume s1",
    );
    check(
        Target {
            agent: Some(""),
            ..S
        },
        "claude --resume s1",
    );
    check(
        Target {
            agent: Some(" claude "),
            ..S
        },
        "claude --resume s1",
    );
    check(
        Target {
            session: "01J-orc-lead-xyz",
            ..S
        },
        "claude --resume 01J-orc-lead-xyz",
    );
}

#[test]
fn claude_with_cwd_and_config_dir() {
    check(
        Target {
            cwd: Some("/home/u/proj"),
            ..S
        },
        "cd /home/u/proj && claude --resume s1",
    );
    check(
        Target {
            cwd: Some("/home/u/my proj"),
            config_dir: Some("/home/u/.claude-work"),
            ..S
        },
        "cd '/home/u/my proj' && CLAUDE_CONFIG_DIR=/home/u/.claude-work claude --resume s1",
    );
    check(
        Target {
            config_dir: Some("/home/u/.claude-work"),
            ..S
        },
        "CLAUDE_CONFIG_DIR=/home/u/.claude-work claude --resume s1",
    );
    check(
        Target {
            cwd: Some(""),
            config_dir: Some(""),
            ..S
        },
        "claude --resume s1",
    );
}

#[test]
fn the_default_config_dir_gets_no_assignment() {
    check(
        Target {
            config_dir: Some("/home/u/.claude"),
            ..S
        },
        "claude --resume s1",
    );
    check(
        Target {
            config_dir: Some("/home/u/.claude/"),
            ..S
        },
        "claude --resume s1",
    );
    check(
        Target {
            config_dir: Some("~/.claude"),
            ..S
        },
        "claude --resume s1",
    );
    check(
        Target {
            config_dir: Some("~/.claude/"),
            ..S
        },
        "claude --resume s1",
    );
    check(
        Target {
            cwd: Some("/w"),
            config_dir: Some("~/.claude"),
            ..S
        },
        "cd /w && claude --resume s1",
    );
    // Not the default: another user's, another dir, a relative path.
    check(
        Target {
            config_dir: Some("/home/v/.claude"),
            ..S
        },
        "CLAUDE_CONFIG_DIR=/home/v/.claude claude --resume s1",
    );
    check(
        Target {
            config_dir: Some("~bob/.claude"),
            ..S
        },
        "CLAUDE_CONFIG_DIR='~bob/.claude' claude --resume s1",
    );
    check(
        Target {
            config_dir: Some(".claude"),
            ..S
        },
        "CLAUDE_CONFIG_DIR=.claude claude --resume s1",
    );
}

#[test]
fn tilde_paths_are_expanded_before_quoting() {
    check(
        Target {
            cwd: Some("~/my proj"),
            config_dir: Some("~/.claude-work"),
            ..S
        },
        "cd '/home/u/my proj' && CLAUDE_CONFIG_DIR=/home/u/.claude-work claude --resume s1",
    );
    check(
        Target {
            cwd: Some("~"),
            ..S
        },
        "cd /home/u && claude --resume s1",
    );
    check(
        Target {
            cwd: Some("~bob/x"),
            ..S
        },
        "cd '~bob/x' && claude --resume s1",
    );
}

#[test]
fn without_a_home_tilde_is_left_to_the_shell() {
    let no_home = RenderContext { home: None };
    let render = |target: Target<'_>| Registry::builtin().render(&target, &no_home).unwrap();
    assert_eq!(
        render(Target {
            cwd: Some("~/my proj"),
            config_dir: Some("~/.claude-work"),
            ..S
        }),
        "cd ~/'my proj' && CLAUDE_CONFIG_DIR=~/.claude-work claude --resume s1",
    );
    assert_eq!(
        render(Target {
            cwd: Some("~"),
            ..S
        }),
        "cd ~ && claude --resume s1"
    );
    assert_eq!(
        render(Target {
            config_dir: Some("~/.claude"),
            ..S
        }),
        "claude --resume s1"
    );
    assert_eq!(
        render(Target {
            config_dir: Some("/home/u/.claude"),
            ..S
        }),
        "CLAUDE_CONFIG_DIR=/home/u/.claude claude --resume s1",
    );
}

#[test]
fn a_cwd_that_looks_like_an_option_is_not_one() {
    check(
        Target {
            cwd: Some("-P"),
            ..S
        },
        "cd -- -P && claude --resume s1",
    );
}

#[test]
fn codex_defaults() {
    let codex = Target {
        agent: Some("codex"),
        ..S
    };
    check(codex, "codex resume s1");
    check(
        Target {
            cwd: Some("/w"),
            ..codex
        },
        "cd /w && codex resume s1",
    );
    check(
        Target {
            config_dir: Some("~/.codex"),
            ..codex
        },
        "codex resume s1",
    );
    check(
        Target {
            config_dir: Some("/home/u/.codex/"),
            ..codex
        },
        "codex resume s1",
    );
    check(
        Target {
            cwd: Some("/w"),
            config_dir: Some("~/.codex-alt"),
            ..codex
        },
        "cd /w && CODEX_HOME=/home/u/.codex-alt codex resume s1",
    );
    // Claude's default dir is not Codex's.
    check(
        Target {
            config_dir: Some("~/.claude"),
            ..codex
        },
        "CODEX_HOME=/home/u/.claude codex resume s1",
    );
}

#[test]
fn gemini_defaults() {
    let gemini = Target {
        agent: Some("gemini"),
        ..S
    };
    check(gemini, "gemini --resume s1");
    check(
        Target {
            cwd: Some("/w"),
            ..gemini
        },
        "cd /w && gemini --resume s1",
    );
    // Gemini's variable names a home dir (its files are in `<home>/.gemini`), rendered when it
    // is not the user's home.
    check(
        Target {
            cwd: Some("/w"),
            config_dir: Some("~/gemini-alt"),
            ..gemini
        },
        "cd /w && GEMINI_CLI_HOME=/home/u/gemini-alt gemini --resume s1",
    );
    check(
        Target {
            cwd: Some("/w"),
            config_dir: Some("/home/u/"),
            ..gemini
        },
        "cd /w && gemini --resume s1",
    );
}

#[test]
fn the_repo_does_not_change_a_provider_default() {
    check(
        Target {
            repo: Some("golems"),
            ..S
        },
        "claude --resume s1",
    );
}

#[test]
fn an_unknown_provider_has_no_launcher() {
    let error = render_in(
        &Registry::builtin(),
        Target {
            agent: Some("aider"),
            ..S
        },
    )
    .unwrap_err();
    assert_eq!(
        error,
        RenderError::NoLauncher {
            agent: "aider".into()
        }
    );
    let message = error.to_string();
    assert!(message.contains("`aider`"), "{message}");
    assert!(message.contains("launchers.toml"), "{message}");
}

#[test]
fn a_nul_byte_cannot_be_rendered() {
    let registry = Registry::builtin();
    let unquotable = |value| Err(RenderError::Unquotable { value });
    assert_eq!(
        render_in(
            &registry,
            Target {
                session: "s\0x",
                ..S
            }
        ),
        unquotable("session id")
    );
    assert_eq!(
        render_in(
            &registry,
            Target {
                cwd: Some("/w\0"),
                ..S
            }
        ),
        unquotable("working dir")
    );
    assert_eq!(
        render_in(
            &registry,
            Target {
                config_dir: Some("/c\0"),
                ..S
            }
        ),
        unquotable("config dir")
    );
    let golems = {
        let mut registry = Registry::builtin();
        registry.select_profile("golems").unwrap();
        registry
    };
    assert_eq!(
        render_in(
            &golems,
            Target {
                repo: Some("a\0"),
                ..S
            }
        ),
        unquotable("repo")
    );
    let message = unquotable("session id").unwrap_err().to_string();
    assert!(message.contains("NUL"), "{message}");
}

#[test]
fn the_builtin_registry_is_the_default_one() {
    let target = Target {
        cwd: Some("/w"),
        ..S
    };
    assert_eq!(
        Registry::default().render(&target, &cx()),
        Registry::builtin().render(&target, &cx())
    );
    assert_eq!(Registry::builtin().profile(), None);
}

#[test]
fn qwen_defaults() {
    let qwen = Target {
        agent: Some("qwen"),
        cwd: Some("/w"),
        ..S
    };
    check(qwen, "cd /w && qwen --resume s1");
    // `QWEN_HOME` names the `.qwen` dir itself, rendered when it is not `~/.qwen`.
    check(
        Target {
            config_dir: Some("/srv/qwen home"),
            ..qwen
        },
        "cd /w && QWEN_HOME='/srv/qwen home' qwen --resume s1",
    );
    check(
        Target {
            config_dir: Some("/home/u/.qwen/"),
            ..qwen
        },
        "cd /w && qwen --resume s1",
    );
}
