//! Random operation sequences against a plain model (a list scanned linearly) that states the
//! rules as directly as possible: both must agree after every step.

use index_core::{Index, MAX_PREVIOUS_SESSIONS, Record, Repo, Role, SessionId, SurfaceId};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Record {
        surface: u8,
        session: u8,
        repo: u8,
        role: Option<u8>,
    },
    Touch {
        surface: u8,
    },
    Forget {
        surface: u8,
    },
    Prune {
        max_age: u64,
    },
    Advance {
        by: u64,
    },
}

#[derive(Debug, Clone, PartialEq)]
struct ModelEntry {
    surface: String,
    session: String,
    repo: String,
    role: Option<String>,
    captured_at: u64,
    last_active: u64,
    earlier: Vec<String>,
}

#[derive(Debug, Default)]
struct Model {
    entries: Vec<ModelEntry>,
}

impl Model {
    fn record(&mut self, surface: &str, session: &str, repo: &str, role: Option<&str>, now: u64) {
        // One session, one surface: another surface holding it loses its entry.
        self.entries
            .retain(|e| e.surface == surface || e.session != session);
        match self.entries.iter_mut().find(|e| e.surface == surface) {
            Some(entry) => {
                if entry.session != session {
                    let old = entry.session.clone();
                    entry.earlier.retain(|id| id != session && *id != old);
                    entry.earlier.push(old);
                    while entry.earlier.len() > MAX_PREVIOUS_SESSIONS {
                        entry.earlier.remove(0);
                    }
                    entry.session = session.to_string();
                }
                entry.repo = repo.to_string();
                if let Some(role) = role {
                    entry.role = Some(role.to_string());
                }
                entry.last_active = now;
            }
            None => self.entries.push(ModelEntry {
                surface: surface.to_string(),
                session: session.to_string(),
                repo: repo.to_string(),
                role: role.map(str::to_string),
                captured_at: now,
                last_active: now,
                earlier: Vec::new(),
            }),
        }
    }

    fn touch(&mut self, surface: &str, now: u64) -> bool {
        let found = self.entries.iter_mut().find(|e| e.surface == surface);
        found.map(|e| e.last_active = now).is_some()
    }

    fn find(&self, surface: &str) -> Option<&ModelEntry> {
        self.entries.iter().find(|e| e.surface == surface)
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..6u8, 0..8u8, 0..3u8, proptest::option::of(0..3u8))
            .prop_map(|(surface, session, repo, role)| Op::Record { surface, session, repo, role }),
        2 => (0..7u8).prop_map(|surface| Op::Touch { surface }),
        1 => (0..7u8).prop_map(|surface| Op::Forget { surface }),
        1 => (0..50u64).prop_map(|max_age| Op::Prune { max_age }),
        2 => (0..40u64).prop_map(|by| Op::Advance { by }),
    ]
}

fn check_agree(index: &Index, model: &Model, now: u64) -> Result<(), TestCaseError> {
    prop_assert_eq!(index.len(), model.entries.len());
    for surface in (0..7u8).map(|n| format!("pane-{n}")) {
        let got = index.lookup(&surface);
        let want = model.find(&surface);
        prop_assert_eq!(got.is_some(), want.is_some(), "surface {}", surface);
        if let (Some(got), Some(want)) = (got, want) {
            prop_assert_eq!(got.session.as_str(), want.session.as_str());
            prop_assert_eq!(got.repo.as_str(), want.repo.as_str());
            prop_assert_eq!(got.role.as_ref().map(Role::as_str), want.role.as_deref());
            prop_assert_eq!(got.captured_at, want.captured_at);
            prop_assert_eq!(got.last_active, Some(want.last_active));
            let earlier: Vec<&str> = got
                .previous_sessions
                .iter()
                .map(SessionId::as_str)
                .collect();
            prop_assert_eq!(
                earlier,
                want.earlier.iter().map(String::as_str).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                index.owner_of(&want.session).map(SurfaceId::as_str),
                Some(surface.as_str())
            );
        }
        for max_age in [None, Some(0), Some(10), Some(100)] {
            let want_resumable = want.is_some_and(|e| match max_age {
                None => true,
                Some(max_age) => now.saturating_sub(e.last_active) <= max_age,
            });
            prop_assert_eq!(
                index.resumable_for(&surface, max_age, now).is_some(),
                want_resumable
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn index_agrees_with_the_model(ops in proptest::collection::vec(op(), 1..60)) {
        let mut index = Index::default();
        let mut model = Model::default();
        let mut now = 1_000u64;
        for op in ops {
            match op {
                Op::Record { surface, session, repo, role } => {
                    let (surface, session, repo) =
                        (format!("pane-{surface}"), format!("sess-{session}"), format!("repo-{repo}"));
                    let role = role.map(|r| format!("role-{r}"));
                    let mut record = Record::new(
                        SurfaceId::new(surface.as_str()).unwrap(),
                        SessionId::new(session.as_str()).unwrap(),
                        Repo::new(repo.as_str()).unwrap(),
                    );
                    record.role = role.as_deref().map(|r| Role::new(r).unwrap());
                    index.record(record, now);
                    model.record(&surface, &session, &repo, role.as_deref(), now);
                }
                Op::Touch { surface } => {
                    let surface = format!("pane-{surface}");
                    prop_assert_eq!(index.touch(&surface, now), model.touch(&surface, now));
                }
                Op::Forget { surface } => {
                    let surface = format!("pane-{surface}");
                    let before = model.entries.len();
                    model.entries.retain(|e| e.surface != surface);
                    prop_assert_eq!(index.forget(&surface).is_some(), model.entries.len() < before);
                }
                Op::Prune { max_age } => {
                    let before = model.entries.len();
                    model.entries.retain(|e| now.saturating_sub(e.last_active) <= max_age);
                    prop_assert_eq!(index.prune_stale(max_age, now).len(), before - model.entries.len());
                }
                Op::Advance { by } => now += by,
            }
            check_agree(&index, &model, now)?;
        }
    }
}
