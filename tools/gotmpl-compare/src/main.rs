//! gotmpl against crates/template (vmcp-template). See README.md.
//!
//!   gotmpl-compare conformance            Go's cases from go_behaviour.rs, both engines
//!   gotmpl-compare hostile DIR...         fuzz corpus dirs plus hand-made inputs, isolated
//!   gotmpl-compare bench [ROUNDS [N]]     render time per composite-step template
//!   gotmpl-compare one ours|gotmpl        (child mode of `hostile`)
mod bench;
mod conformance;
mod gt;
mod hostile;
mod shim;

use shim::Engine;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match args.first().map(String::as_str) {
        Some("conformance") => {
            std::panic::set_hook(Box::new(|_| {}));
            for e in [Engine::Ours, Engine::Gotmpl] {
                let cases = conformance::run(e);
                println!("{}", conformance::report(e, &cases));
            }
        }
        Some("hostile") => print!("{}", hostile::run(&args[1..])),
        Some("bench") => print!("{}", bench::run(num(1, 31), num(2, 20_000) as u32)),
        Some("one") => hostile::one(match args.get(1).map(String::as_str) {
            Some("gotmpl") => Engine::Gotmpl,
            _ => Engine::Ours,
        }),
        _ => {
            eprintln!("usage: gotmpl-compare conformance | hostile DIR... | bench [ROUNDS [N]]");
            std::process::exit(2);
        }
    }
}
