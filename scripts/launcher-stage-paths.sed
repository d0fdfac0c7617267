# Merge aid for issue 18 part D (drop once merged): rewrites a branch's old
# flat launcher module paths to the stage folders. Apply to the files a merge
# left failing to compile, e.g.:
#   sed -E -i -f scripts/launcher-stage-paths.sed $(git diff --name-only --diff-filter=AM main -- '*.rs')
# plan::Identity moved to host::process_identity::Identity and
# rlimits::ResourceCeilings to request::presets::ResourceCeilings (by hand).
s/\b(crate|cordon_launcher)::atomic_file\b/\1::host::atomic_file/g
s/\b(crate|cordon_launcher)::backend\b/\1::run::backend/g
s/\b(crate|cordon_launcher)::bwrap_argv\b/\1::plan::bwrap_argv/g
s/\b(crate|cordon_launcher)::cgroup\b/\1::plan::cgroup/g
s/\b(crate|cordon_launcher)::child_fds\b/\1::run::child_fds/g
s/\b(crate|cordon_launcher)::confinement\b/\1::plan::confinement/g
s/\b(crate|cordon_launcher)::control_root\b/\1::host::control_root/g
s/\b(crate|cordon_launcher)::exec_hash\b/\1::host::exec_hash/g
s/\b(crate|cordon_launcher)::execution\b/\1::run::execution/g
s/\b(crate|cordon_launcher)::host_path\b/\1::request::host_path/g
s/\b(crate|cordon_launcher)::js_number\b/\1::receipt::js_number/g
s/\b(crate|cordon_launcher)::launch_request\b/\1::request::launch_request/g
s/\b(crate|cordon_launcher)::network_plan\b/\1::plan::network_plan/g
s/\b(crate|cordon_launcher)::network_policy\b/\1::request::network_policy/g
s/\b(crate|cordon_launcher)::network_receipts\b/\1::receipt::network_receipts/g
s/\b(crate|cordon_launcher)::network_setup\b/\1::run::network_setup/g
s/\b(crate|cordon_launcher)::paths\b/\1::request::paths/g
s/\b(crate|cordon_launcher)::pidfd\b/\1::host::pidfd/g
s/\b(crate|cordon_launcher)::policy\b/\1::request::policy/g
s/\b(crate|cordon_launcher)::presets\b/\1::request::presets/g
s/\b(crate|cordon_launcher)::process_identity\b/\1::host::process_identity/g
s/\b(crate|cordon_launcher)::pumps\b/\1::run::pumps/g
s/\b(crate|cordon_launcher)::reserved_id_nss\b/\1::host::reserved_id_nss/g
s/\b(crate|cordon_launcher)::rlimits\b/\1::plan::rlimits/g
s/\b(crate|cordon_launcher)::run_identity\b/\1::plan::run_identity/g
s/\b(crate|cordon_launcher)::run_result\b/\1::receipt::run_result/g
s/\b(crate|cordon_launcher)::runtime_layout\b/\1::host::runtime_layout/g
s/\b(crate|cordon_launcher)::sealed_memfd\b/\1::plan::seccomp::sealed_memfd/g
s/\b(crate|cordon_launcher)::seccomp\b/\1::plan::seccomp/g
s/\b(crate|cordon_launcher)::spawn\b/\1::run::spawn/g
s/\b(crate|cordon_launcher)::stop_ladder\b/\1::run::stop_ladder/g
s/\b(crate|cordon_launcher)::strict_json\b/\1::request::strict_json/g
s/\b(crate|cordon_launcher)::subordinate_ids\b/\1::host::subordinate_ids/g
s/\b(crate|cordon_launcher)::supervision_runtime\b/\1::run::supervision_runtime/g
s/\b(crate|cordon_launcher)::tree_removal\b/\1::host::tree_removal/g
s/\b(crate|cordon_launcher)::uid_lease\b/\1::host::uid_lease/g
s/\b(crate|cordon_launcher)::userns_map\b/\1::host::userns_map/g
s/\b(crate|cordon_launcher)::workspace_access\b/\1::host::workspace_access/g
s/\b(crate|cordon_launcher)::workspace_owner\b/\1::host::workspace_owner/g
