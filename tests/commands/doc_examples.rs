//! The examples the documentation gives run as written on the simulated device: every command
//! line of README.md and docs/*.md (the manual among them) (inline or in a code block) whose words are all real (no
//! placeholder such as NAME or `[--flag]`), every trigger expression of the triggers' table and
//! the README, and the view file of docs/view-format.md. A flag renamed, a series the simulated
//! device lacks or a view that no longer loads fails here, not in a reader's terminal.
//!
//! To run them here: each runs with `--source sim` in a folder of its own (where a `run.ron` is
//! recorded first, for the examples that export one); a `record` without `--duration` gets
//! `--duration 500ms` and `serve` a port of its own (`--listen 127.0.0.1:0`) and is stopped once it
//! serves. The GUI (`zescope FILE.ron`) is not started.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::support::{text, zescope};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The documents whose examples are checked (the benchmarks' history records what ran then).
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("benchmark-history.md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// Inline code spans and lines of fenced code blocks of `text`.
fn code(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            out.push(line.split(" # ").next().unwrap_or("").trim().to_owned());
            continue;
        }
        out.extend(line.split('`').skip(1).step_by(2).map(str::to_owned));
    }
    out
}

const SUBCOMMANDS: [&str; 5] = ["list", "record", "export", "serve", "doctor"];

/// The command lines of `doc` that are examples to run: `zescope SUBCOMMAND …` with no
/// placeholder (a word in capitals, `<word>`, brackets, an ellipsis), no workload after `--`, and
/// more than a subcommand that cannot run alone.
fn examples(doc: &str) -> Vec<Vec<String>> {
    code(doc)
        .into_iter()
        .filter_map(|c| {
            let words = shell_words(c.trim().strip_prefix("zescope ")?)?;
            // A derivation's named unit (`NAME[UNIT]=EXPR`) is no placeholder.
            let placeholder = |w: &String| {
                (w.contains(['[', ']']) && !w.contains("]="))
                    || w.contains(['…', '|'])
                    || w.starts_with('<') && w.ends_with('>')
                    || w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_' || c == '.')
            };
            // A bare `zescope record` in a sentence names the command; it is no example.
            let mention = words.len() == 1 && ["record", "export", "serve"].contains(&words[0].as_str());
            let runs = words.first().is_some_and(|w| SUBCOMMANDS.contains(&w.as_str()))
                && !mention
                && !words.iter().any(placeholder)
                && !words.iter().any(|w| w == "--");
            runs.then_some(words)
        })
        .collect()
}

/// `text` split as a shell splits it (single and double quotes); `None` for what this does not
/// read (a variable, a pipe).
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, '$' | ';' | '&' | '`') => return None,
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    (quote.is_none()).then_some(words)
}

/// Runs one example in `dir`; the error says what it printed.
fn run(words: &[String], dir: &Path) -> Result<(), String> {
    let mut args: Vec<String> = Vec::new();
    if !words.iter().any(|w| w == "--source") {
        args.extend(["--source".into(), "sim".into()]);
    }
    args.extend(words.iter().cloned());
    let sub = words[0].as_str();
    if sub == "record" && !words.iter().any(|w| w == "--duration") {
        args.extend(["--duration".into(), "500ms".into()]);
    }
    if sub == "serve" {
        if !words.iter().any(|w| w == "--listen") {
            args.extend(["--listen".into(), "127.0.0.1:0".into()]);
        }
        let mut child = zescope().args(&args).current_dir(dir).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
        let child = child.as_mut().map_err(|e| e.to_string())?;
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line)
            .map_err(|e| e.to_string())?;
        let _ = std::process::Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        let out = child.wait().map_err(|e| e.to_string())?;
        return if line.starts_with("zescope: serving http://") && out.success() {
            Ok(())
        } else {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
            Err(format!("{out}: {line}{err}"))
        };
    }
    let out = zescope().args(&args).current_dir(dir).output().map_err(|e| e.to_string())?;
    // `doctor` exits 1 when a check fails (no GPU here); a usage error is 2.
    let fine = out.status.success() || sub == "doctor" && out.status.code() == Some(1);
    if fine { Ok(()) } else { Err(format!("{}: {}", out.status, text(&out))) }
}

