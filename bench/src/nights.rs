//! `etappe-bench nights`: the pacer placing nights at accommodation over a long route: a
//! straight route of `km` kilometres in `days` days (a gentle fatigue curve), with a bed every `bed_every` km give or take a third
//! (a seeded stream, so every run sees the same beds), of the rider's types in turn. Reports
//! the time of one placement (best and median of `runs`), how many nights end at a bed
//! within the tolerance, and the longest gap between a night's target and its bed.

use std::time::{Duration, Instant};

use etappe_domain::trip::nights::{Bed, Night, NightRules, place_nights};

/// A small, seeded generator: the same beds on every machine (no dependency for it).
struct Stream(u64);

impl Stream {
    fn next_unit(&mut self) -> f64 {
        // SplitMix64: good enough to scatter beds, and fully determined by the seed.
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    }
}

/// Day lengths for `km` in `days`, each day 0.99 of the one before (a gentle fatigue
/// curve), scaled to the route: what the pacer hands the night placement.
fn plan(km: f64, days: usize) -> Vec<f64> {
    let raw: Vec<f64> = (0..days).map(|d| 0.99f64.powi(d as i32)).collect();
    let sum: f64 = raw.iter().sum();
    raw.iter().map(|r| r * km / sum).collect()
}

pub fn run(km: f64, days: usize, bed_every: f64, runs: usize) {
    let mut stream = Stream(1);
    let mut beds = Vec::new();
    let mut at = bed_every * stream.next_unit();
    while at < km {
        beds.push(Bed {
            along_m: at * 1000.0,
            off_route_m: 2000.0 * stream.next_unit(),
            rank: beds.len() % 3,
            price: Some(10.0 + 60.0 * stream.next_unit()),
        });
        at += bed_every * (2.0 / 3.0 + 2.0 / 3.0 * stream.next_unit());
    }
    let lengths = plan(km, days);
    let rules = NightRules::for_plan(80.0_f64.max(km / days as f64 + 10.0), &lengths);
    let mut times = Vec::with_capacity(runs);
    let mut placed = Vec::new();
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        placed = place_nights(km * 1000.0, &lengths, &beds, &rules, &[]);
        times.push(started.elapsed());
    }
    times.sort();
    let at_bed = placed
        .iter()
        .filter(|p| matches!(p.night, Night::AtBed { .. }))
        .count();
    let worst = placed
        .iter()
        .filter(|p| matches!(p.night, Night::AtBed { .. }))
        .map(|p| (p.end_m - p.target_m).abs() / 1000.0)
        .fold(0.0, f64::max);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "nights: {km} km in {days} days, {} beds (one every {bed_every} km ± a third): {} of {} nights at a bed within ±{:.0} % ({:.0} %), the farthest {worst:.1} km from its target; placing them took best {:.0} µs, median {:.0} µs over {} runs",
        beds.len(),
        at_bed,
        placed.len(),
        rules.tolerance * 100.0,
        100.0 * at_bed as f64 / placed.len().max(1) as f64,
        us(times[0]),
        us(times[times.len() / 2]),
        times.len(),
    );
}
