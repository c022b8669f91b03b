//! The command line's parsing (`cli.rs`).

use super::*;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("zescope").chain(args.iter().copied()))
}

#[test]
fn a_session_file_alone_opens_the_window_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("run.ron");
    std::fs::write(&f, "(format: \"zescope-session\")").unwrap();
    let cli = parse(&[f.to_str().unwrap()]).unwrap();
    assert_eq!(cli.file.as_deref(), Some(f.as_path()));
    assert!(cli.command.is_none());
    let cli = parse(&["--source", "sim", f.to_str().unwrap()]).unwrap();
    assert_eq!((cli.file.as_deref(), cli.source), (Some(f.as_path()), Source::Sim));
    // Commands still parse as commands, with or without options before them.
    assert!(matches!(parse(&["list"]).unwrap().command, Some(Command::List { metrics: false, .. })));
    let cli = parse(&["--source", "sim", "record", "--duration", "1s", "--out", "r.ron"]).unwrap();
    assert!(matches!(cli.command, Some(Command::Record(_))) && cli.file.is_none());
    assert!(parse(&[]).unwrap().file.is_none());
}

#[test]
fn a_bad_session_path_is_refused_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.ron");
    let e = parse(&[missing.to_str().unwrap()]).unwrap_err().to_string();
    assert!(e.contains("no such file") && e.contains("missing.ron"), "{e}");
    let e = parse(&[dir.path().to_str().unwrap()]).unwrap_err().to_string();
    assert!(e.contains("is a folder"), "{e}");
    let e = parse(&["lst"]).unwrap_err().to_string();
    assert!(e.contains("neither a file nor a command") && e.contains("list"), "{e}");
}

#[test]
fn an_interval_outside_what_the_sampler_does_is_refused_with_the_range() {
    for bad in ["10us", "99us", "11s"] {
        for cmd in ["record", "serve"] {
            let e = parse(&[cmd, "--interval", bad]).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(bad) && e.contains("100us to 10s"), "{cmd} --interval {bad}: {e}");
        }
    }
    for good in ["100us", "1ms", "10s", "2.5ms"] {
        assert!(parse(&["record", "--interval", good, "--out", "r.ron"]).is_ok(), "{good}");
    }
}

#[test]
fn an_interval_without_a_unit_is_refused_rather_than_taken_as_seconds() {
    for cmd in ["record", "serve"] {
        let e = parse(&[cmd, "--interval", "5"]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("5 has no unit") && e.contains("5ms"), "{cmd} --interval 5: {e}");
    }
    // --duration keeps its bare seconds.
    assert!(parse(&["record", "--duration", "5", "--out", "r.ron"]).is_ok());
    // Zero in any unit is out of range, not missing one.
    for zero in ["0", "0.0", "0ms"] {
        let e =
            parse(&["record", "--interval", zero, "--out", "r.ron"]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("outside 100us to 10s") && !e.contains("no unit"), "--interval {zero}: {e}");
    }
}

#[test]
fn groups_and_metrics_take_comma_lists_as_devices_do() {
    let Some(Command::Record(r)) =
        parse(&["record", "--group", "RenderBasic,0:ComputeBasic", "--group", "Mem*", "--out", "r.ron"])
            .unwrap()
            .command
    else {
        panic!("record")
    };
    assert_eq!(r.groups, ["RenderBasic", "0:ComputeBasic", "Mem*"]);
    let Some(Command::Record(r)) =
        parse(&["record", "--metric", "GpuTime,Eu*", "--metric", "Power", "--out", "r.ron"]).unwrap().command
    else {
        panic!("record")
    };
    assert_eq!(r.metrics, ["GpuTime", "Eu*", "Power"]);
    let Some(Command::Serve(s)) = parse(&["serve", "--group", "A,B"]).unwrap().command else { panic!("serve") };
    assert_eq!(s.groups, ["A", "B"]);
    let Some(Command::List { groups, .. }) = parse(&["list", "--group", "A*,B?"]).unwrap().command else {
        panic!("list")
    };
    assert_eq!(groups, ["A*", "B?"]);
}

