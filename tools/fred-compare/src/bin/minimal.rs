//! The smallest program that reads a session record the way vmcp does (one `GETEX key EX 3600`
//! on a current-thread runtime), with exactly one client: redis-rs as crates/redis builds it
//! (`--no-default-features --features min-redis`) or fred (`--features min-fred`, or
//! `min-fred-tls` with its rustls-on-ring TLS). Built to measure what each adds to a clean
//! release build and to the stripped binary (README.md, minimal-sizes.sh).
//!
//! Usage: `minimal [host:port] [key]`; prints the value's length (0 when the key is absent).

fn main() {
    let mut args = std::env::args().skip(1);
    let address = args.next().unwrap_or_else(|| "127.0.0.1:6379".to_owned());
    let key = args.next().unwrap_or_else(|| "thv:vmcp:session:x".to_owned());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!("{}", rt.block_on(getex(&address, &key)));
}

#[cfg(all(feature = "min-redis", not(feature = "min-fred")))]
async fn getex(address: &str, key: &str) -> usize {
    let client = redis::Client::open(format!("redis://{address}/")).expect("redis URL");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let v: Option<Vec<u8>> = redis::cmd("GETEX")
        .arg(key)
        .arg("EX")
        .arg(3600)
        .query_async(&mut conn)
        .await
        .expect("GETEX");
    v.map_or(0, |v| v.len())
}

#[cfg(all(feature = "min-fred", not(feature = "min-redis")))]
async fn getex(address: &str, key: &str) -> usize {
    use fred::interfaces::ClientLike;
    let config =
        fred::types::config::Config::from_url(&format!("redis://{address}")).expect("redis URL");
    let client = fred::types::Builder::from_config(config)
        .build()
        .expect("client");
    client.init().await.expect("connect");
    let v: fred::types::Value = client
        .custom(
            fred::types::CustomCommand::new_static("GETEX", fred::types::ClusterHash::FirstKey, false),
            vec![key, "EX", "3600"],
        )
        .await
        .expect("GETEX");
    v.as_bytes().map_or(0, <[u8]>::len)
}

#[cfg(not(any(
    all(feature = "min-redis", not(feature = "min-fred")),
    all(feature = "min-fred", not(feature = "min-redis"))
)))]
async fn getex(_: &str, _: &str) -> usize {
    panic!("build with --no-default-features and one of --features min-redis, min-fred, min-fred-tls")
}
