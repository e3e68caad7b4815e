//! Nights at a place to sleep: the days are cut where the rider can sleep. The pacer first
//! plans each day's length as it always does (`etappe_route::pacing::day_lengths_km`); then,
//! night by night, it picks the bed that best fits near where that day would end, ends the
//! day there, and plans the rest of the route from that bed, so each choice carries into the
//! days after it.
//!
//! A bed fits a night when:
//! - it lies within the tolerance of the day's planned length (±15 %) along the route, past
//!   the day's start, and at most [`MAX_OFF_ROUTE_M`] off it;
//! - the day to it, the way off the route included, stays within `maxDistancePerDay` (unless
//!   fixed dates force longer days, as they force the pacer);
//!
//! and among the beds that fit, the rider's preferred type comes first (the order of their
//! accommodation types), then the cheaper, then the nearer to the planned end. A night with no
//! bed that fits keeps the planned cut and names the nearest beds before and after the window,
//! so the rider can widen the day or choose.
//!
//! After a night is chosen, the remaining planned lengths are scaled to the route left (up to
//! the next night that is kept), so the fatigue curve of the plan survives every choice.
//!
//! Re-flow: nights can be given as fixed (a night the rider chose stays where it is); the
//! free nights before it are placed again between the night that changed and it.

use serde::{Deserialize, Serialize};

use super::settings::AccommodationType;
use super::stage::Accommodation;
// The records a night leaves on its day live with the day (`stage`); they are named here
// too, where the pacer makes them.
pub use super::stage::{ChosenBy, NightCandidate, NightNote, NightOutcome};

/// The tolerance of the product: a bed may lie 15 % of the day's length before or after.
pub const TOLERANCE: f64 = 0.15;
/// A day is never shorter than this, km, whatever bed lies nearer.
pub const MIN_DAY_KM: f64 = 5.0;
/// A bed further off the route than this is not a night's place: reaching it is a detour.
pub const MAX_OFF_ROUTE_M: f64 = 2_000.0;
/// How many passed-over beds a night names.
pub const PASSED_OVER_NAMED: usize = 3;

/// A place to sleep along the route, as the pacer compares it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bed {
    /// Ridden metres from the start to the route point nearest the bed.
    pub along_m: f64,
    /// Metres from that point to the bed.
    pub off_route_m: f64,
    /// The rider's preference for its type: 0 is the most preferred.
    pub rank: usize,
    /// The cheapest estimated price of a night, € (unknown: compared as dearest).
    pub price: Option<f64>,
}

/// How nights are placed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NightRules {
    /// A bed may lie this share of the day's planned length before or after its end.
    pub tolerance: f64,
    /// The longest day, km (`maxDistancePerDay`).
    pub cap_km: f64,
    /// True when fixed dates force days over the cap: the cap then limits nothing.
    pub over_cap_allowed: bool,
}

impl NightRules {
    /// The cap a day is held to, km: none (infinite) when dates force longer days, or when
    /// the cap is not a positive number.
    pub fn effective_cap_km(&self) -> f64 {
        let positive = self.cap_km.is_finite() && self.cap_km > 0.0;
        if self.over_cap_allowed || !positive {
            f64::INFINITY
        } else {
            self.cap_km
        }
    }

    /// The rules for days planned as `lengths_km` under a cap of `cap_km`: the cap gives
    /// way only where the plan itself had to exceed it (dates forcing longer days).
    pub fn for_plan(cap_km: f64, lengths_km: &[f64]) -> Self {
        Self {
            tolerance: TOLERANCE,
            cap_km,
            over_cap_allowed: lengths_km.iter().any(|l| *l > cap_km + 0.1),
        }
    }
}

/// Where a night is, and why.
#[derive(Clone, Debug, PartialEq)]
pub enum Night {
    /// At `bed` (an index into the beds), the best of those that fit; `passed_over` are the
    /// others that fit, best first.
    AtBed { bed: usize, passed_over: Vec<usize> },
    /// No bed fits: the planned cut stands; the nearest beds before and after the window,
    /// and the bed in the window that only the daily cap rules out (nearest the target).
    NoBed {
        before: Option<usize>,
        after: Option<usize>,
        capped: Option<usize>,
    },
    /// Given as fixed (kept by a re-flow): at `bed` when it is at one.
    Kept { bed: Option<usize> },
}

