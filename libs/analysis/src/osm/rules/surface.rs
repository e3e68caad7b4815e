//! What a day rides on: the surface of each way, the day's road mix and the rough-surface
//! alert.

use serde_json::{Value, json};

use super::*;
use crate::catalogue::*;
use crate::format::{int_sep, round1};
use crate::model::{Alert, Severity};
use crate::osm::model::{Corridor, OsmStage, WaySection};
use crate::rules::alert;

/// `surface` values that are not paved: loose or natural ground.
const UNPAVED_SURFACES: &[&str] = &[
    "unpaved",
    "gravel",
    "fine_gravel",
    "compacted",
    "pebblestone",
    "dirt",
    "earth",
    "ground",
    "grass",
    "sand",
    "mud",
    "clay",
    "rock",
    "woodchips",
    "snow",
    "ice",
];
/// `surface` values that are paved but rough to ride: stones with gaps.
const COBBLED_SURFACES: &[&str] = &[
    "sett",
    "cobblestone",
    "unhewn_cobblestone",
    "cobblestone:flattened",
    "stone",
];
/// `surface` values that are paved and smooth enough.
const PAVED_SURFACES: &[&str] = &[
    "paved",
    "asphalt",
    "chipseal",
    "concrete",
    "concrete:plates",
    "concrete:lanes",
    "paving_stones",
    "paving_stones:lanes",
    "bricks",
    "metal",
    "wood",
    "rubber",
    "tartan",
    "artificial_turf",
];
const ROUGH_SMOOTHNESS: &[&str] = &["bad", "very_bad", "horrible", "very_horrible", "impassable"];
/// Highways that are paths for all but a few: without a `surface`, they are taken as
/// unpaved (as Valhalla takes them, and as they mostly are outside towns).
const UNPAVED_BY_DEFAULT: &[&str] = &["track", "path", "bridleway", "footway"];

/// What a way is to ride on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Paved,
    /// Paved with stones (sett, cobbles) or in bad repair.
    Cobbled,
    Unpaved,
    /// A `surface` value this list does not know.
    Unknown,
}

impl Surface {
    /// Rough to ride: unpaved or cobbled (what `surface_rough` counts).
    pub fn is_rough(self) -> bool {
        matches!(self, Self::Unpaved | Self::Cobbled)
    }
}

/// The surface of a way: its `surface` (any unpaved `;`-part makes it unpaved, else any
/// cobbled part cobbled); without one, a `tracktype` (grade1 paved, grade2–5 unpaved), else
/// the highway's usual surface (tracks, paths, bridleways and footways unpaved, roads
/// paved). Only without a `surface`, a `smoothness` bad or worse makes it rough (cobbled):
/// a way's own surface says more than a judgement of its repair.
pub fn surface_of(way: &WaySection) -> Surface {
    let rough_smoothness = way
        .smoothness
        .as_deref()
        .is_some_and(|s| ROUGH_SMOOTHNESS.contains(&s));
    if way.surface.is_none() && rough_smoothness {
        return Surface::Cobbled;
    }
    match (&way.surface, way.tracktype.as_deref()) {
        (Some(surface), _) => {
            let parts: Vec<&str> = surface.split(';').map(str::trim).collect();
            if parts.iter().any(|p| UNPAVED_SURFACES.contains(p)) {
                Surface::Unpaved
            } else if parts.iter().any(|p| COBBLED_SURFACES.contains(p)) {
                Surface::Cobbled
            } else if parts.iter().any(|p| PAVED_SURFACES.contains(p)) {
                Surface::Paved
            } else {
                Surface::Unknown
            }
        }
        (None, Some("grade1")) => Surface::Paved,
        (None, Some("grade2" | "grade3" | "grade4" | "grade5")) => Surface::Unpaved,
        (None, _) if UNPAVED_BY_DEFAULT.contains(&way.highway.as_str()) => Surface::Unpaved,
        (None, _) => Surface::Paved,
    }
}

/// Whether a section is rough to ride ([`surface_of`]: unpaved or cobbled).
pub fn is_rough(way: &WaySection) -> bool {
    surface_of(way).is_rough()
}

