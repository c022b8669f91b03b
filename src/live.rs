//! The live feed: `zescope serve`'s run, every sample of it, over a WebSocket (`/live` on serve's
//! listener), for viewers on other machines. `docs/live-protocol.md` is the protocol's
//! definition; [`wire`] is its one encoder and decoder, used by the server
//! (`commands::serve::live`) and by zescope's own client ([`client`]).

pub mod client;
pub mod wire;