/// One night: where the day before it was planned to end, and where it ends.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedNight {
    /// Ridden metres from the start where the plan would have ended the day.
    pub target_m: f64,
    /// The window the bed was looked for in, metres from the start.
    pub window_m: (f64, f64),
    /// Ridden metres from the start where the day ends.
    pub end_m: f64,
    pub night: Night,
    /// The daily cap the night was placed under, km (infinite when dates lift it).
    pub cap_km: f64,
}

/// A night a re-flow keeps: where it ends, and at which bed if any.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fixed {
    pub end_m: f64,
    pub bed: Option<usize>,
}

/// Places the nights between the days of a route `total_m` long, planned as `lengths_km`
/// (one per day: the nights are the ends of every day but the last). `fixed[n]`, where given,
/// keeps night `n` where it is; the free nights before it share the route up to it.
pub fn place_nights(
    total_m: f64,
    lengths_km: &[f64],
    beds: &[Bed],
    rules: &NightRules,
    fixed: &[Option<Fixed>],
) -> Vec<PlacedNight> {
    let nights = lengths_km.len().saturating_sub(1);
    let mut placed = Vec::with_capacity(nights);
    let mut start_m = 0.0;
    let kept = |n: usize| fixed.get(n).copied().flatten();
    for n in 0..nights {
        // The plan up to the next kept night (or the route's end): the leg this night is on.
        let (until, until_m) = (n..nights)
            .find_map(|k| kept(k).map(|f| (k, f.end_m)))
            .unwrap_or((nights, total_m));
        let search = Search::on_leg(start_m, until_m, &lengths_km[n..=until], rules);
        if let Some(keep) = kept(n) {
            placed.push(PlacedNight {
                target_m: search.target_m,
                window_m: (search.low_m, search.high_m),
                end_m: keep.end_m,
                night: Night::Kept { bed: keep.bed },
                cap_km: rules.effective_cap_km(),
            });
            start_m = keep.end_m;
            continue;
        }
        let fitting = search.fitting_beds(beds, rules);
        let (end_m, night) = match fitting.split_first() {
            Some((&best, rest)) => (
                beds[best].along_m,
                Night::AtBed {
                    bed: best,
                    passed_over: rest.to_vec(),
                },
            ),
            None => (search.target_m, search.nearest_outside(beds, rules)),
        };
        placed.push(PlacedNight {
            target_m: search.target_m,
            window_m: (search.low_m, search.high_m),
            end_m,
            night,
            cap_km: rules.effective_cap_km(),
        });
        start_m = end_m;
    }
    placed
}

/// Where one night is looked for: the day starting at `start_m`, its planned end and the
/// window around it, on a leg that ends at `until_m` (the next kept night or the route's end).
struct Search {
    start_m: f64,
    target_m: f64,
    low_m: f64,
    high_m: f64,
    until_m: f64,
}

impl Search {
    /// The search for the first night of a leg from `start_m` to `until_m` planned as
    /// `leg_km` (this day's planned length first): the plan is scaled to the route up to the
    /// leg's end, so the fatigue curve stays and a kept night is reached by days of the plan.
    fn on_leg(start_m: f64, until_m: f64, leg_km: &[f64], rules: &NightRules) -> Self {
        let planned: f64 = leg_km.iter().sum::<f64>() * 1000.0;
        let scale = if planned > 0.0 {
            (until_m - start_m).max(0.0) / planned
        } else {
            1.0
        };
        let mut length_m = leg_km.first().copied().unwrap_or_default() * 1000.0 * scale;
        if !rules.over_cap_allowed {
            length_m = length_m.min(rules.cap_km * 1000.0);
        }
        Self {
            start_m,
            target_m: start_m + length_m,
            low_m: start_m + (length_m * (1.0 - rules.tolerance)).max(MIN_DAY_KM * 1000.0),
            high_m: (start_m + length_m * (1.0 + rules.tolerance)).min(until_m),
            until_m,
        }
    }

