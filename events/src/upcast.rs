//! Old event shapes are read in today's shape. Stored events are never rewritten: each change
//! of an event's JSON bumps its `schema_version` and registers one step here, from version `n`
//! to `n + 1`; loading applies the chain.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use serde_json::Value;

/// One step: the data of `event_type` at `from_version` into the shape of `from_version + 1`.
pub type UpcastStep = fn(Value) -> Value;

/// The registry of upcasting steps.
#[derive(Debug, Default)]
pub struct Upcasters {
    steps: HashMap<(String, i32), UpcastStep>,
}

impl Upcasters {
    /// Registers the step from `from_version` of `event_type`.
    pub fn register(&mut self, event_type: &str, from_version: i32, step: UpcastStep) {
        self.steps
            .insert((event_type.to_owned(), from_version), step);
    }

    /// Brings `data` up to the newest registered version; answers it with that version.
    pub fn upcast(&self, event_type: &str, mut version: i32, mut data: Value) -> (i32, Value) {
        while let Some(step) = self.steps.get(&(event_type.to_owned(), version)) {
            data = step(data);
            version += 1;
        }
        (version, data)
    }
}

fn registry() -> &'static RwLock<Upcasters> {
    static REGISTRY: OnceLock<RwLock<Upcasters>> = OnceLock::new();
    // Trip events are all at schema version 1 so far: no step is registered yet. The first
    // shape change adds its step here, next to a test that loads the old shape.
    REGISTRY.get_or_init(|| RwLock::new(Upcasters::default()))
}

/// Registers a step in the process-wide registry the stores read through.
pub fn register(event_type: &str, from_version: i32, step: UpcastStep) {
    let mut upcasters = registry()
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    upcasters.register(event_type, from_version, step);
}

/// Upcasts through the process-wide registry.
pub fn upcast(event_type: &str, version: i32, data: Value) -> (i32, Value) {
    let upcasters = registry()
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    upcasters.upcast(event_type, version, data)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_chain_of_steps_brings_an_old_shape_to_the_newest() {
        let mut u = Upcasters::default();
        u.register("Renamed", 1, |mut v| {
            let old = v["km"].take();
            json!({"distanceKm": old})
        });
        u.register(
            "Renamed",
            2,
            |v| json!({"distance": {"km": v["distanceKm"]}}),
        );
        assert_eq!(
            u.upcast("Renamed", 1, json!({"km": 5})),
            (3, json!({"distance": {"km": 5}}))
        );
        assert_eq!(
            u.upcast("Renamed", 3, json!({"x": 1})),
            (3, json!({"x": 1}))
        );
        assert_eq!(u.upcast("Other", 1, json!(1)), (1, json!(1)));
    }
}
