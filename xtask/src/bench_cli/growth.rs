//! How the costs grow, measured in one run so that only ratios are compared, never an absolute
//! time (the machine may be loaded): `cargo xtask bench-cli --check`, which CI runs, fails when
//! the restore plan grows faster than its entries or its project folders, or when `record`
//! costs over 4 durable writes of the index's size (the floor, timed in the same run by a
//! process of its own: [`durable_write`]); `cargo xtask bench-cli --picture` draws
//! `record`, `resume-cmd`, `list` and the plan against the index's size into `docs/growth.svg`.

use std::io::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use camino::{Utf8Path, Utf8PathBuf};
use index_core::{Record, Repo, SessionId, SurfaceId};
use index_store::{Store, StoreOptions};

use super::{Bench, ms, percentiles, session, surface, uuid};

/// The plan at 10,000 entries may cost at most this many times the plan at 1,000.
const MAX_ENTRY_GROWTH: f64 = 20.0;
/// An item of a plan whose config dir holds 10 times the project folders may cost at most this
/// many times as much.
const MAX_FOLDER_GROWTH: f64 = 3.0;
/// What `record` at 1,000 entries may cost at most, in durable-write floors of the same run
/// (its budget is 2x; it measures 1.8 to 2.8x on a loaded 2-core machine, so 4x fails only on a
/// real regression, such as parsing or writing the whole index again).
const RECORD_OVER_FLOOR_BUDGET: f64 = 4.0;

/// The floor's hidden command line: `bench-cli --durable-write <PATH> <BYTES>`.
pub const DURABLE_WRITE: &str = "--durable-write";

/// A plan's sandbox: `size` entries whose working dirs are `dirs` dirs (entry `n` in dir
/// `n % dirs`), and `per_dir` transcripts in each dir's project folder (sessions `uuid(n)` for
/// `n` below `dirs * per_dir`, the first `size` of them the entries' own).
pub fn plan_bench(binary: &Utf8Path, size: usize, dirs: usize, per_dir: usize) -> Result<Bench> {
    let bench = Bench::new(binary, 0)?;
    let config = bench.dir.join("home/.claude");
    let works: Vec<Utf8PathBuf> = (0..dirs)
        .map(|n| {
            let work = bench.dir.join(format!("home/work-{n}"));
            std::fs::create_dir_all(&work)?;
            Ok(work.canonicalize_utf8()?)
        })
        .collect::<Result<_>>()?;
    let store = Store::open(&bench.index, StoreOptions::default())?;
    store.update(|index| {
        for n in 0..size {
            let mut record = Record::new(
                SurfaceId::new(surface(n)).expect("valid surface"),
                SessionId::new(uuid(n)).expect("valid session"),
                Repo::new(format!("repo-{}", n % dirs)).expect("valid repo"),
            );
            record.cwd = Some(works[n % dirs].to_string());
            record.config_dir = Some(config.to_string());
            index.record(record, 1_700_000_000_000 + n as u64);
        }
    })?;
    for n in 0..dirs * per_dir {
        let project = preflight::claude::project_dir(&config, &works[n % dirs]);
        std::fs::create_dir_all(&project)?;
        std::fs::write(
            project.join(format!("{}.jsonl", uuid(n))),
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        )?;
    }
    Ok(bench)
}

/// The median of `runs` plans (`restore`, no `--apply`) of `bench`.
fn plan_median(bench: &Bench, runs: usize) -> Result<Duration> {
    Ok(percentiles(&bench.time(&["restore".to_string()], None, runs)?).0)
}

/// `record` on `bench`'s index and the floor, `runs` times each, interleaved so that both see
/// the same load: their medians.
fn record_and_floor(bench: &Bench, runs: usize) -> Result<(Duration, Duration)> {
    record_and_floor_from(bench, 0, runs)
}

/// [`record_and_floor`] of runs `first..first + runs` (each records a session of its own).
fn record_and_floor_from(bench: &Bench, first: usize, runs: usize) -> Result<(Duration, Duration)> {
    let floor_target = bench.dir.join("floor.json");
    let mut records = Vec::with_capacity(runs);
    let mut floors = Vec::with_capacity(runs);
    for run in first..first + runs {
        let args = [
            "record".to_string(),
            surface(1),
            session(1_000_000 + run),
            "repo".to_string(),
        ];
        records.extend(bench.time(&args, None, 1)?);
        let bytes = std::fs::metadata(&bench.index)?.len();
        let started = Instant::now();
        let status = Command::new(std::env::current_exe()?)
            .args(["bench-cli", DURABLE_WRITE, floor_target.as_str()])
            .arg(bytes.to_string())
            .status()?;
        floors.push(started.elapsed());
        if !status.success() {
            bail!("the durable-write floor failed: {status}");
        }
    }
    Ok((percentiles(&records).0, percentiles(&floors).0))
}

