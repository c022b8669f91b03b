//! The live feed: `zescope serve`'s run, every sample of it, over a WebSocket (`/live` on serve's
//! listener), for viewers on other machines. `docs/live-protocol.md` is the protocol's
//! definition; [`wire`] is its one encoder and decoder, used by the server
//! (`commands::serve::live`) and by zescope's own client ([`client`]).

pub mod client;
pub mod groups;
pub mod packed;
pub mod remote;
pub mod wire;

/// What `zescope` says, in one line, when it is to open the window where there is no display
/// (none of `DISPLAY`, `WAYLAND_DISPLAY`, `WAYLAND_SOCKET` set, as over ssh): how to watch this
/// machine from a desk instead. `None` when there is a display to try.
pub fn no_display(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<String> {
    let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
    if set("DISPLAY") || set("WAYLAND_DISPLAY") || set("WAYLAND_SOCKET") {
        return None;
    }
    Some(
        "zescope: no display here (DISPLAY and WAYLAND_DISPLAY are unset). To watch this machine from a desk: \
         `zescope serve` here, `ssh -N -L 9464:localhost:9464 THIS-HOST` there, then \
         `zescope --connect localhost:9464` there (or `zescope record --connect localhost:9464 --out run.ron`)"
            .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_display_of_any_kind_is_tried() {
        let env = |set: &'static [&'static str]| move |n: &str| set.contains(&n).then(|| "x".into());
        assert!(super::no_display(env(&[])).is_some());
        assert!(super::no_display(|_| Some("".into())).is_some(), "an empty variable names no display");
        for one in [&["DISPLAY"][..], &["WAYLAND_DISPLAY"], &["WAYLAND_SOCKET"]] {
            assert!(super::no_display(env(one)).is_none(), "{one:?}");
        }
    }
}
