//! What the caller asked, read strictly before anything is created: the
//! launch options, the policy (and its network part), the presets and
//! bare defaults, and the caller's host paths opened without following
//! links.

pub mod host_path;
pub mod launch_request;
pub mod network_policy;
pub mod paths;
pub mod policy;
pub mod presets;
pub mod strict_json;
