//! Rebuilds the crate when the web client's files change: `web/dist/` is embedded at compile time
//! (`src/web/assets.rs`), and a file added there is not otherwise noticed.

fn main() {
    println!("cargo:rerun-if-changed=../../web/dist");
}