    /// The beds that fit this night (see the module documentation), best first: the
    /// rider's preferred type, then the cheaper, then the nearer to the planned end.
    fn fitting_beds(&self, beds: &[Bed], rules: &NightRules) -> Vec<usize> {
        let fits = |b: &Bed| {
            let day_km = (b.along_m - self.start_m + b.off_route_m) / 1000.0;
            b.along_m >= self.low_m
                && b.along_m <= self.high_m
                && b.along_m < self.until_m
                && b.off_route_m <= MAX_OFF_ROUTE_M
                && (rules.over_cap_allowed || day_km <= rules.cap_km + 1e-9)
        };
        let mut fitting: Vec<usize> = (0..beds.len()).filter(|&i| fits(&beds[i])).collect();
        fitting.sort_by(|&a, &b| {
            let (x, y) = (&beds[a], &beds[b]);
            x.rank
                .cmp(&y.rank)
                .then(
                    x.price
                        .unwrap_or(f64::INFINITY)
                        .total_cmp(&y.price.unwrap_or(f64::INFINITY)),
                )
                .then(
                    (x.along_m - self.target_m)
                        .abs()
                        .total_cmp(&(y.along_m - self.target_m).abs()),
                )
                .then(a.cmp(&b))
        });
        fitting
    }

    /// The night when no bed fits: the nearest beds near the route before the window (past
    /// the day's start) and after it (before the leg's end), and the one the cap rules out.
    fn nearest_outside(&self, beds: &[Bed], rules: &NightRules) -> Night {
        let near = |i: &usize| beds[*i].off_route_m <= MAX_OFF_ROUTE_M;
        let before = (0..beds.len())
            .filter(|i| near(i) && beds[*i].along_m < self.low_m && beds[*i].along_m > self.start_m)
            .max_by(|&a, &b| beds[a].along_m.total_cmp(&beds[b].along_m));
        let after = (0..beds.len())
            .filter(|i| {
                near(i) && beds[*i].along_m > self.high_m && beds[*i].along_m < self.until_m
            })
            .min_by(|&a, &b| beds[a].along_m.total_cmp(&beds[b].along_m));
        let uncapped = NightRules {
            over_cap_allowed: true,
            ..*rules
        };
        let capped = self
            .fitting_beds(beds, &uncapped)
            .into_iter()
            .min_by(|&a, &b| {
                (beds[a].along_m - self.target_m)
                    .abs()
                    .total_cmp(&(beds[b].along_m - self.target_m).abs())
            });
        Night::NoBed {
            before,
            after,
            capped,
        }
    }
}

/// A place to sleep found along a route by the route job, stored beside the track so a
/// re-flow reads the beds the pacer saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BedOnRoute {
    pub accommodation: Accommodation,
    /// The stored track's point nearest the bed (where a day ending there ends).
    pub point_index: usize,
    /// Ridden metres from the route's start to that point, as edits measure the track.
    pub along_m: f64,
    /// Metres from that point to the bed.
    pub off_route_m: f64,
}

/// The pacer's view of `beds`: each bed of an enabled type ranked by the order of `types`
/// (the rider's preference), with the index of the bed it stands for.
pub fn pacer_beds(beds: &[BedOnRoute], types: &[AccommodationType]) -> (Vec<Bed>, Vec<usize>) {
    let mut out = Vec::new();
    let mut index = Vec::new();
    for (i, bed) in beds.iter().enumerate() {
        let Some(rank) = types
            .iter()
            .position(|t| t.as_str() == bed.accommodation.kind)
        else {
            continue;
        };
        out.push(Bed {
            along_m: bed.along_m,
            off_route_m: bed.off_route_m,
            rank,
            price: bed.accommodation.price_min_eur,
        });
        index.push(i);
    }
    (out, index)
}

impl NightNote {
    /// The note of a night no bed could be looked for, `reason` saying why.
    pub fn not_looked_for(placed: &PlacedNight, day_start_m: f64, reason: &str) -> Self {
        let km = |m: f64| ((m - day_start_m) / 100.0).round() / 10.0;
        Self {
            outcome: NightOutcome::NotLookedFor,
            target_km: km(placed.target_m),
            window_km: [km(placed.window_m.0), km(placed.window_m.1)],
            tolerance_pct: tolerance_pct(),
            passed_over: Vec::new(),
            nearest_before: None,
            nearest_after: None,
            why: format!(
                "No place to sleep could be looked for ({reason}): the day ends at the planned cut of {} km.",
                km(placed.target_m)
            ),
        }
    }
}

