//! interp
