'use strict';

// deploy/k8s, checked offline: every manifest passes the Kubernetes schemas
// of each supported version (PyPI kubernetes-validate, pinned, schemas bundled
// in the package, run in a network namespace with no interface up, so nothing
// can be fetched at run time), and the properties the deployment promises
// (deploy/k8s/README.md) are read back from the manifests themselves. What
// the pod security settings do to a real sandbox: deploy-k8s-pod.test.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const k8s = require('./deploy-k8s-support');
const { parseContainerfile } = require('./containerfile');

/** The Kubernetes versions deploy/k8s supports: README.md § Versions says why 1.33 is the floor. */
const SUPPORTED_VERSIONS = ['1.33', '1.34', '1.35', '1.36', '1.37'];
/** The gauge `cordon host` exports (crates/cli/src/host/metrics.rs) that the HPA scales on. */
const ACTIVE_SESSIONS_METRIC = 'cordon_host_active_sessions';
const CONFIG_PATH = '/etc/cordon/host.json';

// Under CI a skip is a failure: the tests run and fail on what is missing.
const option = { skip: process.env.CI ? false : k8s.validatorMissing() ?? false };

/**
 * kubernetes-validate --strict over `files` for `version`, with networking
 * cut (`unshare -rn`: a new user and network namespace, only a downed `lo`).
 * {ok, lines}: ok only when it exits 0 AND every resource printed "passed"
 * with no WARN line (it exits 0 on a kind it has no schema for).
 */
function validate(files, version) {
  const argv = [path.join(k8s.VENV, 'bin', 'kubernetes-validate'), '--strict', '-k', version, ...files];
  const run = spawnSync('/usr/bin/unshare', ['-rn', ...argv], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.error, undefined);
  const lines = `${run.stdout}${run.stderr}`.split('\n').filter(Boolean);
  const count = files.reduce((n, file) => n + Object.values(k8s.parseYaml([file]))[0].length, 0);
  const passed = lines.filter((l) => /^INFO .* passed for resource /.test(l)).length;
  return { ok: run.status === 0 && passed === count && !lines.some((l) => /^(WARN|ERROR|FATAL)/.test(l)), lines, status: run.status };
}

