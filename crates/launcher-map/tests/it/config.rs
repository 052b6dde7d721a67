//! launchers.toml: repo launchers, agent overrides, profiles, precedence and refusals.

use camino::Utf8Path;
use launcher_map::{ConfigError, Registry, RenderError, Target, TemplateError};

use crate::{ORIGIN, S, check_in, registry, render_in};

#[test]
fn an_empty_file_is_the_builtin_registry() {
    let empty = registry("");
    check_in(
        &empty,
        Target {
            cwd: Some("/w"),
            ..S
        },
        "cd /w && claude --resume s1",
    );
    assert_eq!(empty.profile(), None);
}

#[test]
fn repo_launchers_win_over_the_provider_default() {
    let file = registry(
        r#"
        [repos.my-repo]
        command = "myClaude --resume {session}"

        [repos.quiet]
        command = "quietClaude --resume {session}"
        cd = false
        "#,
    );
    let mine = Target {
        repo: Some("my-repo"),
        ..S
    };
    check_in(&file, mine, "myClaude --resume s1");
    check_in(
        &file,
        Target {
            cwd: Some("/w/my repo"),
            ..mine
        },
        "cd '/w/my repo' && myClaude --resume s1",
    );
    // Repo launchers say what they need: no config-dir assignment of their own.
    check_in(
        &file,
        Target {
            config_dir: Some("/c"),
            ..mine
        },
        "myClaude --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("My-Repo "),
            ..S
        },
        "myClaude --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("quiet"),
            cwd: Some("/w"),
            ..S
        },
        "quietClaude --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("other"),
            cwd: Some("/w"),
            ..S
        },
        "cd /w && claude --resume s1",
    );
}

#[test]
fn placeholders_fill_every_value_and_each_word_is_quoted() {
    let file = registry(
        r#"
        [repos.api]
        command = "CLAUDE_CONFIG_DIR={config_dir} run-agent --repo {repo} --tag {repo_lower}-x --dir={cwd} '{{literal}}' --resume {session}"
        cd = false
        "#,
    );
    check_in(
        &file,
        Target {
            repo: Some("API"),
            cwd: Some("~/my proj"),
            config_dir: Some("~/.claude"),
            ..S
        },
        "CLAUDE_CONFIG_DIR=/home/u/.claude run-agent --repo API --tag api-x '--dir=/home/u/my proj' \
         '{literal}' --resume s1",
    );
}

