//! The exposition formats `/metrics` speaks and how a scrape picks one from its `Accept` header:
//! OpenMetrics 1.0 text when it is asked for, else Prometheus text 0.0.4 (what every Prometheus
//! and every older scraper reads, and what a scrape without `Accept` gets).

/// A `/metrics` page format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Prometheus text exposition format 0.0.4.
    Prometheus,
    /// OpenMetrics 1.0.0 text: `# UNIT` lines, counters typed by family name, `# EOF` at the end.
    OpenMetrics,
}

impl Format {
    /// The format to answer a scrape whose `Accept` header is `accept`: the supported media range
    /// with the highest `q` (the first listed on a tie), Prometheus text when none is supported.
    ///
    /// ```
    /// use vmcp_telemetry::Format;
    /// // What Prometheus 3 sends: protobuf first, which /metrics does not speak.
    /// let prometheus = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
    ///     encoding=delimited;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,\
    ///     text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
    /// assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
    /// assert_eq!(Format::negotiate(Some("text/plain")), Format::Prometheus);
    /// assert_eq!(Format::negotiate(None), Format::Prometheus);
    /// ```
    #[must_use]
    pub fn negotiate(accept: Option<&str>) -> Self {
        let mut best: Option<(f32, Self)> = None;
        for range in accept.unwrap_or_default().split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let (mut q, mut version) = (1.0_f32, None);
            for param in parts {
                let Some((key, value)) = param.split_once('=') else {
                    continue;
                };
                let value = value.trim().trim_matches('"');
                if key.trim().eq_ignore_ascii_case("q") {
                    q = value.parse().unwrap_or(0.0);
                } else if key.trim().eq_ignore_ascii_case("version") {
                    version = Some(value);
                }
            }
            let Some(format) = Self::serving(media, version) else {
                continue;
            };
            if q > 0.0 && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, format));
            }
        }
        best.map_or(Self::Prometheus, |(_, f)| f)
    }

    /// The format that answers `media` at `version`, if one does. OpenMetrics 0.0.1 is the same
    /// text as 1.0.0 (Prometheus asks for both); other versions are not ours to claim.
    fn serving(media: &str, version: Option<&str>) -> Option<Self> {
        let is = |m: &str| media.eq_ignore_ascii_case(m);
        if is("application/openmetrics-text") {
            matches!(version, None | Some("1.0.0" | "0.0.1")).then_some(Self::OpenMetrics)
        } else if is("text/plain") {
            matches!(version, None | Some("0.0.4")).then_some(Self::Prometheus)
        } else if is("text/*") || is("*/*") {
            Some(Self::Prometheus)
        } else {
            None
        }
    }

    /// The `Content-Type` of a page in this format.
    #[must_use]
    pub const fn content_type(self) -> &'static str {
        match self {
            Self::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Self::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Format::{self, OpenMetrics, Prometheus};

    fn pick(accept: &str) -> Format {
        Format::negotiate(Some(accept))
    }

    #[test]
    fn openmetrics_only_when_asked_for() {
        assert_eq!(pick("application/openmetrics-text"), OpenMetrics);
        assert_eq!(
            pick("application/openmetrics-text; version=1.0.0"),
            OpenMetrics
        );
        assert_eq!(
            pick("Application/OpenMetrics-Text;Version=0.0.1"),
            OpenMetrics
        );
        assert_eq!(pick("text/plain;version=0.0.4"), Prometheus);
        assert_eq!(pick("*/*"), Prometheus);
        assert_eq!(pick(""), Prometheus);
        assert_eq!(Format::negotiate(None), Prometheus);
    }

    #[test]
    fn highest_q_wins_and_unknown_versions_are_skipped() {
        assert_eq!(
            pick("text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.5"),
            Prometheus
        );
        assert_eq!(
            pick("text/plain;q=0.3,application/openmetrics-text;version=1.0.0;q=0.4"),
            OpenMetrics
        );
        assert_eq!(pick("application/openmetrics-text;q=0"), Prometheus);
        assert_eq!(
            pick("application/openmetrics-text;version=2.0.0"),
            Prometheus
        );
        // A protobuf-only scraper gets text rather than an error, as Prometheus' own clients do.
        assert_eq!(
            pick("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily"),
            Prometheus
        );
    }

    #[test]
    fn content_types() {
        assert_eq!(
            Prometheus.content_type(),
            "text/plain; version=0.0.4; charset=utf-8"
        );
        assert!(
            OpenMetrics
                .content_type()
                .starts_with("application/openmetrics-text;")
        );
    }
}
