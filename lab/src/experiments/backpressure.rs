//! Not written yet.

use super::common::{Opts, XSpec};
use serde_json::Value;

pub fn run(o: &Opts) -> Result<i32, String> {
    Err(format!("experiment '{}' is not implemented in this build", o.experiment))
}

pub fn cell(spec: &XSpec) -> Result<Value, String> {
    Err(format!("experiment '{}' is not implemented in this build", spec.experiment))
}