#[test]
fn pre_and_post_without_a_trigger_are_refused_rather_than_ignored() {
    for flag in ["--pre", "--post"] {
        let e = parse(&["record", "--out", "r.ron", flag, "1s"]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("--trigger <EXPR>"), "{flag}: {e}");
        assert!(parse(&["record", "--out", "r.ron", flag, "1s", "--trigger", "marker go"]).is_ok(), "{flag}");
    }
    assert!(parse(&["record", "--out", "r.ron"]).is_ok(), "their defaults ask for no trigger");
}

/// `--source` is taken before a command's name (as the window takes it) and, by the commands
/// that sample, after it, where it wins; `mark` and `export` read no device and refuse it (their
/// help offered it, a global option).
#[test]
fn the_source_is_an_option_of_the_commands_that_sample_only() {
    let source = |args: &[&str]| {
        let cli = parse(args).unwrap();
        match cli.command.expect("a command") {
            Command::List { from, .. } | Command::Doctor { from } => from.or(cli.source),
            Command::Record(o) => o.into_args(cli.source).source,
            Command::Serve(o) => o.into_args(cli.source).source,
            c => panic!("{c:?}"),
        }
    };
    for cmd in [&["list"][..], &["doctor"], &["record", "--out", "r.ron"], &["serve"]] {
        let (name, rest) = (cmd[0], &cmd[1..]);
        let after: Vec<&str> = [name, "--source", "sim"].iter().chain(rest).copied().collect();
        assert_eq!(source(&after), Source::Sim, "{after:?}");
        let before: Vec<&str> = ["--source", "sim", name].iter().chain(rest).copied().collect();
        assert_eq!(source(&before), Source::Sim, "{before:?}");
        let both: Vec<&str> = ["--source", "sim", name, "--source", "level-zero"].iter().chain(rest).copied().collect();
        assert_eq!(source(&both), Source::LevelZero, "the one after the name wins: {both:?}");
        let neither: Vec<&str> = cmd.to_vec();
        assert_eq!(source(&neither), Source::Auto, "{neither:?}");
    }
    for refused in [&["export", "--source", "sim", "x.ron"][..], &["mark", "--source", "sim", "solve"]] {
        let e = parse(refused).unwrap_err().to_string();
        assert!(e.contains("unexpected argument '--source'"), "{refused:?}: {e}");
    }
}

/// `record --out` writes a session or a CSV: a name of another format zescope writes is refused
/// with the option that writes it (`--out run.pftrace` wrote a CSV by that name), and
/// `--perfetto` refuses a session's or a CSV's name.
#[test]
fn record_refuses_an_output_named_for_another_format_and_says_which_option_writes_it() {
    let record = |args: &[&str]| {
        let all: Vec<&str> = ["record"].iter().chain(args).copied().collect();
        parse(&all).map(|c| match c.command {
            Some(Command::Record(o)) => (o.out, o.perfetto),
            c => panic!("{c:?}"),
        })
    };
    for (out, says) in [
        ("run.pftrace", "a Perfetto trace is written by --perfetto run.pftrace"),
        ("RUN.PNG", "zescope export run.ron --png RUN.PNG"),
        ("a/run.svg", "zescope export run.ron --svg a/run.svg"),
        (
            "run.om",
            "a .om file (OpenMetrics text) is written from a session: --out run.ron, then `zescope export run.ron --openmetrics run.om`",
        ),
        ("run.perfetto-trace", "a Perfetto trace is written by --perfetto run.perfetto-trace"),
    ] {
        let e = record(&["--out", out]).unwrap_err().to_string();
        assert!(e.contains("--out writes a session (.ron) or a CSV (.csv)") && e.contains(says), "{out}: {e}");
    }
    for out in ["run.ron", "run.csv", "run.txt", "run"] {
        assert_eq!(record(&["--out", out]).unwrap().0.as_deref(), Some(std::path::Path::new(out)));
    }
    let e = record(&["--perfetto", "run.ron"]).unwrap_err().to_string();
    assert!(e.contains("a session (.ron) is written by --out run.ron"), "{e}");
    let e = record(&["--perfetto", "run.CSV"]).unwrap_err().to_string();
    assert!(e.contains("a CSV (.csv) is written by --out run.CSV"), "{e}");
    let (out, trace) = record(&["--perfetto", "run.pftrace"]).unwrap();
    assert_eq!((out, trace.as_deref()), (None, Some(std::path::Path::new("run.pftrace"))));
}