function scratch(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-k8s-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const deployment = () => k8s.resource('Deployment', 'cordon-host');
const podSpec = () => deployment().spec.template.spec;
const podLabels = () => deployment().spec.template.metadata.labels;
const hostContainer = () => podSpec().containers.find((c) => c.name === 'host');
const containerPort = (name) => hostContainer().ports.find((p) => p.name === name).containerPort;
const hostConfig = () => JSON.parse(k8s.resource('ConfigMap', 'cordon-host-config').data['host.json']);
const portOf = (address) => Number(address.slice(address.lastIndexOf(':') + 1));

for (const version of SUPPORTED_VERSIONS) {
  test(`every manifest of deploy/k8s passes kubernetes-validate --strict for Kubernetes ${version}, offline`, option, () => {
    const files = k8s.manifestFiles();
    assert.ok(files.length >= 7, files.join(' '));
    const result = validate(files, version);
    assert.ok(result.ok, result.lines.join('\n'));
  });
}

test('the validator\'s network namespace reaches nothing, not even a loopback server of this test', option, async (t) => {
  const server = net.createServer((socket) => socket.end());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const probe = `import socket\ntry:\n    socket.create_connection(("127.0.0.1", ${server.address().port}), timeout=5); print("connected")\nexcept OSError as e:\n    print("refused", e.errno)`;
  const outside = spawnSync(path.join(k8s.VENV, 'bin', 'python'), ['-c', probe], { encoding: 'utf8' });
  assert.equal(outside.stdout.trim(), 'connected', 'control: the server answers from this namespace');
  const inside = spawnSync('/usr/bin/unshare', ['-rn', path.join(k8s.VENV, 'bin', 'python'), '-c', probe], { encoding: 'utf8' });
  assert.match(inside.stdout.trim(), /^refused \d+$/, inside.stderr);
});

test('the validator fails a misspelled field, a kind it has no schema for, and a version it does not know', option, (t) => {
  const dir = scratch(t);
  const text = fs.readFileSync(path.join(k8s.K8S, 'deployment.yaml'), 'utf8');
  const write = (name, body) => { fs.writeFileSync(path.join(dir, name), body); return path.join(dir, name); };
  const typo = validate([write('typo.yaml', text.replace('readOnlyRootFilesystem:', 'readOnlyRootFilesytem:'))], '1.33');
  assert.equal(typo.ok, false);
  assert.ok(typo.lines.some((l) => /^ERROR .*'readOnlyRootFilesytem' was unexpected/.test(l)), typo.lines.join('\n'));
  const kind = validate([write('kind.yaml', text.replace('kind: Deployment', 'kind: Deploymnt'))], '1.33');
  assert.equal(kind.ok, false, 'a WARN about a missing schema is a failure here');
  assert.ok(kind.lines.some((l) => /^WARN .*Couldn't find schema for kind Deploymnt/.test(l)), kind.lines.join('\n'));
  const future = validate([path.join(k8s.K8S, 'pdb.yaml')], '1.99');
  assert.equal(future.ok, false);
  assert.equal(future.status, 2, future.lines.join('\n'));
});

test('the pod security fields need Kubernetes 1.30+: 1.29\'s schema refuses appArmorProfile', option, () => {
  const result = validate([path.join(k8s.K8S, 'deployment.yaml')], '1.29');
  assert.equal(result.ok, false);
  assert.ok(result.lines.some((l) => /'appArmorProfile' was unexpected/.test(l)), result.lines.join('\n'));
});

test('the NetworkPolicy allows no egress at all and ingress only from the provider and monitoring namespaces', option, () => {
  const policy = k8s.resource('NetworkPolicy', 'cordon-host').spec;
  assert.deepEqual(policy.podSelector.matchLabels, podLabels());
  assert.deepEqual([...policy.policyTypes].sort(), ['Egress', 'Ingress']);
  assert.deepEqual(policy.egress, []);
  const rules = policy.ingress.map((rule) => {
    assert.equal(rule.from.length, 1);
    assert.deepEqual(Object.keys(rule.from[0]), ['namespaceSelector'], 'a namespace only: no ipBlock, no bare podSelector');
    assert.equal(rule.ports.length, 1);
    return [rule.from[0].namespaceSelector.matchLabels['kubernetes.io/metadata.name'], rule.ports[0].port];
  });
  assert.deepEqual(rules, [['cordon-providers', containerPort('tls')], ['monitoring', containerPort('metrics')]]);
});

test('the pods get no service-account token and no service links', option, () => {
  assert.equal(podSpec().automountServiceAccountToken, false);
  assert.equal(podSpec().enableServiceLinks, false);
  const projected = (podSpec().volumes ?? []).filter((v) => v.projected?.sources?.some((s) => s.serviceAccountToken));
  assert.deepEqual(projected, []);
});

test('the host runs as non-root in a pod user namespace with every capability dropped but SETUID and SETGID', option, () => {
  const spec = podSpec();
  assert.equal(spec.hostUsers, false);
  assert.equal(spec.securityContext.runAsNonRoot, true);
  assert.ok(spec.securityContext.runAsUser > 0 && spec.securityContext.runAsGroup > 0);
  assert.deepEqual(spec.securityContext.seccompProfile, { type: 'Localhost', localhostProfile: path.basename(k8s.PROFILE) });
  assert.deepEqual(spec.securityContext.appArmorProfile, { type: 'Unconfined' }, 'README.md § AppArmor says why');
  const context = hostContainer().securityContext;
  assert.equal(context.privileged, false);
  assert.equal(context.readOnlyRootFilesystem, true);
  assert.equal(context.procMount, 'Unmasked');
  assert.deepEqual(context.capabilities, { drop: ['ALL'], add: ['SETUID', 'SETGID'] });
  assert.equal(context.allowPrivilegeEscalation, true, 'newuidmap/newgidmap\'s file capabilities (README.md)');
  for (const kind of ['requests', 'limits']) {
    for (const resource of ['cpu', 'memory', 'ephemeral-storage']) assert.ok(hostContainer().resources[kind][resource], `${kind}.${resource}`);
  }
});

test('the container runs `cordon host --config` and every probe is `cordon host --probe` with the same config, over mutual TLS', option, () => {
  const container = hostContainer();
  assert.deepEqual(container.command.slice(1), ['host', '--config', CONFIG_PATH]);
  assert.match(container.command[0], /\/cordon$/);
  const secretOf = (file) => {
    const mount = container.volumeMounts.find((m) => file.startsWith(`${m.mountPath}/`));
    return podSpec().volumes.find((v) => v.name === mount.name).secret.secretName;
  };
  for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
    const command = container[probe].exec.command;
    assert.deepEqual(command.slice(0, 5), [container.command[0], 'host', '--probe', '--config', CONFIG_PATH], probe);
    const flags = Object.fromEntries(command.slice(5).flatMap((arg, i, all) => (i % 2 === 0 ? [[arg, all[i + 1]]] : [])));
    assert.deepEqual(Object.keys(flags).sort(), ['--ca', '--cert', '--key', '--server-name'], `${probe}: mutual TLS needs a client certificate`);
    for (const flag of ['--ca', '--cert', '--key']) assert.equal(secretOf(flags[flag]), 'cordon-host-probe', `${probe} ${flag}`);
    assert.equal(flags['--server-name'], 'cordon-host.cordon-hosts.svc', 'the Service name the host certificate carries');
  }
  const mount = container.volumeMounts.find((m) => m.mountPath === CONFIG_PATH);
  assert.equal(mount.subPath, 'host.json');
  assert.equal(podSpec().volumes.find((v) => v.name === mount.name).configMap.name, 'cordon-host-config');
});

test('host.json serves mutual TLS on the pod\'s TLS port with certificates from Secrets, metrics on the metrics port', option, () => {
  const config = hostConfig();
  assert.equal(portOf(config.listen.tcp), containerPort('tls'));
  assert.equal(config.tls.clientAuth, 'required');
  assert.equal(config.tokens, undefined, 'no token in a ConfigMap');
  const secretDir = (file) => {
    const mount = hostContainer().volumeMounts.find((m) => file.startsWith(`${m.mountPath}/`));
    return podSpec().volumes.find((v) => v.name === mount.name).secret.secretName;
  };
  assert.equal(secretDir(config.tls.cert), 'cordon-host-tls');
  assert.equal(secretDir(config.tls.key), 'cordon-host-tls');
  assert.equal(secretDir(config.tls.clientCa), 'cordon-host-client-ca');
  assert.deepEqual(config.metrics, { address: '0.0.0.0', port: containerPort('metrics') }, 'the pod address: the NetworkPolicy guards it');
});

test('the HPA scales the Deployment on the per-pod active sessions, below the host\'s session cap', option, () => {
  const hpa = k8s.resource('HorizontalPodAutoscaler', 'cordon-host');
  assert.equal(hpa.apiVersion, 'autoscaling/v2');
  assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'cordon-host' });
  assert.equal(hpa.spec.metrics.length, 1);
  const [metric] = hpa.spec.metrics;
  assert.equal(metric.type, 'Pods');
  assert.equal(metric.pods.metric.name, ACTIVE_SESSIONS_METRIC);
  assert.equal(metric.pods.target.type, 'AverageValue');
  assert.ok(Number(metric.pods.target.averageValue) < hostConfig().admission.maxSessions);
  assert.ok(hpa.spec.minReplicas >= 2, 'the PodDisruptionBudget can let one go');
});