#[test]
fn every_command_line_the_docs_give_runs_on_the_simulated_device() {
    let mut ran = 0;
    let mut failed = Vec::new();
    let all: Vec<(PathBuf, Vec<String>)> = documents()
        .into_iter()
        .flat_map(|d| examples(&std::fs::read_to_string(&d).unwrap()).into_iter().map(move |e| (d.clone(), e)))
        .collect();
    let results = crate::support::each_case(&all, 4, |(doc, words)| {
        let dir = tempfile::tempdir().unwrap();
        // A session to export, named as the examples name it.
        let rec = zescope()
            .args(["--source", "sim", "record", "--duration", "300ms", "--out", "run.ron"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(rec.status.success(), "{}", text(&rec));
        (doc.clone(), words.join(" "), run(words, dir.path()))
    });
    for (doc, line, r) in results {
        ran += 1;
        if let Err(e) = r {
            failed.push(format!("{}: zescope {line}\n  {e}", doc.display()));
        }
    }
    assert!(ran >= 8, "the docs give at least eight command lines to run, found {ran}");
    assert!(failed.is_empty(), "examples that do not run as written:\n{}", failed.join("\n"));
}

/// The expressions of docs/triggers.md's table and of the manual.
fn documented_triggers() -> Vec<String> {
    let table = std::fs::read_to_string(root().join("docs/triggers.md")).unwrap();
    let mut out: Vec<String> =
        table.lines().filter(|l| l.starts_with("| `")).filter_map(|l| l.split('`').nth(1).map(str::to_owned)).collect();
    let manual = std::fs::read_to_string(root().join("docs/manual.md")).unwrap();
    let at = manual.find("conditions such as").expect("the manual's trigger examples");
    let sentence = &manual[at..at + manual[at..].find("([`docs/triggers.md`]").unwrap()];
    out.extend(sentence.split('`').skip(1).step_by(2).map(str::to_owned));
    out
}

#[test]
fn every_documented_trigger_names_series_of_the_simulated_device() {
    let triggers = documented_triggers();
    assert!(triggers.len() >= 9, "{triggers:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut c = zescope();
    c.args(["--source", "sim", "record", "--group", "ComputeBasic", "--group", "MemoryTraffic", "--telemetry"])
        .args(["--duration", "500ms", "--out"])
        .arg(dir.path().join("run.csv"));
    for t in &triggers {
        c.arg("--trigger").arg(t);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{triggers:?}:\n{}", text(&out));
}

#[test]
fn the_view_file_of_the_docs_loads_and_records() {
    let doc = std::fs::read_to_string(root().join("docs/view-format.md")).unwrap();
    let start = doc.find("```ron\n").expect("a view in a ron block") + "```ron\n".len();
    let view = &doc[start..start + doc[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("view.ron");
    std::fs::write(&path, view).unwrap();
    let out = zescope()
        .args(["--source", "sim", "record", "--duration", "500ms", "--out"])
        .arg(dir.path().join("run.ron"))
        .arg("--view")
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{view}\n{}", text(&out));
    let s = zescope_model::session::load(&dir.path().join("run.ron")).unwrap();
    let metrics: Vec<&str> = s.streams.iter().flat_map(|x| x.meta.series.iter().map(|m| m.metric.as_str())).collect();
    assert!(metrics.contains(&"GpuUtilization") && metrics.contains(&"Package power"), "{metrics:?}");
    assert!(metrics.contains(&"idle"), "the view's derived series recorded: {metrics:?}");
}

#[test]
fn the_derived_series_doc_gives_five_examples_to_run() {
    let doc = std::fs::read_to_string(root().join("docs/derived-series.md")).unwrap();
    let derives: Vec<Vec<String>> = examples(&doc).into_iter().filter(|e| e.iter().any(|w| w == "--derive")).collect();
    assert!(derives.len() >= 5, "docs/derived-series.md: {derives:?}");
    assert!(derives.iter().flatten().any(|w| w.contains("]=")), "one names its unit");
}

#[test]
fn examples_are_found_and_placeholders_left_out() {
    let doc = "Run `zescope list --metrics --group ComputeBasic`, or `zescope mark NAME`, `zescope record`, or\n\
               ```sh\nzescope record --duration 1s --out run.ron   # a comment\nzescope record ... --out run.ron -- ./w\n```\n\
               and `zescope serve [--listen A]` and `zescope record --trigger 'G/M > 8' --out a.csv`.";
    let got: Vec<String> = examples(doc).into_iter().map(|w| w.join("|")).collect();
    assert_eq!(
        got,
        [
            "list|--metrics|--group|ComputeBasic",
            "record|--duration|1s|--out|run.ron",
            "record|--trigger|G/M > 8|--out|a.csv"
        ]
    );
}

/// Every file or folder of the tree the docs cite (`crates/…`, `src/…`, `tests/…`, `docs/…`, …
/// in backticks) exists: a file moved or renamed takes its mentions with it.
#[test]
fn every_path_the_docs_cite_exists() {
    let roots = ["crates/", "src/", "tests/", "benches/", "assets/", "dist/", "docs/", "fuzz/", "third_party/", ".ci/"];
    let mut docs = documents();
    docs.push(root().join("third_party/README.md"));
    let mut missing = Vec::new();
    let mut cited = 0;
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        for span in text.split('`').skip(1).step_by(2) {
            let path = span.trim_end_matches(['.', ',', ';', ':', ')']);
            let path = path.split("::").next().unwrap_or(path);
            // A glob, a placeholder or an item path names no one file.
            if !roots.iter().any(|r| path.starts_with(r)) || path.contains(['*', '[', '{', '<', ' ', '…']) {
                continue;
            }
            cited += 1;
            if !root().join(path).exists() {
                missing.push(format!("{}: {path}", doc.display()));
            }
        }
    }
    assert!(cited > 50, "the docs cite the tree: {cited} paths found");
    assert!(missing.is_empty(), "paths the docs cite that do not exist:\n{}", missing.join("\n"));
}
