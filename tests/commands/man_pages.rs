//! `zescope-gen`: the man pages and completions the .deb ships are generated from the real clap
//! definitions, so every subcommand and option appears in them.

use std::process::Command;

use clap::CommandFactory;
use zescope::cli::Cli;

#[test]
fn writes_man_pages_and_completions_for_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_zescope-gen")).arg(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));

    let main = read("man/zescope.1");
    assert!(main.contains(".TH zescope 1"), "{main}");
    for needle in ["zescope\\-doctor(1)", "zescope\\-record(1)", "ENVIRONMENT", "ZET_ENABLE_METRICS", "v0.1.0"] {
        assert!(main.contains(needle), "zescope.1 lacks {needle:?}:\n{main}");
    }
    let subs: Vec<String> = Cli::command().get_subcommands().map(|c| c.get_name().to_owned()).collect();
    assert!(subs.len() >= 3, "{subs:?}");
    for sub in &subs {
        let page = read(&format!("man/zescope-{sub}.1"));
        assert!(page.contains(&format!(".TH zescope-{sub} 1  \"zescope 0.1.0\"")), "{page}");
        // `--source` on the pages of the commands that sample, and only there.
        let samples = ["list", "record", "serve", "doctor"].contains(&sub.as_str());
        assert_eq!(page.contains("\\-\\-source"), samples, "--source on zescope-{sub}.1");
    }
    assert!(read("man/zescope-record.1").contains("\\-\\-interval"));

    for (file, needle) in [
        ("completions/zescope.bash", "doctor"),
        ("completions/_zescope", "doctor"),
        ("completions/zescope.fish", "doctor"),
    ] {
        let text = read(file);
        assert!(text.contains(needle) && text.contains("level-zero"), "{file}:\n{text}");
    }
    let listed = String::from_utf8_lossy(&o.stdout).lines().count();
    assert_eq!(listed, subs.len() + 1 + 3, "prints each file written:\n{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn without_a_directory_it_prints_usage() {
    let o = Command::new(env!("CARGO_BIN_EXE_zescope-gen")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("usage: zescope-gen OUT_DIR"));
}