#[test]
fn a_placeholder_without_a_value_fails_naming_the_launcher() {
    let file = registry(
        r#"
        [repos.api]
        command = "CLAUDE_CONFIG_DIR={config_dir} claude --resume {session}"
        "#,
    );
    let error = render_in(
        &file,
        Target {
            repo: Some("api"),
            ..S
        },
    )
    .unwrap_err();
    assert_eq!(
        error,
        RenderError::MissingValue {
            launcher: "repos.api".into(),
            placeholder: "config_dir",
            value: "config dir",
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("{config_dir}") && message.contains("launchers.toml"),
        "{message}"
    );
}

#[test]
fn template_words_that_start_with_tilde_are_expanded() {
    let file = registry(
        r#"
        [repos.api]
        command = "~/bin/my\\ claude --resume {session}"
        "#,
    );
    check_in(
        &file,
        Target {
            repo: Some("api"),
            ..S
        },
        "'/home/u/bin/my claude' --resume s1",
    );
}

#[test]
fn provider_overrides_keep_the_keys_they_leave_out() {
    let file = registry(
        r#"
        [providers.claude]
        command = "claude-beta --resume {session}"

        [providers.codex]
        default_config_dir = "~/.config/codex"
        cd = false
        "#,
    );
    check_in(
        &file,
        Target {
            cwd: Some("/w"),
            config_dir: Some("/c"),
            ..S
        },
        "cd /w && CLAUDE_CONFIG_DIR=/c claude-beta --resume s1",
    );
    check_in(
        &file,
        Target {
            config_dir: Some("~/.claude"),
            ..S
        },
        "claude-beta --resume s1",
    );
    let codex = Target {
        agent: Some("codex"),
        cwd: Some("/w"),
        ..S
    };
    check_in(
        &file,
        Target {
            config_dir: Some("~/.config/codex"),
            ..codex
        },
        "codex resume s1",
    );
    check_in(
        &file,
        Target {
            config_dir: Some("~/.codex"),
            ..codex
        },
        "CODEX_HOME=/home/u/.codex codex resume s1",
    );
}

#[test]
fn new_providers_can_be_added() {
    let file = registry(
        r#"
        [providers.aider]
        command = "aider --restore-chat-history --session {session}"
        config_env = "AIDER_HOME"
        default_config_dir = "~/.aider"
        "#,
    );
    let aider = Target {
        agent: Some("aider"),
        cwd: Some("/w"),
        ..S
    };
    check_in(
        &file,
        aider,
        "cd /w && aider --restore-chat-history --session s1",
    );
    check_in(
        &file,
        Target {
            config_dir: Some("~/.aider/"),
            ..aider
        },
        "cd /w && aider --restore-chat-history --session s1",
    );
    check_in(
        &file,
        Target {
            config_dir: Some("/x"),
            ..aider
        },
        "cd /w && AIDER_HOME=/x aider --restore-chat-history --session s1",
    );
}

#[test]
fn a_repo_launcher_serves_an_unknown_provider() {
    let file = registry(
        r#"
        [repos.api]
        command = "tool --resume {session}"
        "#,
    );
    check_in(
        &file,
        Target {
            agent: Some("aider"),
            repo: Some("api"),
            ..S
        },
        "tool --resume s1",
    );
    assert_eq!(
        render_in(
            &file,
            Target {
                agent: Some("aider"),
                repo: Some("web"),
                ..S
            }
        ),
        Err(RenderError::NoLauncher {
            agent: "aider".into()
        })
    );
}

#[test]
fn a_launcher_for_one_provider_lets_the_others_through() {
    let file = registry(
        r#"
        [repos.api]
        command = "apiClaude --resume {session}"
        provider = "claude"
        "#,
    );
    check_in(
        &file,
        Target {
            repo: Some("api"),
            ..S
        },
        "apiClaude --resume s1",
    );
    check_in(
        &file,
        Target {
            agent: Some("codex"),
            repo: Some("api"),
            ..S
        },
        "codex resume s1",
    );
}

const TEAM: &str = r#"
    [repos.api]
    command = "repoApi --resume {session}"

    [repos.web]
    command = "repoWeb --resume {session}"

    [profiles.team.repos.api]
    command = "teamApi --resume {session}"

    [profiles.team.fallback]
    command = "team-{repo} --resume {session}"
    cd = false

    [profiles.team.no_repo]
    command = "teamNone --resume {session}"

    [profiles.bare.repos.api]
    command = "bareApi --resume {session}"
"#;

#[test]
fn without_a_profile_profiles_do_nothing() {
    let file = registry(TEAM);
    assert_eq!(file.profile(), None);
    check_in(
        &file,
        Target {
            repo: Some("api"),
            ..S
        },
        "repoApi --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("other"),
            ..S
        },
        "claude --resume s1",
    );
    check_in(&file, S, "claude --resume s1");
}

#[test]
fn precedence_profile_repo_then_repos_then_fallback_then_provider() {
    let mut file = registry(TEAM);
    file.select_profile("team").unwrap();
    let cwd = Target {
        cwd: Some("/w"),
        ..S
    };
    check_in(
        &file,
        Target {
            repo: Some("api"),
            ..cwd
        },
        "cd /w && teamApi --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("web"),
            ..cwd
        },
        "cd /w && repoWeb --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("other"),
            ..cwd
        },
        "team-other --resume s1",
    );
    check_in(&file, cwd, "cd /w && teamNone --resume s1");

    // A profile without fallback or no_repo leaves those sessions to the agent default.
    file.select_profile("bare").unwrap();
    check_in(
        &file,
        Target {
            repo: Some("api"),
            ..cwd
        },
        "cd /w && bareApi --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("web"),
            ..cwd
        },
        "cd /w && repoWeb --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("other"),
            ..cwd
        },
        "cd /w && claude --resume s1",
    );
    check_in(&file, cwd, "cd /w && claude --resume s1");
}

