//! Links the addon as Node-API expects (symbols resolved by the runtime that loads it).

fn main() {
    napi_build::setup();
}
