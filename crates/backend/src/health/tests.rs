use super::*;

fn down() -> BackendError {
    BackendError::Unavailable("connection refused".into())
}

fn tracker(threshold: u32, circuit: Option<(u32, Duration)>) -> HealthTracker {
    HealthTracker::new(HealthPolicy {
        unhealthy_threshold: threshold,
        circuit,
    })
}

#[test]
fn failures_below_the_threshold_degrade_and_the_threshold_withdraws() {
    let h = tracker(3, None);
    assert_eq!(h.get(), Health::Unknown);
    assert!(
        h.advertised(),
        "an unknown backend is discovered, not withdrawn"
    );
    let t = h
        .record(Outcome::Success(None))
        .expect("unknown to healthy");
    assert_eq!(
        (t.from, t.to, t.advertising_changed),
        (Health::Unknown, Health::Healthy, false)
    );
    let e = down();
    let t = h.record(Outcome::Failure(&e)).expect("healthy to degraded");
    assert_eq!(t.to, Health::Degraded);
    assert!(!t.advertising_changed);
    assert_eq!(h.record(Outcome::Failure(&e)), None, "still degraded");
    let t = h.record(Outcome::Failure(&e)).expect("threshold");
    assert_eq!((t.to, t.advertising_changed), (Health::Unhealthy, true));
    assert!(!h.advertised());
    let r = h.report();
    assert_eq!(r.consecutive_failures, 3);
    assert_eq!(
        r.last_error.as_deref(),
        Some("unavailable: connection refused")
    );
    assert!(r.last_transition.is_some() && r.last_check.is_some());
    assert_eq!(r.circuit_state, None, "no breaker configured");
}

#[test]
fn a_success_after_failures_reads_degraded_for_one_round_then_healthy() {
    let h = tracker(2, None);
    let e = down();
    h.record(Outcome::Failure(&e));
    h.record(Outcome::Failure(&e));
    assert_eq!(h.get(), Health::Unhealthy);
    let t = h.record(Outcome::Success(None)).expect("recovering");
    assert_eq!((t.to, t.advertising_changed), (Health::Degraded, true));
    assert!(h.advertised());
    assert_eq!(h.report().last_error, None);
    h.record(Outcome::Success(None));
    assert_eq!(h.get(), Health::Healthy);
}

#[test]
fn a_refused_credential_at_the_threshold_reads_unauthenticated() {
    let h = tracker(1, None);
    let e = BackendError::Auth("401".into());
    let t = h.record(Outcome::Failure(&e)).expect("transition");
    assert_eq!(t.to, Health::Unauthenticated);
    assert!(!h.advertised());
}

#[test]
fn a_slow_check_reads_degraded_and_a_slow_call_does_not() {
    let h = tracker(3, None);
    h.record(Outcome::Success(Some(
        DEGRADED_LATENCY + Duration::from_millis(1),
    )));
    assert_eq!(h.get(), Health::Degraded);
    h.record(Outcome::Success(Some(Duration::from_millis(3))));
    assert_eq!(h.get(), Health::Healthy);
    h.record(Outcome::Success(None));
    assert_eq!(h.get(), Health::Healthy);
}

#[test]
fn the_circuit_opens_fails_fast_then_one_probe_closes_it() {
    let h = tracker(10, Some((2, Duration::from_millis(50))));
    let e = down();
    assert!(h.admit().is_ok());
    h.record(Outcome::Failure(&e));
    assert!(h.admit().is_ok(), "one failure keeps it closed");
    let t = h.record(Outcome::Failure(&e)).expect("opens");
    assert!(
        t.advertising_changed,
        "an open circuit withdraws the backend"
    );
    assert_eq!(h.report().circuit_state, Some(Circuit::Open));
    let refused = h.admit().expect_err("open: fail fast");
    assert!(refused.to_string().contains("circuit open"), "{refused}");
    std::thread::sleep(Duration::from_millis(60));
    assert!(h.admit().is_ok(), "after the timeout one probe goes out");
    assert_eq!(h.report().circuit_state, Some(Circuit::HalfOpen));
    assert!(h.admit().is_err(), "only one probe at a time");
    // The probe fails: open again, for another timeout.
    h.record(Outcome::Failure(&e));
    assert_eq!(h.report().circuit_state, Some(Circuit::Open));
    assert!(h.admit().is_err());
    std::thread::sleep(Duration::from_millis(60));
    assert!(h.admit().is_ok());
    let t = h.record(Outcome::Success(None)).expect("closes");
    assert!(t.advertising_changed);
    assert_eq!(h.report().circuit_state, Some(Circuit::Closed));
    assert!(h.advertised());
}

#[test]
fn a_probe_that_never_reports_is_replaced_after_the_timeout() {
    let h = tracker(10, Some((1, Duration::from_millis(30))));
    h.record(Outcome::Failure(&down()));
    std::thread::sleep(Duration::from_millis(40));
    assert!(h.admit().is_ok(), "probe 1 (its caller then gives up)");
    assert!(h.admit().is_err());
    std::thread::sleep(Duration::from_millis(40));
    assert!(h.admit().is_ok(), "probe 2");
}

#[test]
fn a_long_error_is_cut_on_a_char_boundary() {
    let h = tracker(3, None);
    let e = BackendError::Protocol("é".repeat(400));
    h.record(Outcome::Failure(&e));
    let kept = h.report().last_error.unwrap_or_default();
    assert!(kept.len() <= MAX_ERROR_LEN + '…'.len_utf8());
    assert!(kept.ends_with('…'));
}
