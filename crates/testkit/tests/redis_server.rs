//! The test Redis: a restart whose port is held for a moment by another socket is retried,
//! readiness means a Redis answering PING, not any listener on the port, and a persistent one
//! keeps its keys across a kill.

use std::time::Duration;

use vmcp_testkit::RedisServer;

#[test]
fn a_restart_waits_out_a_port_held_by_another_listener() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    redis.kill();
    let squatter = std::net::TcpListener::bind(("127.0.0.1", redis.port())).unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        drop(squatter);
    });
    redis.restart();
    release.join().unwrap();
    assert_eq!(redis.cli(&["PING"]).trim(), "PONG");
}

#[test]
fn a_persistent_redis_keeps_its_keys_across_a_kill() {
    let Some(mut redis) = RedisServer::start_persistent() else {
        return;
    };
    assert_eq!(redis.cli(&["SET", "kept", "yes"]).trim(), "OK");
    redis.kill();
    redis.restart();
    assert_eq!(redis.cli(&["GET", "kept"]).trim(), "yes");
}
