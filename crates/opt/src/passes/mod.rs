//! The optimisation passes, one per file.