test('the Services and the PodDisruptionBudget select exactly the host pods', option, () => {
  for (const name of ['cordon-host', 'cordon-host-endpoints']) {
    const service = k8s.resource('Service', name).spec;
    assert.deepEqual(service.selector, podLabels());
    assert.deepEqual(service.ports.map((p) => [p.port, p.targetPort]), [[containerPort('tls'), 'tls']]);
  }
  assert.equal(k8s.resource('Service', 'cordon-host-endpoints').spec.clusterIP, 'None');
  const pdb = k8s.resource('PodDisruptionBudget', 'cordon-host').spec;
  assert.deepEqual(pdb.selector.matchLabels, podLabels());
  assert.equal(pdb.maxUnavailable, 1);
  for (const { resource: r } of k8s.resources().filter(({ resource: x }) => x.kind !== 'Namespace')) {
    assert.equal(r.metadata.namespace, 'cordon-hosts', `${r.kind}/${r.metadata.name}`);
  }
});

/** Never allowed to the hosts: kernel-exploit primitives, host administration, the new mount API bwrap does not use. */
const DENIED = ['bpf', 'perf_event_open', 'userfaultfd', 'keyctl', 'add_key', 'request_key', 'ptrace', 'process_vm_readv',
  'process_vm_writev', 'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module', 'open_by_handle_at',
  'name_to_handle_at', 'syslog', 'reboot', 'swapon', 'swapoff', 'acct', 'settimeofday', 'clock_settime', 'clock_adjtime',
  'adjtimex', 'io_uring_setup', 'io_uring_enter', 'fsopen', 'fsmount', 'fsconfig', 'fspick', 'open_tree', 'move_mount',
  'mount_setattr', 'quotactl', 'lookup_dcookie', 'iopl', 'ioperm', 'chroot', 'fanotify_init', 'vhangup', 'mbind',
  'set_mempolicy', 'move_pages', 'migrate_pages', 'modify_ldt', 'pidfd_getfd', 'kcmp'];

