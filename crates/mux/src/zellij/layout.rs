//! Which name a zellij pane bears, told apart from its terminal title.
//!
//! `list-panes --json` gives each pane one `title`: its name when it has one, else whatever
//! its program last set with an OSC escape (any output can: a file shown, a remote host). The
//! name itself is what `rename-pane`, `new-pane --name`, a layout or zellij (a command pane's
//! command line) gave the pane, and nothing the pane prints can set it; `dump-layout` writes
//! exactly these names (`pane name="..."`), never a title. So a pane bears the name `N` only
//! when the layout names a pane `N` and the pane is the one pane whose title shows `N` (a
//! named pane always shows its name); when more panes show it, a program set the title of
//! the others, and which one bears it cannot be told.

use super::ListedPane;

/// The names `dump-layout`'s KDL gives the session's panes: the `name` of each `pane` node in
/// its tabs (not of a template's or a swap layout's, which name no pane that runs), once per
/// pane. Every value a program can influence (a command, a cwd) is a KDL string, read as one.
pub(crate) fn layout_pane_names(layout: &str) -> Vec<String> {
    let mut names = Vec::new();
    // The names of the nodes the reader is inside, outermost first.
    let mut enclosing: Vec<String> = Vec::new();
    // The node being read on this line, the last bare word read in it, and the property key
    // whose value comes next.
    let mut node: Option<String> = None;
    let mut last_word: Option<String> = None;
    let mut key: Option<String> = None;
    for token in tokens(layout) {
        match token {
            Token::Equals => key = last_word.take(),
            Token::Word(text) | Token::Str(text) if node.is_none() => node = Some(text),
            Token::Word(text) | Token::Str(text) if key.is_some() => {
                let is_name = key.take().as_deref() == Some("name");
                if is_name && node.as_deref() == Some("pane") && in_tabs(&enclosing) {
                    names.push(text);
                }
            }
            Token::Word(text) => last_word = Some(text),
            Token::Str(_) => last_word = None,
            Token::Open => {
                enclosing.push(node.take().unwrap_or_default());
                (last_word, key) = (None, None);
            }
            Token::Close => {
                enclosing.pop();
                (node, last_word, key) = (None, None, None);
            }
            Token::End => (node, last_word, key) = (None, None, None),
        }
    }
    names
}

/// Whether nodes enclosed by `enclosing` are a running session's: inside `layout`, one of its
/// `tab`s, and panes (floating ones too) only.
fn in_tabs(enclosing: &[String]) -> bool {
    matches!(enclosing, [layout, tab, rest @ ..]
        if layout == "layout" && tab == "tab"
            && rest.iter().all(|node| node == "pane" || node == "floating_panes"))
}

/// A token of KDL, as far as a layout's names need it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A bare identifier or value (`pane`, `name`, `true`, `50`).
    Word(String),
    /// A quoted or raw string, its escapes resolved.
    Str(String),
    Equals,
    Open,
    Close,
    /// A newline or `;`: the end of a node.
    End,
}