/// `export --KEY FILE` refuses a file named for another format zescope writes, naming the option
/// that writes it (`--png x.svg` wrote a PNG under an SVG's name); its own extension, in any case,
/// or one zescope does not write, is taken as given.
#[test]
fn export_refuses_a_file_named_for_another_format() {
    let export = |args: &[&str]| {
        let all: Vec<&str> = ["export", "s.ron"].iter().chain(args).copied().collect();
        parse(&all).map(|c| match c.command {
            Some(Command::Export(o)) => o.outputs.0.into_iter().map(|(f, p)| (f.key(), p)).collect::<Vec<_>>(),
            c => panic!("{c:?}"),
        })
    };
    for (args, says) in [
        (&["--png", "x.svg"][..], "x.svg is a .svg name, which --svg writes; --png writes a .png"),
        (&["--svg", "x.PNG"], "x.PNG is a .png name, which --png writes; --svg writes a .svg"),
        (&["--perfetto", "x.csv"], "x.csv is a .csv name, which --csv-shown, --csv or --phases write"),
        (&["--csv", "x.ron"], "x.ron is named for a session: export writes from one"),
        (&["--openmetrics", "x.pftrace"], "which --perfetto writes; --openmetrics writes a .om"),
    ] {
        let e = export(args).unwrap_err().to_string();
        assert!(e.contains(says), "{args:?}: {e}");
    }
    let taken = export(&["--png", "a.PNG", "--csv", "b.txt", "--phases", "c.csv", "--svg", "plot"]).unwrap();
    let keys: Vec<&str> = taken.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys.len(), 4, "{taken:?}");
}

/// `serve --save` writes a session: a name of a format `export` writes is refused with the way
/// to get that file (`--save run.csv` wrote a session under a CSV's name).
#[test]
fn serve_saves_only_to_a_session_name() {
    let save = |name: &str| {
        parse(&["serve", "--save", name]).map(|c| match c.command {
            Some(Command::Serve(o)) => o.save,
            c => panic!("{c:?}"),
        })
    };
    let e = save("run.csv").unwrap_err().to_string();
    assert!(e.contains("--save writes a session (.ron)") && e.contains("zescope export run.ron --csv run.csv"), "{e}");
    assert!(save("run.pftrace").unwrap_err().to_string().contains("--perfetto run.pftrace"));
    assert_eq!(save("run.ron").unwrap().as_deref(), Some(std::path::Path::new("run.ron")));
}

#[test]
fn an_image_size_outside_what_an_image_may_be_is_refused_when_parsed() {
    assert_eq!(parse_size("1600x900"), Ok((1600, 900)));
    assert_eq!(parse_size("64X16384"), Ok((64, 16384)));
    let small = parse_size("10x10").unwrap_err();
    assert!(small.contains("10 pixels") && small.contains("64 to 16384"), "{small}");
    let big = parse_size("1600x100000").unwrap_err();
    assert!(big.contains("100000 pixels") && big.contains("\"1600x100000\""), "{big}");
    assert!(parse_size("1600").unwrap_err().contains("not a size"));
    assert!(parse_size("ax9").unwrap_err().contains("not a number"));
    // On the command line, before any file is read.
    let err = parse(&["export", "no-such.ron", "--size", "10x10", "--png", "x.png"]).unwrap_err().to_string();
    assert!(err.contains("--size") && err.contains("64 to 16384"), "{err}");
    // The help says the range the parser keeps.
    use clap::CommandFactory;
    use zescope_model::write::{MAX_SIDE, MIN_SIDE};
    let cmd = Cli::command();
    let export = cmd.find_subcommand("export").expect("an export command");
    let help = export.get_arguments().find(|a| a.get_id() == "size").and_then(|a| a.get_help()).unwrap().to_string();
    assert!(help.contains(&format!("each side {MIN_SIDE} to {MAX_SIDE}")), "{help}");
}
