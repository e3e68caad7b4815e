//! A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
//! text exposition format at `/metrics`. Small enough to own, so no metrics stack is pulled in.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

type Labels = Vec<(&'static str, String)>;

const BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

#[derive(Debug, Default)]
struct Families {
    counters: BTreeMap<&'static str, BTreeMap<Labels, f64>>,
    gauges: BTreeMap<&'static str, BTreeMap<Labels, f64>>,
    histograms: BTreeMap<&'static str, BTreeMap<Labels, Histogram>>,
    help: BTreeMap<&'static str, &'static str>,
}

/// The registry.
#[derive(Debug, Default)]
pub struct Metrics {
    families: Mutex<Families>,
}

fn labels(pairs: &[(&'static str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
}

fn render_labels(labels: &Labels, extra: Option<(&str, String)>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", v.replace('"', "'")))
        .collect();
    if let Some((k, v)) = extra {
        parts.push(format!("{k}=\"{v}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

impl Metrics {
    fn with<R>(&self, f: impl FnOnce(&mut Families) -> R) -> R {
        f(&mut self.families.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Adds to a counter.
    pub fn inc(
        &self,
        name: &'static str,
        help: &'static str,
        pairs: &[(&'static str, &str)],
        by: f64,
    ) {
        self.with(|f| {
            f.help.insert(name, help);
            *f.counters
                .entry(name)
                .or_default()
                .entry(labels(pairs))
                .or_default() += by;
        });
    }

    /// Sets a gauge.
    pub fn set(
        &self,
        name: &'static str,
        help: &'static str,
        pairs: &[(&'static str, &str)],
        value: f64,
    ) {
        self.with(|f| {
            f.help.insert(name, help);
            f.gauges
                .entry(name)
                .or_default()
                .insert(labels(pairs), value);
        });
    }

    /// Records an observation in a histogram (seconds).
    pub fn observe(
        &self,
        name: &'static str,
        help: &'static str,
        pairs: &[(&'static str, &str)],
        value: f64,
    ) {
        self.with(|f| {
            f.help.insert(name, help);
            let h = f
                .histograms
                .entry(name)
                .or_default()
                .entry(labels(pairs))
                .or_default();
            for (i, bound) in BUCKETS.iter().enumerate() {
                if value <= *bound {
                    h.counts[i] += 1;
                }
            }
            h.sum += value;
            h.count += 1;
        });
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        self.with(|f| {
            let mut out = String::new();
            for (name, series) in &f.counters {
                let _ = writeln!(
                    out,
                    "# HELP {name} {}\n# TYPE {name} counter",
                    f.help.get(name).unwrap_or(&"")
                );
                for (l, v) in series {
                    let _ = writeln!(out, "{name}{} {v}", render_labels(l, None));
                }
            }
            for (name, series) in &f.gauges {
                let _ = writeln!(
                    out,
                    "# HELP {name} {}\n# TYPE {name} gauge",
                    f.help.get(name).unwrap_or(&"")
                );
                for (l, v) in series {
                    let _ = writeln!(out, "{name}{} {v}", render_labels(l, None));
                }
            }
            for (name, series) in &f.histograms {
                let _ = writeln!(
                    out,
                    "# HELP {name} {}\n# TYPE {name} histogram",
                    f.help.get(name).unwrap_or(&"")
                );
                for (l, h) in series {
                    for (i, bound) in BUCKETS.iter().enumerate() {
                        let _ = writeln!(
                            out,
                            "{name}_bucket{} {}",
                            render_labels(l, Some(("le", bound.to_string()))),
                            h.counts[i]
                        );
                    }
                    let _ = writeln!(
                        out,
                        "{name}_bucket{} {}",
                        render_labels(l, Some(("le", "+Inf".into()))),
                        h.count
                    );
                    let _ = writeln!(out, "{name}_sum{} {}", render_labels(l, None), h.sum);
                    let _ = writeln!(out, "{name}_count{} {}", render_labels(l, None), h.count);
                }
            }
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_text_exposition_format() {
        let m = Metrics::default();
        m.inc(
            "etappe_jobs_total",
            "Jobs by outcome.",
            &[("kind", "compute_route"), ("outcome", "completed")],
            1.0,
        );
        m.set("etappe_queue_depth", "Jobs waiting.", &[], 3.0);
        m.observe(
            "etappe_job_duration_seconds",
            "Job duration.",
            &[("kind", "x")],
            0.2,
        );
        let text = m.render();
        assert!(
            text.contains("etappe_jobs_total{kind=\"compute_route\",outcome=\"completed\"} 1"),
            "{text}"
        );
        assert!(text.contains("# TYPE etappe_queue_depth gauge\n"));
        assert!(text.contains("etappe_job_duration_seconds_bucket{kind=\"x\",le=\"0.25\"} 1"));
        assert!(text.contains("etappe_job_duration_seconds_bucket{kind=\"x\",le=\"0.1\"} 0"));
        assert!(text.contains("etappe_job_duration_seconds_count{kind=\"x\"} 1"));
    }
}