#[test]
fn the_file_can_choose_the_profile_and_the_caller_can_override_it() {
    let mut file = registry(&format!("profile = \"team\"\n{TEAM}"));
    assert_eq!(file.profile(), Some("team"));
    check_in(
        &file,
        Target {
            repo: Some("api"),
            ..S
        },
        "teamApi --resume s1",
    );
    file.select_profile("golems").unwrap();
    check_in(
        &file,
        Target {
            repo: Some("api"),
            ..S
        },
        "repoApi --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("other"),
            ..S
        },
        "otherClaude --resume s1",
    );

    let golems = registry("profile = \"golems\"");
    check_in(
        &golems,
        Target {
            repo: Some("orchestrator"),
            ..S
        },
        "orcClaude --resume s1",
    );
}

#[test]
fn config_repos_win_over_the_golems_fallback() {
    let mut file = registry(
        r#"
        [repos.golems]
        command = "golems-next --resume {session}"
        cd = false
        "#,
    );
    file.select_profile("golems").unwrap();
    check_in(
        &file,
        Target {
            repo: Some("golems"),
            ..S
        },
        "golems-next --resume s1",
    );
    check_in(
        &file,
        Target {
            repo: Some("orchestrator"),
            ..S
        },
        "orcClaude --resume s1",
    );
}

#[test]
fn a_user_profile_named_golems_replaces_the_builtin() {
    let file = registry(
        r#"
        profile = "golems"
        [profiles.golems.repos.orchestrator]
        command = "orchestratorClaude --resume {session}"
        cd = false
        "#,
    );
    check_in(
        &file,
        Target {
            repo: Some("orchestrator"),
            cwd: Some("/w"),
            ..S
        },
        "orchestratorClaude --resume s1",
    );
    // The built-in fallback and no_repo are gone with it.
    check_in(
        &file,
        Target {
            repo: Some("golems"),
            ..S
        },
        "claude --resume s1",
    );
    check_in(&file, S, "claude --resume s1");
}

#[test]
fn an_unknown_profile_lists_the_known_ones() {
    let mut file = registry(TEAM);
    let error = file.select_profile("nope").unwrap_err();
    let ConfigError::UnknownProfile {
        name,
        known,
        file: chosen_in,
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(name, "nope");
    assert_eq!(known, &["bare", "golems", "team"]);
    assert_eq!(chosen_in, &None);
    let message = error.to_string();
    assert!(message.contains("bare, golems, team"), "{message}");
    assert_eq!(file.profile(), None, "a failed selection changes nothing");
}

/// Parses `text` as launchers.toml, expecting it to be refused.
fn refused(text: &str) -> ConfigError {
    let error = Registry::from_toml(text, Utf8Path::new(ORIGIN)).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains(ORIGIN),
        "the error names the file: {message}"
    );
    assert!(!message.ends_with('.'), "no trailing period: {message}");
    assert!(
        message.starts_with(char::is_lowercase),
        "lower-case: {message}"
    );
    error
}

fn check_template(text: &str, expected_key: &str, expected: TemplateError) {
    match refused(text) {
        ConfigError::Template { key, problem, .. } => {
            assert_eq!((key.as_str(), problem), (expected_key, expected), "{text}");
        }
        other => panic!("{text}: {other:?}"),
    }
}

fn check_invalid(text: &str, expected_key: &str, expected_reason: &str) {
    match refused(text) {
        ConfigError::Invalid { key, reason, .. } => {
            assert_eq!(key, expected_key, "{text}");
            assert!(reason.contains(expected_reason), "{text}: {reason}");
        }
        other => panic!("{text}: {other:?}"),
    }
}