/// A placed night in its day's terms: the place chosen (marked Etappe's) and the note, for
/// a day starting `day_start_m` along the route; `index` is [`pacer_beds`]'s.
pub fn night_outcome(
    placed: &PlacedNight,
    day_start_m: f64,
    index: &[usize],
    beds: &[BedOnRoute],
) -> (Option<Accommodation>, Option<NightNote>) {
    let terms = DayTerms {
        placed,
        day_start_m,
        index,
        beds,
    };
    match &placed.night {
        Night::AtBed { bed, passed_over } => terms.at_bed(*bed, passed_over),
        Night::NoBed {
            before,
            after,
            capped,
        } => (None, Some(terms.no_bed(*before, *after, *capped))),
        Night::Kept { .. } => (None, None),
    }
}

/// A placed night read in the terms of its day: kilometres from the day's start, beds as
/// the rider sees them.
struct DayTerms<'a> {
    placed: &'a PlacedNight,
    day_start_m: f64,
    /// [`pacer_beds`]'s index: the bed of `beds` each pacer's bed stands for.
    index: &'a [usize],
    beds: &'a [BedOnRoute],
}

impl DayTerms<'_> {
    /// Kilometres from the day's start to `m` along the route, to 0.1 km.
    fn km(&self, m: f64) -> f64 {
        ((m - self.day_start_m) / 100.0).round() / 10.0
    }

    /// The window the bed was looked for in, km of the day.
    fn window_km(&self) -> [f64; 2] {
        [
            self.km(self.placed.window_m.0),
            self.km(self.placed.window_m.1),
        ]
    }

    /// The pacer's bed `i` as the note names it.
    fn candidate(&self, i: usize) -> Option<NightCandidate> {
        let bed = self.beds.get(*self.index.get(i)?)?;
        let a = &bed.accommodation;
        Some(NightCandidate {
            name: a.name.clone(),
            kind: a.kind.clone(),
            km: self.km(bed.along_m),
            off_route_m: bed.off_route_m.round(),
            price_min_eur: a.price_min_eur,
            lat: a.lat,
            lon: a.lon,
        })
    }

    /// A note with `outcome` and `why`, naming no bed yet.
    fn note(&self, outcome: NightOutcome, why: String) -> NightNote {
        NightNote {
            outcome,
            target_km: self.km(self.placed.target_m),
            window_km: self.window_km(),
            tolerance_pct: tolerance_pct(),
            passed_over: Vec::new(),
            nearest_before: None,
            nearest_after: None,
            why,
        }
    }

    /// The night at the pacer's bed `bed`, the best of those that fit; `passed_over` are the
    /// others (a few are named).
    fn at_bed(
        &self,
        bed: usize,
        passed_over: &[usize],
    ) -> (Option<Accommodation>, Option<NightNote>) {
        let Some(chosen) = self.candidate(bed) else {
            return (None, None);
        };
        let Some(source) = self.index.get(bed).and_then(|i| self.beds.get(*i)) else {
            return (None, None);
        };
        let mut place = source.accommodation.clone();
        place.chosen_by = Some(ChosenBy::Etappe);
        place.distance_to_end_m = Some(chosen.off_route_m);
        let others: Vec<NightCandidate> = passed_over
            .iter()
            .take(PASSED_OVER_NAMED)
            .filter_map(|i| self.candidate(*i))
            .collect();
        let fitted = passed_over.len() + 1;
        let why = format!(
            "Ends at {} at km {} of the day, {} m off the route: the best fit of {fitted} place{} to sleep within ±{} % of the planned {} km (your types in order, then price, then nearness).",
            named(&chosen),
            chosen.km,
            chosen.off_route_m,
            if fitted == 1 { "" } else { "s" },
            tolerance_pct(),
            self.km(self.placed.target_m),
        );
        let mut note = self.note(NightOutcome::AtBed, why);
        note.passed_over = others;
        (Some(place), Some(note))
    }

    /// The night when no bed fits: the planned cut, saying why — a bed in the window that
    /// the daily cap rules out, beds in the window of types the rider has not enabled, or
    /// none in the window at all — and naming the nearest beds before and after it.
    fn no_bed(
        &self,
        before: Option<usize>,
        after: Option<usize>,
        capped: Option<usize>,
    ) -> NightNote {
        let before = before.and_then(|i| self.candidate(i));
        let after = after.and_then(|i| self.candidate(i));
        let window = self.window_km();
        let planned = self.km(self.placed.target_m);
        let mut why = match capped.and_then(|i| self.candidate(i)) {
            Some(bed) => format!(
                "{} at km {} of the day is within ±{} % of the planned {planned} km, but riding to it ({} km with the way off the route) is over your daily maximum of {} km: the day ends at the planned cut. Raise the maximum or choose it.",
                named(&bed),
                bed.km,
                tolerance_pct(),
                round1(bed.km + bed.off_route_m / 1000.0),
                round1(self.placed.cap_km),
            ),
            None => {
                let others = self.other_types_in_window();
                let mut why = format!(
                    "No place to sleep of your types within ±{} % of the planned {planned} km (km {}–{} of the day): the day ends at the planned cut.",
                    tolerance_pct(),
                    window[0],
                    window[1]
                );
                if let Some(first) = others.first() {
                    why.push_str(&format!(
                        " {} place{} of other types lie{} there ({} at km {}): enable {} to sleep there.",
                        others.len(),
                        if others.len() == 1 { "" } else { "s" },
                        if others.len() == 1 { "s" } else { "" },
                        named(first),
                        first.km,
                        first.kind.replace('_', " "),
                    ));
                }
                why
            }
        };
        let sides: Vec<String> = [("before", &before), ("after", &after)]
            .into_iter()
            .filter_map(|(side, c)| {
                c.as_ref()
                    .map(|c| format!("{} at km {} ({side})", named(c), c.km))
            })
            .collect();
        if sides.is_empty() {
            why.push_str(" No place of your types is near the route before the next kept night.");
        } else {
            why.push_str(&format!(" Nearest: {}.", sides.join(", ")));
        }
        let mut note = self.note(NightOutcome::NoBedInWindow, why);
        note.nearest_before = before;
        note.nearest_after = after;
        note
    }

    /// The beds in the window, near enough the route, of types the rider has not enabled
    /// (the route job reads every type so that a night can say so), nearest the target first.
    fn other_types_in_window(&self) -> Vec<NightCandidate> {
        let (low, high) = self.placed.window_m;
        let mut others: Vec<(f64, NightCandidate)> = self
            .beds
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.index.contains(i))
            .filter(|(_, b)| {
                b.along_m >= low && b.along_m <= high && b.off_route_m <= MAX_OFF_ROUTE_M
            })
            .map(|(_, b)| {
                let a = &b.accommodation;
                (
                    (b.along_m - self.placed.target_m).abs(),
                    NightCandidate {
                        name: a.name.clone(),
                        kind: a.kind.clone(),
                        km: self.km(b.along_m),
                        off_route_m: b.off_route_m.round(),
                        price_min_eur: a.price_min_eur,
                        lat: a.lat,
                        lon: a.lon,
                    },
                )
            })
            .collect();
        others.sort_by(|a, b| a.0.total_cmp(&b.0));
        others.into_iter().map(|(_, c)| c).collect()
    }
}