test('the seccomp profile denies by default and never allows an exploit primitive or host administration', () => {
  const profile = JSON.parse(fs.readFileSync(k8s.PROFILE, 'utf8'));
  assert.equal(profile.defaultAction, 'SCMP_ACT_ERRNO');
  assert.equal(profile.defaultErrnoRet, 1, 'EPERM');
  const allowed = profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW').flatMap((r) => r.names);
  assert.deepEqual(DENIED.filter((name) => allowed.includes(name)), []);
  const unconditional = profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args).flatMap((r) => r.names);
  assert.equal(new Set(unconditional).size, unconditional.length, 'no name listed twice');
  assert.deepEqual(profile.syscalls.find((r) => r.names.includes('clone3')), {
    names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: 38, comment: profile.syscalls.find((r) => r.names.includes('clone3')).comment,
  }, 'clone3 is ENOSYS: its flags cannot be filtered, glibc falls back to clone');
  const conditionalClone = profile.syscalls.find((r) => r.names.includes('clone') && r.args);
  assert.deepEqual(conditionalClone.args, [{ index: 0, value: 0x7E020000, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }]);
  for (const rule of profile.syscalls.slice(1)) assert.ok(rule.comment, `rule ${rule.names} says why`);
});

test('every syscall the profile names exists on x86_64 or aarch64 (no typo silently allows nothing)', option, () => {
  const names = JSON.parse(fs.readFileSync(k8s.PROFILE, 'utf8')).syscalls.flatMap((r) => r.names);
  const script = 'import json, sys, seccomp\n'
    + 'def known(n):\n'
    + '    for a in (seccomp.Arch.X86_64, seccomp.Arch.AARCH64):\n'
    + '        try:\n'
    + '            if seccomp.resolve_syscall(a, n) >= 0: return True\n'
    + '        except (ValueError, RuntimeError): pass\n'
    + '    return False\n'
    + 'print(json.dumps([n for n in json.loads(sys.argv[1]) if not known(n)]))';
  const run = spawnSync('/usr/bin/python3', ['-c', script, JSON.stringify([...names, 'not_a_syscall'])], { encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stderr} (python3-seccomp: scripts/host-deps.sh)`);
  assert.deepEqual(JSON.parse(run.stdout), ['not_a_syscall']);
});

test('README.md documents each syscall the profile adds to the default and applies every manifest', () => {
  const readme = fs.readFileSync(path.join(k8s.K8S, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('<!-- non-default syscalls -->'), readme.indexOf('<!-- /non-default syscalls -->'));
  const documented = [...section.matchAll(/^\| `([a-z0-9_]+)`/gm)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), k8s.nonDefaultSyscalls().sort());
  const order = readme.slice(readme.indexOf('<!-- apply order -->'), readme.indexOf('<!-- /apply order -->'));
  const applied = [...order.matchAll(/kubectl apply -f deploy\/k8s\/([a-z-]+\.yaml)/g)].map((m) => m[1]);
  assert.deepEqual([...applied].sort(), k8s.manifestFiles().map((f) => path.basename(f)));
  assert.equal(applied[0], 'namespace.yaml');
});

// deploy/k8s/Containerfile: not built here (no container runtime, no base
// images); parsed offline (./containerfile.js) and held to the manifests.
const CONTAINERFILE = path.join(k8s.K8S, 'Containerfile');
const ROOT = path.join(k8s.K8S, '..', '..');
const containerfile = (text = fs.readFileSync(CONTAINERFILE, 'utf8')) => parseContainerfile(text);
const of = (stage, keyword) => stage.instructions.filter((i) => i.keyword === keyword);

/** What the image must hold, checked against `stages`; throws the first mismatch. */
function checkImage(stages) {
  assert.equal(stages.length, 2, 'a build stage and the runtime');
  const [build, runtime] = stages;
  // Build: the workspace's own toolchain version, on the runtime's Debian.
  const rustVersion = /^rust-version = "([\d.]+)"$/m.exec(fs.readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8'))[1];
  assert.equal(build.image, `docker.io/library/rust:${rustVersion}-bookworm`);
  assert.equal(runtime.image, 'docker.io/library/debian:12-slim');
  assert.equal(runtime.name, null);
  // Every COPY from the build context names something in the repository.
  for (const copy of stages.flatMap((s) => of(s, 'COPY')).filter((c) => !c.flags.from)) {
    for (const source of copy.sources) {
      assert.ok(fs.existsSync(path.join(ROOT, source)), `line ${copy.line}: COPY ${source}: not in the repository`);
    }
  }
  // What the build stage builds: cargo's --release outputs of the named packages' binaries.
  const cargo = of(build, 'RUN').map((r) => r.command).find((c) => /^cargo build /.test(c));
  assert.ok(cargo, 'the build stage runs cargo build');
  assert.match(cargo, /--release --locked/);
  const packages = [...cargo.matchAll(/-p (\S+)/g)].map((m) => m[1]);
  const built = new Set(packages.flatMap((name) => {
    const manifest = fs.readdirSync(path.join(ROOT, 'crates')).map((d) => path.join(ROOT, 'crates', d, 'Cargo.toml'))
      .find((file) => fs.existsSync(file) && new RegExp(`^name = "${name}"$`, 'm').test(fs.readFileSync(file, 'utf8')));
    assert.ok(manifest, `cargo -p ${name}: no such package`);
    return [...fs.readFileSync(manifest, 'utf8').matchAll(/\[\[bin\]\]\s*name = "([^"]+)"/g)].map((m) => `/src/target/release/${m[1]}`);
  }));
  assert.equal(of(build, 'WORKDIR')[0]?.rest, '/src');
  const installed = {};
  for (const copy of of(runtime, 'COPY')) {
    assert.equal(copy.flags.from, 'build', `line ${copy.line}: the runtime copies only from the build stage`);
    assert.deepEqual(copy.sources.filter((s) => !built.has(s)), [], `line ${copy.line}: not built by ${cargo}`);
    installed[copy.destination] = copy.sources[0];
  }
  // The programs the manifests run are in the image.
  const container = hostContainer();
  const config = hostConfig();
  assert.ok(installed[container.command[0]], `${container.command[0]} (the container's command) is not copied in`);
  assert.equal(installed[container.command[0]], '/src/target/release/cordon');
  // The starter beside it, where `cordon host` looks (its gate is on).
  const relay = path.join(path.dirname(container.command[0]), 'cordon-egress-relay');
  assert.equal(installed[relay], '/src/target/release/cordon-egress-relay', `${relay} (every sandbox's starter) is not copied in`);
  for (const [name, program] of Object.entries(config.programs)) {
    assert.equal(installed[program], `/src/target/release/${name}`, `host.json program ${name}`);
  }
  // bubblewrap and uidmap from Debian; bwrap where host.json says; the
  // helpers' file capabilities; the subordinate range README.md names.
  const setup = of(runtime, 'RUN').map((r) => r.command).join('\n');
  assert.match(setup, /apt-get install -y --no-install-recommends [^&]*\bbubblewrap\b/);
  assert.match(setup, /apt-get install -y --no-install-recommends [^&]*\buidmap\b/);
  assert.equal(config.bwrapPath, '/usr/bin/bwrap', 'Debian\'s bubblewrap path');
  assert.match(setup, /test ! -u \/usr\/bin\/bwrap/);
  assert.match(setup, /setcap cap_setuid=ep \/usr\/bin\/newuidmap/);
  assert.match(setup, /setcap cap_setgid=ep \/usr\/bin\/newgidmap/);
  const readme = fs.readFileSync(path.join(k8s.K8S, 'README.md'), 'utf8');
  const range = /`\/etc\/subuid` and `\/etc\/subgid` both\s+hold `([\d:]+)`/.exec(readme)[1];
  assert.match(setup, new RegExp(`echo '${range}' > /etc/subuid`));
  assert.match(setup, new RegExp(`echo '${range}' > /etc/subgid`));
  assert.match(setup, new RegExp(`install -d -o 65532 -g 65532 -m 0700 ${config.stateDir}\\b`));
  // Non-root, the pod's user; the container's command; the probe.
  const context = podSpec().securityContext;
  assert.deepEqual(of(runtime, 'USER').map((u) => u.rest), [`${context.runAsUser}:${context.runAsGroup}`]);
  assert.notEqual(context.runAsUser, 0);
  const entrypoint = of(runtime, 'ENTRYPOINT');
  const cmd = of(runtime, 'CMD');
  assert.equal(entrypoint.length, 1);
  assert.equal(entrypoint[0].form, 'exec');
  assert.deepEqual([...entrypoint[0].command, ...cmd[0].command], container.command);
  const health = of(runtime, 'HEALTHCHECK');
  assert.equal(health.length, 1);
  assert.deepEqual(health[0].command, container.livenessProbe.exec.command);
  assert.deepEqual(of(runtime, 'EXPOSE').flatMap((e) => e.ports).sort(), container.ports.map((p) => p.containerPort).sort());
  // The image name and version the Deployment pulls, and the build command that tags it.
  const labels = Object.assign({}, ...of(runtime, 'LABEL').map((l) => l.labels));
  const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
  assert.equal(labels['org.opencontainers.image.version'], version);
  assert.equal(container.image, `${labels['org.opencontainers.image.title']}:${version}`);
}

test('deploy/k8s/Containerfile, parsed offline: its COPY sources exist, and its programs, user, command, probe and image name match the manifests', option, () => {
  checkImage(containerfile());
  const text = fs.readFileSync(CONTAINERFILE, 'utf8');
  assert.match(text, new RegExp(`podman build -f deploy/k8s/Containerfile -t ${hostContainer().image.replace(/\./g, '\\.')} \\.\\n`));
});

test('the Containerfile check fails a missing COPY source, a program not copied, the starter elsewhere, a root user, another command and a parse error', option, () => {
  const text = fs.readFileSync(CONTAINERFILE, 'utf8');
  const broken = (from, to, expected) => {
    assert.ok(text.includes(from), from);
    assert.throws(() => checkImage(containerfile(text.replace(from, to))), expected);
  };
  broken('COPY crates ./crates', 'COPY crate ./crates', /COPY crate: not in the repository/);
  broken('/usr/local/lib/cordon/cordon-runner\n', '/usr/local/lib/cordon/runner\n', /host.json program cordon-runner/);
  broken('/usr/local/bin/cordon-egress-relay\n', '/usr/local/lib/cordon/cordon-egress-relay\n', /every sandbox's starter/);
  broken('USER 65532:65532', 'USER 0:0', assert.AssertionError);
  broken('CMD ["--config", "/etc/cordon/host.json"]', 'CMD ["--config", "/etc/host.json"]', assert.AssertionError);
  broken('-p cordon-runner', '-p cordon-runnr', /no such package/);
  broken('debian:12-slim', 'debian:12', assert.AssertionError);
  broken('org.opencontainers.image.version="0.1.0"', 'org.opencontainers.image.version="0.2.0"', assert.AssertionError);
  assert.throws(() => containerfile(text.replace('EXPOSE 7443', 'EXPOSES 7443')), /unknown instruction EXPOSES/);
  assert.throws(() => containerfile(`${text.trimEnd()} \\\n`), /continued past the end/);
  assert.throws(() => containerfile(text.replace('ENTRYPOINT ["/usr/local/bin/cordon", "host"]', 'ENTRYPOINT ["/usr/local/bin/cordon", host]')), /not a JSON array/);
  assert.throws(() => containerfile(text.replace('COPY --from=build', 'COPY --form=build')), /--form is not known/);
});
