//! opt
