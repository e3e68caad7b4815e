//! The process's metrics, each declared once here with its name, help and labels, and
//! rendered at `/metrics` in the OpenMetrics text format by `prometheus-client`. Callers
//! record through the typed families below, so a metric cannot be spelt two ways or given
//! two helps.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Job durations' bucket bounds, seconds: from a label lookup to a 1,000 km route.
const BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// A job's kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    pub kind: String,
}

/// An HTTP request: its method, the route template it matched, its status class.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HttpLabels {
    pub method: String,
    pub route: String,
    /// `2xx`, `3xx`, `4xx` or `5xx` (and `429` apart: a rate-limit refusal).
    pub status: String,
}

/// An HTTP route: its method and template.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub method: String,
    pub route: String,
}

/// An upstream call's service and outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabels {
    pub upstream: String,
    pub outcome: String,
}

/// An upstream service.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabel {
    pub upstream: String,
}

/// A request budget.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BudgetLabel {
    pub budget: String,
}

/// What build this process runs.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabels {
    pub version: String,
    pub service: String,
}

/// A job's kind and how it ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub kind: String,
    pub outcome: String,
}

fn duration_histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// The registry and its families.
pub struct Metrics {
    registry: Registry,
    /// `etappe_jobs_dispatched_total`: jobs published to the queue.
    pub jobs_dispatched: Family<KindLabel, Counter>,
    /// `etappe_jobs_total`: jobs by outcome.
    pub jobs: Family<OutcomeLabels, Counter>,
    /// `etappe_job_duration_seconds`: time a worker spent on a job.
    pub job_duration: Family<KindLabel, Histogram, fn() -> Histogram>,
    /// `etappe_dispatcher_lag_seconds`: age of the newest event the dispatcher read.
    pub dispatcher_lag: Gauge<f64, AtomicU64>,
    /// `etappe_queue_depth`: jobs waiting in the queue.
    pub queue_depth: Gauge,
    /// `etappe_dead_letter_depth`: jobs in the dead-letter queue.
    pub dead_letter_depth: Gauge,
    /// `etappe_work_resumed_total`: trips whose unfinished work the sweeper asked again.
    pub work_resumed: Counter,
    /// `etappe_dispatcher_leader`: 1 on the replica that dispatches (holds the lease), else 0.
    pub dispatcher_leader: Gauge,
    /// `etappe_http_requests_total`: requests by method, route template and status class.
    pub http_requests: Family<HttpLabels, Counter>,
    /// `etappe_http_request_duration_seconds`: time to answer, by method and route template.
    pub http_duration: Family<RouteLabels, Histogram, fn() -> Histogram>,
    /// `etappe_jobs_in_flight`: jobs this process is running now, by kind.
    pub jobs_in_flight: Family<KindLabel, Gauge>,
    /// `etappe_build_info`: 1, labelled with the version and the service.
    pub build_info: Family<BuildLabels, Gauge>,
    /// `etappe_upstream_calls_total`: calls to third parties by service and outcome.
    pub upstream_calls: Family<UpstreamLabels, Counter>,
    /// `etappe_upstream_call_duration_seconds`: their time, by service.
    pub upstream_duration: Family<UpstreamLabel, Histogram, fn() -> Histogram>,
    /// `etappe_live_streams`: live event streams open on this replica (sampled at scrape).
    pub live_streams: Gauge,
    /// `etappe_store_append_duration_seconds`: time of a command's decide-and-append.
    pub store_append: Histogram,
    /// Calls refused for a spent budget, by budget (on every transport: MCP refusals answer
    /// HTTP 200, so the HTTP status classes do not see them).
    pub rate_limited: Family<BudgetLabel, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    /// The API's metrics: jobs, the dispatcher and the sweeper, the queue as sampled.
    fn default() -> Self {
        Self::build(true)
    }
}

impl Metrics {
    /// A worker process's metrics: only what a worker knows — its jobs, and the queue as it
    /// samples it at each scrape. No dispatcher series: a worker does not dispatch, and a
    /// zero it never measured would hide a real lag from an alert.
    pub fn worker() -> Self {
        Self::build(false)
    }

