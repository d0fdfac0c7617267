'use strict';

// Shared by the deploy-k8s*.test.js suites: where deploy/k8s and its tools
// are, its manifests parsed (by the validator's own PyYAML, the YAML 1.1
// Kubernetes reads, so no YAML parser of ours), and the seccomp profile's
// additions to a container runtime's default.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const K8S = path.join(ROOT, 'deploy', 'k8s');
const PROFILE = path.join(K8S, 'seccomp', 'cordon-host.json');
/**
 * The pinned validator (PyPI kubernetes-validate, schemas bundled), in the
 * virtualenv scripts/host-deps.sh makes; CORDON_K8S_VALIDATE_VENV overrides.
 */
const KUBERNETES_VALIDATE_VERSION = '1.37.0';
const VENV = process.env.CORDON_K8S_VALIDATE_VENV ?? `/opt/cordon-ci/kubernetes-validate-${KUBERNETES_VALIDATE_VERSION}`;

/** Every manifest file of deploy/k8s, sorted. */
function manifestFiles() {
  return fs.readdirSync(K8S).filter((name) => /\.ya?ml$/.test(name)).sort().map((name) => path.join(K8S, name));
}

/** Why the validator cannot run here, or null. */
function validatorMissing() {
  if (!fs.existsSync(path.join(VENV, 'bin', 'kubernetes-validate'))) {
    return `kubernetes-validate ${KUBERNETES_VALIDATE_VERSION} is not installed in ${VENV} (scripts/host-deps.sh installs it)`;
  }
  return null;
}

const YAML_TO_JSON = 'import json, sys, yaml\n'
  + 'print(json.dumps([[d for d in yaml.safe_load_all(open(f)) if d] for f in sys.argv[1:]]))';

/** {file: [documents]} of `files`, parsed by PyYAML. */
function parseYaml(files) {
  const run = spawnSync(path.join(VENV, 'bin', 'python'), ['-c', YAML_TO_JSON, ...files], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`PyYAML could not parse ${files.join(' ')}: ${run.stderr}`);
  const docs = JSON.parse(run.stdout);
  return Object.fromEntries(files.map((file, i) => [path.basename(file), docs[i]]));
}

/** Every resource of deploy/k8s, as [{file, resource}]. */
function resources() {
  return Object.entries(parseYaml(manifestFiles())).flatMap(([file, docs]) => docs.map((resource) => ({ file, resource })));
}

/** The one resource of `kind` named `name` (throws unless exactly one). */
function resource(kind, name) {
  const found = resources().filter(({ resource: r }) => r.kind === kind && r.metadata.name === name);
  if (found.length !== 1) throw new Error(`${found.length} ${kind}/${name} in deploy/k8s`);
  return found[0].resource;
}

/**
 * What the profile allows beyond a runtime's default: the names of its
 * unconditional SCMP_ACT_ALLOW rules other than the first (the default set).
 */
function nonDefaultSyscalls() {
  const { syscalls } = JSON.parse(fs.readFileSync(PROFILE, 'utf8'));
  return syscalls.slice(1).filter((rule) => rule.action === 'SCMP_ACT_ALLOW' && !rule.args).flatMap((rule) => rule.names);
}

module.exports = {
  K8S, PROFILE, VENV, KUBERNETES_VALIDATE_VERSION,
  manifestFiles, validatorMissing, parseYaml, resources, resource, nonDefaultSyscalls,
};