/// `--record-floor`: `record` and its floor at 10, 1,000 and 10,000 entries, `runs * 4` times
/// each, for each of `binaries` (a before and after), run by run in turn so that all see the
/// same load: their medians.
pub fn record_floor(binaries: &[Utf8PathBuf], runs: usize) -> Result<()> {
    println!("| binary | entries | `record` | floor | ratio |");
    println!("|---|---:|---:|---:|---:|");
    for size in [10usize, 1_000, 10_000] {
        let benches: Vec<Bench> = binaries
            .iter()
            .map(|binary| Bench::new(binary, size))
            .collect::<Result<_>>()?;
        let mut samples = vec![(Vec::new(), Vec::new()); benches.len()];
        for run in 0..runs * 4 {
            for (bench, (records, floors)) in benches.iter().zip(&mut samples) {
                let (record, floor) = record_and_floor_from(bench, run, 1)?;
                records.push(record);
                floors.push(floor);
            }
        }
        for (binary, (records, floors)) in binaries.iter().zip(&samples) {
            let (record, floor) = (percentiles(records).0, percentiles(floors).0);
            println!(
                "| {binary} | {size} | {} | {} | {:.2}x |",
                ms(record),
                ms(floor),
                record.as_secs_f64() / floor.as_secs_f64().max(1e-9)
            );
        }
    }
    Ok(())
}

