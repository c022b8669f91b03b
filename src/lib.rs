//! zescope library.