/// What a day rides on, metres: unpaved, cobbled, and busy road (main and secondary roads
/// without cycle infrastructure, every metre of them: the traffic alerts then count only
/// the long stretches).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RoadMix {
    pub unpaved_m: f64,
    pub cobbled_m: f64,
    pub busy_m: f64,
}

/// The day's [`RoadMix`], from the stretches it rides ([`Corridor::ways`]).
pub fn road_mix(corridor: &Corridor) -> RoadMix {
    let mut mix = RoadMix::default();
    for way in corridor
        .ways
        .iter()
        .filter(|w| w.length_m.is_finite() && w.length_m > 0.0)
    {
        match surface_of(way) {
            Surface::Unpaved => mix.unpaved_m += way.length_m,
            Surface::Cobbled => mix.cobbled_m += way.length_m,
            Surface::Paved | Surface::Unknown => {}
        }
        if is_busy_road(way) {
            mix.busy_m += way.length_m;
        }
    }
    mix
}

/// Rough stretches listed in a `surface_rough` alert, the longest.
pub const ROUGH_SECTIONS_LISTED: usize = 10;

/// `surface_rough`: the day rides [`ROUGH_SURFACE_M`] or more on rough surface (unpaved or
/// cobbled, a day total), at the day's start. Its `sections` are the stretches in order
/// along the day (consecutive rough ways of one kind are one stretch), the
/// [`ROUGH_SECTIONS_LISTED`] longest, each with its km, length, kind and middle.
pub fn surface_rough(stage: &OsmStage<'_>, corridor: &Corridor) -> Option<Alert> {
    let mix = road_mix(corridor);
    let total = mix.unpaved_m + mix.cobbled_m;
    if total < ROUGH_SURFACE_M {
        return None;
    }
    // (kind, from, length, end, centroid·length sums)
    type Stretch = (Surface, f64, f64, f64, (f64, f64));
    let mut stretches: Vec<Stretch> = Vec::new();
    for way in corridor
        .ways
        .iter()
        .filter(|w| w.length_m.is_finite() && w.length_m > 0.0)
    {
        let kind = surface_of(way);
        if !kind.is_rough() {
            continue;
        }
        let weighted = (way.centroid.0 * way.length_m, way.centroid.1 * way.length_m);
        match stretches.last_mut() {
            Some(last) if last.0 == kind && (way.from_m - last.3).abs() <= STRETCH_JOIN_M => {
                last.2 += way.length_m;
                last.3 = way.from_m + way.length_m;
                last.4 = (last.4.0 + weighted.0, last.4.1 + weighted.1);
            }
            _ => stretches.push((
                kind,
                way.from_m,
                way.length_m,
                way.from_m + way.length_m,
                weighted,
            )),
        }
    }
    let count = stretches.len();
    let mut longest: Vec<usize> = (0..count).collect();
    longest.sort_by(|&a, &b| stretches[b].2.total_cmp(&stretches[a].2));
    longest.truncate(ROUGH_SECTIONS_LISTED);
    longest.sort_unstable();
    let sections: Vec<Value> = longest
        .iter()
        .map(|&i| {
            let (kind, from, length, _, sum) = stretches[i];
            json!({
                "km": round1(from / 1000.0),
                "lengthM": length.round(),
                "surface": if kind == Surface::Unpaved { "unpaved" } else { "cobbled" },
                "lat": sum.0 / length,
                "lon": sum.1 / length,
            })
        })
        .collect();
    Some(alert(
        SURFACE_ROUGH,
        Severity::Warning,
        GROUP_ROAD,
        format!(
            "Day {} has {} m of rough surface ({} m unpaved, {} m cobbled).",
            stage.day_number,
            int_sep(total),
            int_sep(mix.unpaved_m),
            int_sep(mix.cobbled_m),
        ),
        json!({
            "lengthM": total.round(), "unpavedM": mix.unpaved_m.round(),
            "cobbledM": mix.cobbled_m.round(), "thresholdM": ROUGH_SURFACE_M,
            "sectionCount": count, "sections": sections,
        }),
        Some(stage.start),
    ))
}
