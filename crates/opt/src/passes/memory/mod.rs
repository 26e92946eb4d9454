//! Memory: store-to-load forwarding and dead stores, load PRE, register promotion
//! of globals and array elements, predictive commoning, silent and sunk stores,
//! scalar replacement of aggregates and constant local tables.

pub mod checkpromote;
pub mod dse;
mod dselocal;
pub mod globalforward;
pub mod loadpre;
pub mod localconst;
pub mod locmap;
pub mod memforward;
mod objects;
pub mod predcom;
pub mod promote;
mod promote_elements;
pub mod silentstore;
pub mod sroa;
pub mod storesink;