fn tokens(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | ';' => tokens.push(Token::End),
            '{' => tokens.push(Token::Open),
            '}' => tokens.push(Token::Close),
            '=' => tokens.push(Token::Equals),
            '"' => tokens.push(Token::Str(quoted(&mut chars))),
            '/' if chars.peek() == Some(&'/') => {
                for next in chars.by_ref() {
                    if next == '\n' {
                        tokens.push(Token::End);
                        break;
                    }
                }
            }
            'r' if matches!(chars.peek(), Some('"' | '#')) => {
                let mut hashes = 0;
                while chars.next_if_eq(&'#').is_some() {
                    hashes += 1;
                }
                if chars.next_if_eq(&'"').is_none() {
                    tokens.push(Token::Word(format!("r{}", "#".repeat(hashes))));
                    continue;
                }
                tokens.push(Token::Str(raw(&mut chars, hashes)));
            }
            c if c.is_whitespace() => {}
            c => {
                let mut word = String::from(c);
                while let Some(next) =
                    chars.next_if(|next| !next.is_whitespace() && !"{}=;\"".contains(*next))
                {
                    word.push(next);
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    tokens
}

/// The rest of a quoted string, its opening quote read: up to the closing quote, escapes
/// resolved (`\"`, `\\`, `\n`, `\u{41}`, ...).
fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut text = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => text.push('\n'),
                Some('r') => text.push('\r'),
                Some('t') => text.push('\t'),
                Some('b') => text.push('\u{8}'),
                Some('f') => text.push('\u{c}'),
                Some('u') if chars.next_if_eq(&'{').is_some() => {
                    let hex: String = chars.by_ref().take_while(|c| *c != '}').collect();
                    let code = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                    text.push(code.unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                Some(other) => text.push(other),
                None => break,
            },
            c => text.push(c),
        }
    }
    text
}

/// The rest of a raw string (`r#"..."#`), its opening read: up to `"` and `hashes` `#`s.
fn raw(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, hashes: usize) -> String {
    let closing: String = std::iter::once('"')
        .chain("#".repeat(hashes).chars())
        .collect();
    let mut text = String::new();
    for c in chars.by_ref() {
        text.push(c);
        if text.ends_with(&closing) {
            text.truncate(text.len() - closing.len());
            break;
        }
    }
    text
}

/// Which terminal pane of `panes` bears the name `name`, by the layout's `names`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bearer<'a> {
    /// This pane, the one that shows the name.
    One(&'a ListedPane),
    /// No pane: the layout names none so (a pane whose title shows it had it set by a
    /// program).
    None,
    /// More panes show the name than bear it: which one does cannot be told.
    Unsure,
}

/// The terminal pane of `panes` that bears `name`: the layout names exactly one pane so, and
/// exactly one pane's title shows it.
pub(crate) fn bearer<'a>(panes: &'a [ListedPane], names: &[String], name: &str) -> Bearer<'a> {
    let bearing = names.iter().filter(|named| *named == name).count();
    let mut showing = panes
        .iter()
        .filter(|pane| !pane.is_plugin && pane.title == name);
    match (bearing, showing.next(), showing.next()) {
        (0, _, _) | (_, None, _) => Bearer::None,
        (1, Some(pane), None) => Bearer::One(pane),
        _ => Bearer::Unsure,
    }
}

/// The name a pane bears, as the hook sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OwnName {
    /// A name the hook gave it (`cr-…`).
    Ours(String),
    /// A name the user gave it (not ours, nor zellij's own for a command pane), which is kept.
    Users(String),
    /// No name but zellij's own for a command pane (its command line), or none at all: its
    /// title, if it shows anything else, is a program's.
    None,
    /// Its title shows a name another pane bears too, or that two panes bear: whether it is
    /// its own cannot be told.
    Unsure(String),
}

/// The name `pane` (one of `panes`) bears, by the layout's `names`.
pub(crate) fn own_name(pane: &ListedPane, panes: &[ListedPane], names: &[String]) -> OwnName {
    match bearer(panes, names, &pane.title) {
        Bearer::One(bearer) if bearer.id == pane.id => {
            if super::is_pane_name(&pane.title) {
                OwnName::Ours(pane.title.clone())
            } else if pane.terminal_command.as_deref() == Some(pane.title.as_str()) {
                OwnName::None
            } else {
                OwnName::Users(pane.title.clone())
            }
        }
        Bearer::One(_) | Bearer::None => OwnName::None,
        Bearer::Unsure => OwnName::Unsure(pane.title.clone()),
    }
}

