//! The computation pipeline and what feeds it: a trip's days, alerts and progress
//! (`computation`), the route services' links (`sources`), the third-party upstreams through
//! the application (`upstreams`), the weather, and OpenStreetMap from Overpass (`osm`) and from
//! the local index (`osm_index`).

mod computation;
mod osm;
mod osm_index;
mod sources;
mod upstreams;
mod weather;