    fn build(dispatches: bool) -> Self {
        let http_requests = Family::<HttpLabels, Counter>::default();
        let http_duration =
            Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
                duration_histogram,
            );
        let jobs_in_flight = Family::<KindLabel, Gauge>::default();
        let build_info = Family::<BuildLabels, Gauge>::default();
        let upstream_calls = Family::<UpstreamLabels, Counter>::default();
        let upstream_duration =
            Family::<UpstreamLabel, Histogram, fn() -> Histogram>::new_with_constructor(
                duration_histogram,
            );
        let live_streams = Gauge::default();
        let store_append = duration_histogram();
        let rate_limited = Family::<BudgetLabel, Counter>::default();
        build_info
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION").to_owned(),
                service: if dispatches {
                    "etappe"
                } else {
                    "etappe-worker"
                }
                .to_owned(),
            })
            .set(1);
        let mut registry = Registry::default();
        let jobs_dispatched = Family::<KindLabel, Counter>::default();
        let jobs = Family::<OutcomeLabels, Counter>::default();
        let job_duration = Family::<KindLabel, Histogram, fn() -> Histogram>::new_with_constructor(
            duration_histogram,
        );
        let dispatcher_lag = Gauge::<f64, AtomicU64>::default();
        let queue_depth = Gauge::default();
        let dead_letter_depth = Gauge::default();
        let work_resumed = Counter::default();
        let dispatcher_leader = Gauge::default();
        registry.register(
            "etappe_build_info",
            "The version and service this process runs (value 1)",
            build_info.clone(),
        );
        registry.register(
            "etappe_jobs_in_flight",
            "Jobs this process is running now",
            jobs_in_flight.clone(),
        );
        registry.register(
            "etappe_upstream_calls",
            "Calls to third parties (router, OpenStreetMap, elevation, weather, geocoder) by outcome",
            upstream_calls.clone(),
        );
        registry.register(
            "etappe_upstream_call_duration_seconds",
            "Time of a call to a third party",
            upstream_duration.clone(),
        );
        registry.register(
            "etappe_store_append_duration_seconds",
            "Time to decide a command and append its events",
            store_append.clone(),
        );
        if dispatches {
            registry.register(
                "etappe_rate_limited",
                "Calls refused because a budget was spent (REST 429, MCP rate_limited), by budget",
                rate_limited.clone(),
            );
            registry.register(
                "etappe_live_streams",
                "Live event streams open on this replica",
                live_streams.clone(),
            );
            registry.register(
                "etappe_http_requests",
                "HTTP requests by method, route template and status class",
                http_requests.clone(),
            );
            registry.register(
                "etappe_http_request_duration_seconds",
                "Time to answer an HTTP request, by method and route template",
                http_duration.clone(),
            );
            registry.register(
                "etappe_work_resumed",
                "Trips whose unfinished work the sweeper asked again (a dead worker, a lost job)",
                work_resumed.clone(),
            );
            registry.register(
                "etappe_dispatcher_leader",
                "1 on the replica that dispatches (holds the lease), else 0",
                dispatcher_leader.clone(),
            );
            registry.register(
                "etappe_dispatcher_lag_seconds",
                "Age of the newest event the dispatcher read (NaN on a replica that does not lead)",
                dispatcher_lag.clone(),
            );
        }
        registry.register(
            "etappe_jobs_dispatched",
            "Jobs published to the queue",
            jobs_dispatched.clone(),
        );
        registry.register("etappe_jobs", "Jobs by outcome", jobs.clone());
        registry.register(
            "etappe_job_duration_seconds",
            "Time a worker spent on a job",
            job_duration.clone(),
        );
        registry.register(
            "etappe_queue_depth",
            "Jobs waiting in the queue",
            queue_depth.clone(),
        );
        registry.register(
            "etappe_dead_letter_depth",
            "Jobs in the dead-letter queue",
            dead_letter_depth.clone(),
        );
        Self {
            registry,
            jobs_dispatched,
            jobs,
            job_duration,
            dispatcher_lag,
            queue_depth,
            dead_letter_depth,
            work_resumed,
            dispatcher_leader,
            http_requests,
            http_duration,
            jobs_in_flight,
            build_info,
            upstream_calls,
            upstream_duration,
            live_streams,
            store_append,
            rate_limited,
        }
    }

    /// Counts a call refused because `budget` was spent.
    pub fn refused_for(&self, budget: &str) {
        self.rate_limited
            .get_or_create(&BudgetLabel {
                budget: budget.to_owned(),
            })
            .inc();
    }

    /// Counts an upstream call's end and its time.
    pub fn upstream_called(&self, upstream: &str, outcome: &str, seconds: f64) {
        self.upstream_calls
            .get_or_create(&UpstreamLabels {
                upstream: upstream.to_owned(),
                outcome: outcome.to_owned(),
            })
            .inc();
        self.upstream_duration
            .get_or_create(&UpstreamLabel {
                upstream: upstream.to_owned(),
            })
            .observe(seconds);
    }

    /// Counts an answered HTTP request and its duration (RED: rate, errors, duration).
    pub fn http_answered(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let class = match status {
            429 => "429".to_owned(),
            _ => format!("{}xx", status / 100),
        };
        self.http_requests
            .get_or_create(&HttpLabels {
                method: method.to_owned(),
                route: route.to_owned(),
                status: class,
            })
            .inc();
        self.http_duration
            .get_or_create(&RouteLabels {
                method: method.to_owned(),
                route: route.to_owned(),
            })
            .observe(seconds);
    }

    /// A job of `kind` starts (`+1`) or ends (`-1`) in this process.
    pub fn job_in_flight(&self, kind: &str, delta: i64) {
        self.jobs_in_flight
            .get_or_create(&KindLabel {
                kind: kind.to_owned(),
            })
            .inc_by(delta);
    }
}

impl Metrics {
    /// Counts a job of `kind` ending as `outcome`.
    pub fn job_ended(&self, kind: &str, outcome: &str) {
        self.jobs
            .get_or_create(&OutcomeLabels {
                kind: kind.to_owned(),
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    /// Counts a job of `kind` published to the queue.
    pub fn job_dispatched(&self, kind: &str) {
        self.jobs_dispatched
            .get_or_create(&KindLabel {
                kind: kind.to_owned(),
            })
            .inc();
    }

    /// Records the time a job of `kind` took.
    pub fn job_took(&self, kind: &str, seconds: f64) {
        self.job_duration
            .get_or_create(&KindLabel {
                kind: kind.to_owned(),
            })
            .observe(seconds);
    }

    /// The OpenMetrics text exposition ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_openmetrics_text_format() {
        let m = Metrics::default();
        m.job_ended("compute_route", "completed");
        m.queue_depth.set(3);
        m.job_took("x", 0.2);
        let text = m.render();
        assert!(
            text.contains("etappe_jobs_total{kind=\"compute_route\",outcome=\"completed\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("# TYPE etappe_queue_depth gauge\n"), "{text}");
        assert!(text.contains("etappe_queue_depth 3\n"), "{text}");
        assert!(
            text.contains("etappe_job_duration_seconds_bucket{le=\"0.25\",kind=\"x\"} 1\n")
                || text.contains("etappe_job_duration_seconds_bucket{kind=\"x\",le=\"0.25\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("etappe_job_duration_seconds_count{kind=\"x\"} 1\n"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
