//! A fake multiplexer backend (`mux::Backend`) for testing the apply protocol without any
//! multiplexer: places that exist, busy or idle, opens that fail, a multiplexer that stops
//! answering, and a record of every start, shared between fakes (one per thread, as two
//! restores at once have one backend each).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use mux::pane::Busy;
use mux::{Backend, Created, Multiplexer, MuxError, Opened, Start, Surface};

/// One start the fake was asked for, as the backend received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// The surface, as displayed.
    pub surface: String,
    /// The dir it was started in.
    pub dir: Option<String>,
    /// The command.
    pub command: String,
    /// The variables set for it.
    pub env: Vec<(String, String)>,
}

/// What the fake multiplexer holds and has done, shared by every fake of one test.
#[derive(Debug, Default)]
pub struct World {
    /// Places that exist, by surface id; `Some(busy)` for one that is busy.
    pub places: HashMap<String, Option<Busy>>,
    /// Surfaces whose open fails.
    pub failing: HashSet<String>,
    /// Surfaces whose place turns busy between the busy check and the open.
    pub turning_busy: HashSet<String>,
    /// Calls answered before the multiplexer stops answering (`None`: it always answers).
    pub answers_left: Option<usize>,
    /// Every start, in order.
    pub started: Vec<Started>,
    /// The surface the restore runs in (`Backend::caller_surface`), if any.
    pub caller: Option<String>,
    /// Every place made for a shell (`Backend::open_shell`), with its dir, in order.
    pub shells: Vec<(String, Option<String>)>,
}

/// A backend over a shared [`World`].
#[derive(Debug, Clone)]
pub struct FakeBackend {
    /// The multiplexer it claims to be.
    pub multiplexer: Multiplexer,
    /// Its world.
    pub world: Arc<Mutex<World>>,
    unanswered: Arc<std::sync::OnceLock<String>>,
}

impl FakeBackend {
    /// A fake of `multiplexer` over `world`.
    pub fn new(multiplexer: Multiplexer, world: Arc<Mutex<World>>) -> FakeBackend {
        FakeBackend {
            multiplexer,
            world,
            unanswered: Arc::default(),
        }
    }

    /// One call: fails once the world's answers are used up, and from then on.
    fn call(&self) -> Result<std::sync::MutexGuard<'_, World>, MuxError> {
        if let Some(said) = self.unanswered.get() {
            return Err(MuxError::Unanswered {
                said: said.clone(),
                again: true,
            });
        }
        let mut world = self.world.lock().expect("the fake's world");
        match world.answers_left {
            Some(0) => {
                drop(world);
                let said = self
                    .unanswered
                    .get_or_init(|| "fake did not answer within 5s".to_string());
                Err(MuxError::Unanswered {
                    said: said.clone(),
                    again: false,
                })
            }
            Some(left) => {
                world.answers_left = Some(left - 1);
                Ok(world)
            }
            None => Ok(world),
        }
    }
}

impl Backend for FakeBackend {
    fn multiplexer(&self) -> Multiplexer {
        self.multiplexer
    }

    fn busy(&self, surface: &Surface) -> Option<Busy> {
        let world = self.call().ok()?;
        world.places.get(&surface.to_string()).cloned().flatten()
    }

    fn open(&self, start: &Start<'_>) -> Result<Opened, MuxError> {
        let mut world = self.call()?;
        let surface = start.surface.to_string();
        if world.failing.contains(&surface) {
            return Err(MuxError::NotMade(format!("the fake cannot make {surface}")));
        }
        if world.turning_busy.contains(&surface) {
            return Ok(Opened::Skipped(Busy::Program("vim".to_string())));
        }
        let created = match world.places.get(&surface) {
            Some(Some(busy)) => return Ok(Opened::Skipped(busy.clone())),
            Some(None) => Vec::new(),
            None => vec![Created::Panes { count: 1 }],
        };
        world
            .places
            .insert(surface.clone(), Some(Busy::Program("claude".to_string())));
        world.started.push(Started {
            surface,
            dir: start.dir.map(str::to_string),
            command: start.command.to_string(),
            env: start
                .env
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
        });
        Ok(Opened::Started { created })
    }

    fn unanswered(&self) -> Option<&str> {
        self.unanswered.get().map(String::as_str)
    }

    fn check_command(&self) -> String {
        "fake ping".to_string()
    }

    fn location(&self) -> String {
        "the fake".to_string()
    }

    fn open_shell(
        &self,
        surface: &Surface,
        dir: Option<&str>,
    ) -> Result<Option<Vec<Created>>, MuxError> {
        let mut world = self.call()?;
        let surface = surface.to_string();
        if world.places.contains_key(&surface) {
            return Ok(None);
        }
        world.places.insert(surface.clone(), None);
        world.shells.push((surface, dir.map(str::to_string)));
        Ok(Some(vec![Created::Panes { count: 1 }]))
    }

    fn caller_surface(&self) -> Option<Surface> {
        let world = self.call().ok()?;
        Surface::parse(world.caller.as_deref()?).ok()
    }
}