fn check_syntax(text: &str, expected_line: usize, expected_message: &str) {
    match refused(text) {
        ConfigError::Syntax { line, message, .. } => {
            assert_eq!(line, expected_line, "{text}: {message}");
            assert!(message.contains(expected_message), "{text}: {message}");
        }
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn bad_toml_is_refused_with_its_position() {
    check_syntax("profile = ", 1, "");
    check_syntax(
        "[repos.api]\ncommand = \"x {session}\"\ncd = maybe\n",
        3,
        "",
    );
    check_syntax("[repos.api\n", 1, "");
}

#[test]
fn unknown_keys_are_refused() {
    check_syntax("profiles = 3\n", 1, "invalid type");
    check_syntax("launchers = {}\n", 1, "unknown field `launchers`");
    check_syntax(
        "[repos.api]\ncommand = \"x {session}\"\nenv = \"X\"\n",
        3,
        "unknown field `env`",
    );
    check_syntax(
        "[providers.claude]\nconfig_dir = \"~/.c\"\n",
        2,
        "unknown field `config_dir`",
    );
    check_syntax("[profiles.t]\nrepo = {}\n", 2, "unknown field `repo`");
    check_syntax("[repos.api]\ncd = false\n", 1, "missing field `command`");
}

#[test]
fn bad_templates_are_refused_naming_the_key() {
    check_template(
        "[repos.api]\ncommand = \"x --resume {sesion}\"",
        "repos.api.command",
        TemplateError::UnknownPlaceholder {
            name: "sesion".into(),
        },
    );
    check_template(
        "[profiles.team.fallback]\ncommand = \"x --resume {session\"",
        "profiles.team.fallback.command",
        TemplateError::UnclosedBrace,
    );
    check_template(
        "[profiles.team.repos.api]\ncommand = \"x --resume {session}}\"",
        "profiles.team.repos.api.command",
        TemplateError::StrayBrace,
    );
    check_template(
        "[providers.claude]\ncommand = \"claude --resume '{session}\"",
        "providers.claude.command",
        TemplateError::Unsplittable,
    );
    check_template(
        "[repos.api]\ncommand = \"  \"",
        "repos.api.command",
        TemplateError::Empty,
    );
    check_template(
        "[repos.api]\ncommand = \"apiClaude --continue\"",
        "repos.api.command",
        TemplateError::NoSession,
    );
    check_template(
        "[repos.api]\ncommand = \"x\\u0000 {session}\"",
        "repos.api.command",
        TemplateError::Nul,
    );
    check_template(
        "[repos.\"my repo\"]\ncommand = \"{nope} {session}\"",
        "repos.\"my repo\".command",
        TemplateError::UnknownPlaceholder {
            name: "nope".into(),
        },
    );
}

#[test]
fn meaningless_settings_are_refused() {
    check_invalid("version = 2", "version", "version 1");
    check_invalid(
        "[providers.aider]\nconfig_env = \"AIDER_HOME\"",
        "providers.aider",
        "no `command`",
    );
    check_invalid(
        "[providers.claude]\nconfig_env = \"CLAUDE-DIR\"",
        "providers.claude.config_env",
        "not an environment variable name",
    );
    check_invalid(
        "[repos.Api]\ncommand = \"a {session}\"\n[repos.api]\ncommand = \"b {session}\"",
        "repos.api",
        "`repos.Api`",
    );
    check_invalid(
        "[repos.\" \"]\ncommand = \"a {session}\"",
        "repos.\" \"",
        "not a repo name",
    );
    check_invalid(
        "[repos.api]\ncommand = \"a {session}\"\nprovider = \"\"",
        "repos.api.provider",
        "not an agent name",
    );
}

#[test]
fn an_unknown_profile_in_the_file_is_worded_as_on_the_command_line() {
    let from_file = refused("profile = \"nope\"");
    let ConfigError::UnknownProfile { name, known, file } = &from_file else {
        panic!("{from_file:?}");
    };
    assert_eq!(
        (name.as_str(), known.as_slice()),
        ("nope", &["golems".to_string()][..])
    );
    assert_eq!(file.as_deref(), Some(Utf8Path::new(ORIGIN)));
    let from_flag = Registry::builtin().select_profile("nope").unwrap_err();
    let (file_message, flag_message) = (from_file.to_string(), from_flag.to_string());
    assert_eq!(
        file_message.replace(&format!(" (chosen by `profile` in {ORIGIN})"), ""),
        flag_message
    );
}

#[test]
fn version_1_is_accepted() {
    check_in(&registry("version = 1"), S, "claude --resume s1");
}

#[test]
fn error_messages_name_the_file_and_say_what_to_do() {
    let message = refused("[repos.api]\ncommand = \"x {sesion}\"").to_string();
    assert!(message.contains("`repos.api.command`"), "{message}");
    assert!(message.contains("{session}"), "{message}");
    let message = refused("nope = 1").to_string();
    assert!(message.contains("line 1, column 1"), "{message}");
    assert!(message.contains("fix the file"), "{message}");
}