/// The floor a `record` is held to, as a process of its own: one durable write of `bytes`
/// bytes to `path` (a temp file beside it, written, synced, renamed over it, the dir synced).
pub fn durable_write(args: &[String]) -> Result<()> {
    let [path, bytes] = args else {
        bail!("usage: cargo xtask bench-cli {DURABLE_WRITE} <PATH> <BYTES>");
    };
    let path = Utf8Path::new(path);
    let bytes: usize = bytes.parse().context("the byte count")?;
    let dir = path.parent().context("the floor's file has no dir")?;
    let temp = dir.join(".floor.tmp");
    let mut file = std::fs::File::create(&temp)?;
    file.write_all(&vec![b'x'; bytes])?;
    file.sync_all()?;
    drop(file);
    #[allow(clippy::disallowed_methods)] // a file of the benchmark's own, not an index
    std::fs::rename(&temp, path)?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

/// One ratio of the check: what was measured, the ratio, its limit, and whether going over it
/// fails the check.
struct Ratio {
    what: String,
    ratio: f64,
    limit: f64,
    enforced: bool,
}

/// `--check`: the plan's growth by entries and by project folders, and `record` against its
/// floor, each a ratio of two figures of this run. Fails naming every ratio over its limit.
pub fn check(binary: &Utf8Path, runs: usize) -> Result<()> {
    let small = plan_median(&plan_bench(binary, 1_000, 50, 20)?, runs)?;
    let large = plan_median(&plan_bench(binary, 10_000, 50, 20)?, runs)?;
    // Half the entries have no transcript, so their UUID is looked for in every project folder
    // (as Claude Code does): 500 transcripts over 50 folders, then over 500.
    let few = plan_median(&plan_bench(binary, 1_000, 50, 10)?, runs)?;
    let many = plan_median(&plan_bench(binary, 1_000, 500, 1)?, runs)?;
    let (record, floor) = record_and_floor(&Bench::new(binary, 1_000)?, runs * 4)?;
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    let ratios = [
        Ratio {
            what: format!(
                "plan, 10,000 entries ({}) over 1,000 ({})",
                ms(large),
                ms(small)
            ),
            ratio: ratio(large, small),
            limit: MAX_ENTRY_GROWTH,
            enforced: true,
        },
        Ratio {
            what: format!(
                "plan of 1,000 entries, half of them missing, 500 project folders ({}) over 50 ({})",
                ms(many),
                ms(few)
            ),
            ratio: ratio(many, few),
            limit: MAX_FOLDER_GROWTH,
            enforced: true,
        },
        Ratio {
            what: format!(
                "record at 1,000 entries ({}) over one durable write of the index's size ({})",
                ms(record),
                ms(floor)
            ),
            ratio: ratio(record, floor),
            limit: RECORD_OVER_FLOOR_BUDGET,
            enforced: true,
        },
    ];
    println!("| measured in one run | ratio | limit |");
    println!("|---|---:|---:|");
    for ratio in &ratios {
        let kind = if ratio.enforced {
            ""
        } else {
            " (budget, reported)"
        };
        println!(
            "| {} | {:.2}x | {:.0}x{kind} |",
            ratio.what, ratio.ratio, ratio.limit
        );
    }
    let over: Vec<&Ratio> = ratios
        .iter()
        .filter(|ratio| ratio.enforced && ratio.ratio > ratio.limit)
        .collect();
    if !over.is_empty() {
        let list: Vec<String> = over
            .iter()
            .map(|ratio| {
                format!(
                    "{}: {:.2}x, over {:.0}x",
                    ratio.what, ratio.ratio, ratio.limit
                )
            })
            .collect();
        bail!(
            "a cost grows faster than its work:\n  {}\n(run `cargo xtask bench-cli --picture` to see the growth)",
            list.join("\n  ")
        );
    }
    Ok(())
}

/// The index sizes the picture is drawn at.
const SIZES: [usize; 4] = [1_000, 2_500, 5_000, 10_000];

/// `--picture`: `record`, `resume-cmd`, `list` and the plan at each of [`SIZES`], in this run,
/// as a Markdown table on stdout and a line chart written to `out` (SVG).
pub fn picture(binary: &Utf8Path, runs: usize, out: &Utf8Path) -> Result<()> {
    let mut series: Vec<(&str, Vec<Duration>)> = vec![
        ("record", Vec::new()),
        ("resume-cmd", Vec::new()),
        ("list", Vec::new()),
        ("restore (the plan)", Vec::new()),
    ];
    for size in SIZES {
        let bench = Bench::new(binary, size)?;
        let probed = surface(size / 2);
        let record = [
            "record".to_string(),
            probed.clone(),
            session(size + 1),
            "repo".to_string(),
        ];
        series[0]
            .1
            .push(percentiles(&bench.time(&record, None, runs)?).0);
        let resume = ["resume-cmd".to_string(), probed];
        series[1]
            .1
            .push(percentiles(&bench.time(&resume, None, runs)?).0);
        series[2]
            .1
            .push(percentiles(&bench.time(&["list".to_string()], None, runs)?).0);
        series[3]
            .1
            .push(plan_median(&plan_bench(binary, size, 50, 20)?, runs)?);
    }
    println!(
        "| entries | {} |",
        series
            .iter()
            .map(|(name, _)| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---:|{}", "---:|".repeat(series.len()));
    for (at, size) in SIZES.iter().enumerate() {
        let cells: Vec<String> = series.iter().map(|(_, times)| ms(times[at])).collect();
        println!("| {size} | {} |", cells.join(" | "));
    }
    std::fs::write(out, svg(&series)).with_context(|| format!("write {out}"))?;
    println!("\nwritten: {out}");
    Ok(())
}

/// A line chart of `series` (time in ms against entries), as SVG text.
fn svg(series: &[(&str, Vec<Duration>)]) -> String {
    const WIDTH: f64 = 640.0;
    const HEIGHT: f64 = 400.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 190.0;
    const TOP: f64 = 30.0;
    const BOTTOM: f64 = 50.0;
    const COLOURS: [&str; 4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];
    let max_ms = series
        .iter()
        .flat_map(|(_, times)| times.iter())
        .map(|time| time.as_secs_f64() * 1000.0)
        .fold(1.0_f64, f64::max);
    let max_entries = *SIZES.last().unwrap_or(&1) as f64;
    let x = |entries: f64| LEFT + entries / max_entries * (WIDTH - LEFT - RIGHT);
    let y = |millis: f64| HEIGHT - BOTTOM - millis / max_ms * (HEIGHT - TOP - BOTTOM);
    let mut text = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"18\" font-size=\"14\">crash-resume: time per command against the index's size (median, one run)</text>\n\
         <line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n\
         <line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"black\"/>\n",
        y(0.0),
        x(max_entries),
        y(0.0),
        y(0.0)
    );
    for tick in 0..=4 {
        let millis = max_ms * f64::from(tick) / 4.0;
        text += &format!(
            "<text x=\"{label_x}\" y=\"{label_y}\" text-anchor=\"end\">{millis:.0} ms</text>\n\
             <line x1=\"{LEFT}\" y1=\"{line_y}\" x2=\"{line_end}\" y2=\"{line_y}\" stroke=\"#ddd\"/>\n",
            label_x = LEFT - 6.0,
            label_y = y(millis) + 4.0,
            line_y = y(millis),
            line_end = x(max_entries)
        );
    }
    for size in SIZES {
        text += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{size}</text>\n",
            x(size as f64),
            y(0.0) + 18.0
        );
    }
    text += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">entries in the index</text>\n",
        x(max_entries / 2.0),
        HEIGHT - 10.0
    );
    for (at, (name, times)) in series.iter().enumerate() {
        let colour = COLOURS[at % COLOURS.len()];
        let points: Vec<String> = SIZES
            .iter()
            .zip(times)
            .map(|(size, time)| {
                format!(
                    "{:.1},{:.1}",
                    x(*size as f64),
                    y(time.as_secs_f64() * 1000.0)
                )
            })
            .collect();
        text += &format!(
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>\n",
            points.join(" ")
        );
        let legend_y = TOP + 20.0 * at as f64 + 10.0;
        text += &format!(
            "<line x1=\"{0}\" y1=\"{legend_y}\" x2=\"{1}\" y2=\"{legend_y}\" stroke=\"{colour}\" stroke-width=\"3\"/>\n\
             <text x=\"{2}\" y=\"{3}\">{name}</text>\n",
            WIDTH - RIGHT + 20.0,
            WIDTH - RIGHT + 40.0,
            WIDTH - RIGHT + 46.0,
            legend_y + 4.0
        );
    }
    text + "</svg>\n"
}
