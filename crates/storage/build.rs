//! Rebuilds the crate when a migration changes: `migrate.rs` embeds the migrations at compile
//! time, and Cargo would not otherwise see a new or edited file under `migrations/`.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
