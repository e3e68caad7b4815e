//! The OpenStreetMap index's integration tests as one binary: the committed fixtures imported
//! and read back on each backend, and hostile files refused quickly, one module each.

mod hostile;
mod index;