/// To 0.1.
fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The tolerance, in percent, as a note states it.
fn tolerance_pct() -> u8 {
    (TOLERANCE * 100.0).round() as u8
}

/// A candidate as a sentence names it: its name and type, or its type alone.
fn named(candidate: &NightCandidate) -> String {
    match &candidate.name {
        Some(name) => format!("{name} ({})", candidate.kind.replace('_', " ")),
        None => format!("an unnamed {}", candidate.kind.replace('_', " ")),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn bed(km: f64, rank: usize, price: Option<f64>) -> Bed {
        Bed {
            along_m: km * 1000.0,
            off_route_m: 200.0,
            rank,
            price,
        }
    }

    const RULES: NightRules = NightRules {
        tolerance: TOLERANCE,
        cap_km: 80.0,
        over_cap_allowed: false,
    };

    fn ends(nights: &[PlacedNight]) -> Vec<f64> {
        nights
            .iter()
            .map(|n| (n.end_m / 100.0).round() / 10.0)
            .collect()
    }

    #[test]
    fn a_bed_at_the_tolerances_edges_fits_and_one_just_past_it_does_not() {
        // Two 60 km days: the window of night 1 is 51–69 km.
        let lengths = [60.0, 60.0];
        let inside = place_nights(120_000.0, &lengths, &[bed(51.0, 0, None)], &RULES, &[]);
        assert!(matches!(inside[0].night, Night::AtBed { bed: 0, .. }));
        assert_eq!(ends(&inside), [51.0]);
        let edge = place_nights(120_000.0, &lengths, &[bed(69.0, 0, None)], &RULES, &[]);
        assert!(matches!(edge[0].night, Night::AtBed { bed: 0, .. }));
        let outside = place_nights(
            120_000.0,
            &lengths,
            &[bed(50.8, 0, None), bed(69.3, 0, None)],
            &RULES,
            &[],
        );
        assert_eq!(
            outside[0].night,
            Night::NoBed {
                before: Some(0),
                after: Some(1),
                capped: None,
            }
        );
        assert_eq!(ends(&outside), [60.0], "the planned cut stands");
    }

    #[test]
    fn the_preferred_type_comes_first_then_price_then_nearness() {
        let lengths = [60.0, 60.0];
        let beds = [
            bed(60.0, 1, Some(20.0)), // a hotel right at the end
            bed(66.0, 0, Some(35.0)), // a camp site a little further, dearer
            bed(56.0, 0, Some(15.0)), // a cheaper camp site
        ];
        let nights = place_nights(120_000.0, &lengths, &beds, &RULES, &[]);
        assert_eq!(
            nights[0].night,
            Night::AtBed {
                bed: 2,
                passed_over: vec![1, 0]
            }
        );
        // Of two of one type and price, the nearer to the planned end.
        let beds = [bed(54.0, 0, None), bed(61.0, 0, None)];
        let nights = place_nights(120_000.0, &lengths, &beds, &RULES, &[]);
        assert!(matches!(nights[0].night, Night::AtBed { bed: 1, .. }));
    }

    #[test]
    fn the_days_after_a_bed_follow_from_it() {
        // Three 60 km days; night 1 at 66 km leaves 114 km for two days: night 2 near 123.
        let lengths = [60.0, 60.0, 60.0];
        let beds = [bed(66.0, 0, None), bed(123.0, 0, None), bed(120.0, 1, None)];
        let nights = place_nights(180_000.0, &lengths, &beds, &RULES, &[]);
        assert_eq!(ends(&nights), [66.0, 123.0]);
        assert!(
            (nights[1].target_m - 123_000.0).abs() < 1.0,
            "{:?}",
            nights[1]
        );
    }

    #[test]
    fn the_cap_holds_unless_the_dates_force_longer_days() {
        // Two 100 km days forced by dates over an 80 km cap: a bed at 100 km fits only then.
        let lengths = [100.0, 100.0];
        let beds = [bed(100.0, 0, None)];
        let capped = place_nights(200_000.0, &lengths, &beds, &RULES, &[]);
        assert!(matches!(capped[0].night, Night::NoBed { capped: None, .. }));
        assert_eq!(ends(&capped), [80.0], "the cap is a hard limit");
        let forced = place_nights(
            200_000.0,
            &lengths,
            &beds,
            &NightRules {
                over_cap_allowed: true,
                ..RULES
            },
            &[],
        );
        assert!(matches!(forced[0].night, Night::AtBed { bed: 0, .. }));
    }

    fn on_route(kind: &str, name: &str, km: f64) -> BedOnRoute {
        BedOnRoute {
            accommodation: Accommodation {
                name: Some(name.to_owned()),
                kind: kind.to_owned(),
                lat: 47.0,
                lon: 9.0,
                distance_to_end_m: None,
                price_min_eur: None,
                price_max_eur: None,
                exact_price: false,
                url: None,
                phone: None,
                address: None,
                source: "osm".to_owned(),
                chosen_by: None,
            },
            point_index: 0,
            along_m: km * 1000.0,
            off_route_m: 200.0,
        }
    }

    fn why_of(beds: &[BedOnRoute], types: &[AccommodationType], lengths: &[f64]) -> String {
        let (pacer, index) = pacer_beds(beds, types);
        let total: f64 = lengths.iter().sum::<f64>() * 1000.0;
        let nights = place_nights(total, lengths, &pacer, &RULES, &[]);
        let (_, note) = night_outcome(&nights[0], 0.0, &index, beds);
        note.expect("a note").why
    }

    #[test]
    fn a_night_without_a_bed_names_the_real_reason() {
        let camping = [AccommodationType::CampSite];
        // Two 80 km days under the 80 km cap: the window runs to 92 km; a camp site at
        // 86 km is in it, but the day to it is over the cap.
        let why = why_of(
            &[on_route("camp_site", "Seeblick", 86.0)],
            &camping,
            &[80.0, 80.0],
        );
        assert!(why.contains("over your daily maximum of 80 km"), "{why}");
        assert!(why.contains("Seeblick"), "{why}");
        // A hotel in the window, while the rider sleeps only at camp sites: the types.
        let why = why_of(&[on_route("hotel", "Post", 60.0)], &camping, &[60.0, 60.0]);
        assert!(
            why.contains("1 place of other types lies there (Post (hotel) at km 60)"),
            "{why}"
        );
        assert!(why.contains("enable hotel"), "{why}");
        // Nothing in the window: the window.
        let why = why_of(
            &[on_route("camp_site", "Far", 20.0)],
            &camping,
            &[60.0, 60.0],
        );
        assert!(
            why.contains("No place to sleep of your types within ±15 %"),
            "{why}"
        );
        assert!(why.contains("Far (camp site) at km 20 (before)"), "{why}");
    }

    #[test]
    fn a_reflow_keeps_fixed_nights_and_places_the_free_ones_between() {
        let lengths = [60.0, 60.0, 60.0, 60.0];
        let beds = [
            bed(58.0, 0, None),
            bed(70.0, 0, None),
            bed(112.0, 0, None),
            bed(128.0, 0, None),
            bed(182.0, 0, None),
        ];
        let before = place_nights(240_000.0, &lengths, &beds, &RULES, &[]);
        assert_eq!(ends(&before), [58.0, 112.0, 182.0]);
        // The rider chooses bed 1 for night 1 and had chosen night 3 themselves: night 2
        // re-flows from 70 km, its target the middle of the 112 km left before night 3
        // (126 km), and the bed at 128 km is within the tolerance; night 3 stays.
        let fixed = [
            Some(Fixed {
                end_m: 70_000.0,
                bed: Some(1),
            }),
            None,
            Some(Fixed {
                end_m: 182_000.0,
                bed: Some(4),
            }),
        ];
        let after = place_nights(240_000.0, &lengths, &beds, &RULES, &fixed);
        assert_eq!(ends(&after), [70.0, 128.0, 182.0]);
        assert_eq!(after[2].night, Night::Kept { bed: Some(4) });
    }

    #[test]
    fn one_day_has_no_night_and_no_bed_is_never_past_the_route() {
        assert!(place_nights(50_000.0, &[50.0], &[bed(25.0, 0, None)], &RULES, &[]).is_empty());
        let nights = place_nights(
            100_000.0,
            &[50.0, 50.0],
            &[bed(100.0, 0, None)],
            &RULES,
            &[],
        );
        assert!(matches!(nights[0].night, Night::NoBed { .. }));
    }

    /// A feasible night always lands at a bed: over random plans and beds, whenever a bed
    /// lies in the first night's window, near enough the route and within the cap (the way
    /// off included), the night is at a bed; and a night at a bed is at one that fits.
    #[test]
    fn a_feasible_night_always_lands_at_a_bed() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut unit = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..500 {
            let lengths: Vec<f64> = (0..2 + (unit() * 3.0) as usize)
                .map(|_| 20.0 + unit() * 70.0)
                .collect();
            let total_m: f64 = lengths.iter().sum::<f64>() * 1000.0;
            let beds: Vec<Bed> = (0..(unit() * 8.0) as usize)
                .map(|i| Bed {
                    along_m: unit() * total_m,
                    off_route_m: unit() * 2_500.0,
                    rank: i % 3,
                    price: None,
                })
                .collect();
            let nights = place_nights(total_m, &lengths, &beds, &RULES, &[]);
            let length_m = (lengths[0] * 1000.0).min(RULES.cap_km * 1000.0);
            let low = (length_m * (1.0 - TOLERANCE)).max(MIN_DAY_KM * 1000.0);
            let high = (length_m * (1.0 + TOLERANCE)).min(total_m);
            let fits = |b: &Bed| {
                b.along_m >= low
                    && b.along_m <= high
                    && b.along_m < total_m
                    && b.off_route_m <= MAX_OFF_ROUTE_M
                    && b.along_m + b.off_route_m <= RULES.cap_km * 1000.0
            };
            match nights[0].night {
                Night::AtBed { bed, .. } => {
                    assert!(fits(&beds[bed]), "{lengths:?} {beds:?} {:?}", nights[0]);
                }
                _ => assert!(
                    !beds.iter().any(fits),
                    "a bed fits but the night is not at one: {lengths:?} {beds:?} {:?}",
                    nights[0]
                ),
            }
        }
    }
}