/// Whether a name can stand for its pane in a surface (`zellij:<session>:<name>`): not empty,
/// not all digits (a bare pane id), no `:` (the surface's separator), not beginning with `-`
/// (zellij's argv parser would take it for an option), no control character.
pub(crate) fn is_handle(name: &str) -> bool {
    !name.is_empty()
        && !name.bytes().all(|byte| byte.is_ascii_digit())
        && !name.contains(':')
        && !name.starts_with('-')
        && !name.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: &str = r##"layout {
    cwd "/work"
    tab name="Tab #1" hide_floating_panes=true {
        pane size=1 borderless=true {
            plugin location="zellij:tab-bar"
        }
        pane split_direction="vertical" {
            pane size="50%"
            pane size="50%" {
                pane name="my \"q\" pane" size="50%"
                pane command="sh" name="sh -c printf x; pane name=\"cr-1-a\"" size="50%" {
                    args "-c" "name=\"cr-1-b\""
                    start_suspended true
                }
            }
        }
        floating_panes {
            pane name=r#"raw "one""# x=1
        }
    }
    new_tab_template {
        pane name="template"
    }
    swap_tiled_layout name="vertical" {
        tab max_panes=5 {
            pane name="swap"
        }
    }
}"##;

    #[test]
    fn the_layout_names_its_panes_and_nothing_in_a_string_passes_for_a_name() {
        assert_eq!(
            layout_pane_names(LAYOUT),
            [
                "my \"q\" pane",
                "sh -c printf x; pane name=\"cr-1-a\"",
                "raw \"one\""
            ]
        );
    }

    fn pane(id: u32, title: &str, command: Option<&str>) -> ListedPane {
        ListedPane {
            id,
            is_plugin: false,
            title: title.to_string(),
            exited: false,
            is_held: false,
            tab_id: 0,
            pane_command: None,
            terminal_command: command.map(str::to_string),
        }
    }

    #[test]
    fn a_pane_bears_a_name_the_layout_gives_and_it_alone_shows() {
        let names = [
            "cr-1-a".to_string(),
            "editor".to_string(),
            "sh -c x".to_string(),
        ];
        let named = pane(1, "cr-1-a", None);
        let forger = pane(2, "cr-1-a", None);
        let user = pane(3, "editor", None);
        let command = pane(4, "sh -c x", Some("sh -c x"));
        let titled = pane(5, "cr-9-z", None);
        let plain = pane(6, "Pane #6", None);
        let alone = [named.clone(), user.clone(), command.clone(), titled.clone()];
        assert_eq!(bearer(&alone, &names, "cr-1-a"), Bearer::One(&alone[0]));
        assert_eq!(
            own_name(&named, &alone, &names),
            OwnName::Ours("cr-1-a".into())
        );
        assert_eq!(
            own_name(&user, &alone, &names),
            OwnName::Users("editor".into())
        );
        assert_eq!(own_name(&command, &alone, &names), OwnName::None);
        // A title no layout name backs is a program's.
        assert_eq!(bearer(&alone, &names, "cr-9-z"), Bearer::None);
        assert_eq!(own_name(&titled, &alone, &names), OwnName::None);
        assert_eq!(
            own_name(&plain, std::slice::from_ref(&plain), &names),
            OwnName::None
        );
        // Another pane shows the name too: which bears it cannot be told.
        let both = [named.clone(), forger.clone()];
        assert_eq!(bearer(&both, &names, "cr-1-a"), Bearer::Unsure);
        assert_eq!(
            own_name(&forger, &both, &names),
            OwnName::Unsure("cr-1-a".into())
        );
        assert_eq!(
            own_name(&named, &both, &names),
            OwnName::Unsure("cr-1-a".into())
        );
    }

    #[test]
    fn a_handle_is_a_name_a_surface_can_carry() {
        for good in ["editor", "cr-3-abc", "my pane", "12a"] {
            assert!(is_handle(good), "{good}");
        }
        for bad in ["", "12", "a:b", "-x", "a\u{1b}b"] {
            assert!(!is_handle(bad), "{bad:?}");
        }
    }
}
