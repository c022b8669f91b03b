//! zescope's pages: `/metrics` (the newest values, in the format [`negotiate`] picks: Prometheus
//! text 0.0.4 unless OpenMetrics is asked for; `500` naming the problem when encoding fails),
//! `/healthz` (`200` while samples arrive, `503` otherwise) and `/` (a short HTML page).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::request::{Head, negotiate};
use super::{Answer, Site, Upgraded};
use crate::commands::serve::latest::{Format, Latest, Published, encode};
use crate::commands::serve::live::{self, Feed, viewer};

/// `text/plain` for the short answers.
pub const PLAIN: &str = "text/plain; charset=utf-8";

/// What `/healthz` and `/` need besides the latest values.
#[derive(Clone, Debug)]
pub struct Health {
    /// Longer than this without a sample is unhealthy (a few intervals).
    pub max_age: Duration,
}

/// How the latest values become a page ([`encode`], unless a test says otherwise).
pub type Encoder = fn(&Arc<Latest>, Instant, Format) -> Result<String, String>;

/// zescope's pages over the published latest values.
pub struct Pages {
    published: Published,
    health: Health,
    encode: Encoder,
    /// The live feed (`/live`), when it is offered.
    live: Option<Arc<Feed>>,
}

impl Pages {
    /// The pages of `published`.
    pub fn new(published: Published, health: Health) -> Pages {
        Pages::with_encoder(published, health, encode)
    }

    /// The pages of `published`, `/metrics` encoded by `encode`.
    pub fn with_encoder(published: Published, health: Health, encode: Encoder) -> Pages {
        Pages { published, health, encode, live: None }
    }

    /// The same pages, and `/live`: `feed` to viewers.
    pub fn with_live(self, feed: Arc<Feed>) -> Pages {
        Pages { live: Some(feed), ..self }
    }
}

impl Site for Pages {
    fn upgrade(&self, head: &Head, peer: std::net::SocketAddr) -> Upgraded {
        let Some(feed) = self.live.as_ref().filter(|_| head.path == live::PATH) else { return Upgraded::No };
        match viewer::upgrade(feed, head, peer) {
            viewer::Upgrade::Refused(a) => Upgraded::Refused(a),
            viewer::Upgrade::Accepted { response, request } => {
                let feed = Arc::clone(feed);
                Upgraded::Switch { response, then: Box::new(move |s| viewer::watch(&feed, s, peer, &request)) }
            }
        }
    }

    fn answer(&self, head: &Head) -> Answer {
        let latest = self.published.get();
        match head.path.as_str() {
            "/metrics" => {
                let format = negotiate(head.accept.as_deref());
                match (self.encode)(&latest, Instant::now(), format) {
                    Ok(page) => Answer::new(200, format.content_type(), page),
                    Err(e) => {
                        log::error!("serve: {e}");
                        Answer::new(500, PLAIN, format!("500 Internal Server Error: {e}\n"))
                    }
                }
            }
            "/healthz" => {
                let (status, text) = match latest.last_sample.map(|t| t.elapsed()) {
                    Some(a) if latest.running && a <= self.health.max_age => (200, "ok\n".to_owned()),
                    Some(a) if latest.running => (503, format!("no sample for {:.1} s\n", a.as_secs_f64())),
                    _ if latest.running => (503, "no sample yet\n".to_owned()),
                    _ => (503, "the sampler is not running\n".to_owned()),
                };
                Answer::new(status, PLAIN, text)
            }
            "/" => Answer::new(200, "text/html; charset=utf-8", index_page(&latest, self.live.is_some())),
            _ => Answer::new(404, PLAIN, "not found: try /metrics, /healthz or /\n"),
        }
    }
}

fn index_page(latest: &Latest, live: bool) -> String {
    let names: Vec<String> = latest
        .catalog
        .iter()
        .flat_map(|c| &c.devices)
        .filter_map(|d| d.iter().find(|(k, _)| k == "device").map(|(_, v)| html_escape(v)))
        .collect();
    let device = if names.is_empty() { "(no run yet)".to_owned() } else { names.join(", ") };
    let state = if latest.running { "sampling" } else { "not sampling" };
    // As the exit summary says them: the groups' samples, telemetry reads and derived samples apart.
    let rows = latest.rows;
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>zescope serve</title></head><body>\n\
         <h1>zescope serve</h1>\n<p>{device}: {state}, {rows} so far.</p>\n\
         <ul><li><a href=\"/metrics\">/metrics</a> (Prometheus text; OpenMetrics for clients that ask for it)</li>\n\
         <li><a href=\"/healthz\">/healthz</a></li>\n{live}</ul>\n</body></html>\n",
        live = if live {
            "<li>/live: the live feed (a WebSocket, docs/live-protocol.md), which <code>zescope --connect \
             HOST:PORT</code> watches and <code>zescope record --connect HOST:PORT</code> records</li>\n"
        } else {
            ""
        }
    )
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
