//! The committed `src/generated/perfetto.protos.rs` is what `prost-build` makes of
//! `protos/perfetto_trace_subset.proto` today (compiled by `protox`, so no system `protoc`
//! is needed). After editing the proto, regenerate with
//! `PFTRACE_REGENERATE=1 cargo test -p pftrace --test generated`.

use std::path::Path;

#[test]
fn generated_code_matches_the_protos() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let protos = root.join("protos");
    let fds = protox::compile([protos.join("perfetto_trace_subset.proto")], [&protos])
        .expect("the proto compiles");
    let out = std::env::temp_dir().join(format!("pftrace-gen-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("temp dir");
    prost_build::Config::new().out_dir(&out).compile_fds(fds).expect("prost-build");
    let fresh = std::fs::read_to_string(out.join("perfetto.protos.rs")).expect("generated file");
    let _ = std::fs::remove_dir_all(&out);
    let committed_path = root.join("src/generated/perfetto.protos.rs");
    if std::env::var_os("PFTRACE_REGENERATE").is_some() {
        std::fs::write(&committed_path, &fresh).expect("write the generated file");
        return;
    }
    let committed = std::fs::read_to_string(&committed_path).expect("committed file");
    assert!(
        committed == fresh,
        "src/generated/perfetto.protos.rs is not what prost-build makes of the protos; \
         regenerate with PFTRACE_REGENERATE=1 cargo test -p pftrace --test generated"
    );
}
