//! Autosave (to be written).
