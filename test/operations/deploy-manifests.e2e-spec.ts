import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { SHUTDOWN_DEADLINE_MS } from '@app/runtime';

/**
 * Everything under deploy/ that needs no cluster: deploy/validate-manifests.mjs renders every overlay
 * with kubectl kustomize, validates each object against the Kubernetes, KEDA and prometheus-operator
 * schemas and runs promtool check/test rules. Here it must pass on the repository and fail on copies
 * broken on purpose; and the rendered objects must keep the properties the service relies on.
 */
jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
const OVERLAYS = ['base', 'overlays/small', 'overlays/large'];

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  // Read field by field below; their shape is what the validator's schemas check.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
  data?: Record<string, string>;
}

function validate(deployDir = join(ROOT, 'deploy')): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [join(ROOT, 'deploy/validate-manifests.mjs'), deployDir], { cwd: ROOT, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function render(overlay: string): K8sObject[] {
  const output = execFileSync('kubectl', ['kustomize', overlay], { cwd: join(ROOT, 'deploy/kubernetes'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return parseAllDocuments(output).map((document) => document.toJS() as K8sObject);
}

/** A copy of deploy/ with one file edited; removed after the test. */
function brokenCopy(file: string, edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'deploy-broken-'));
  cpSync(join(ROOT, 'deploy'), dir, { recursive: true });
  const path = join(dir, file);
  const before = readFileSync(path, 'utf8');
  const after = edit(before);
  expect(after).not.toBe(before);
  writeFileSync(path, after);
  return dir;
}

const copies: string[] = [];
afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

it('renders every overlay, validates every object and passes promtool', () => {
  const { status, output } = validate();
  expect(output).toContain('deploy manifests: valid');
  expect(status).toBe(0);
  for (const overlay of OVERLAYS) expect(output).toMatch(new RegExp(`^${overlay}: \\d+ objects .*ScaledObject.*PrometheusRule`, 'm'));
  expect(output).toContain('promtool check rules alerts.yml: ok');
  expect(output).toContain('promtool test rules alerts.test.yml: ok');
});

it.each([
  ['a field of the wrong type', 'kubernetes/base/config-api.yaml', (text: string) => text.replace('containerPort: 3000 }', 'containerPort: "3000x" }'), /Deployment config-api: .*containerPort/],
  ['a KEDA field of the wrong type', 'kubernetes/base/monitoring.yaml', (text: string) => text.replace('minReplicaCount: 2', 'minReplicaCount: two'), /ScaledObject delivery-worker: .*minReplicaCount/],
  ['a prometheus-operator field of the wrong type', 'kubernetes/base/monitoring.yaml', (text: string) => text.replace('interval: 15s', 'interval: [15s]'), /ServiceMonitor event-callbacks: .*interval/],
  ['a kind without a schema', 'kubernetes/base/namespace.yaml', (text: string) => text.replace('kind: Namespace', 'kind: Namespaze'), /no schema for v1 Namespaze/],
  ['a resource file that does not exist', 'kubernetes/base/kustomization.yaml', (text: string) => text.replace('  - ingest.yaml\n', '  - ingest.yaml\n  - missing.yaml\n'), /base: kubectl kustomize failed/],
  ['an overlay patching an object that is not there', 'kubernetes/overlays/small/sizes.yaml', (text: string) => text.replace('name: ingest\nspec:\n  minReplicas', 'name: ingest-typo\nspec:\n  minReplicas'), /overlays\/small: kubectl kustomize failed/],
  ['an alert that no longer fires as its test expects', 'prometheus/alerts.yml', (text: string) => text.replace('max(callback_backlog_oldest_due_seconds) > 600', 'max(callback_backlog_oldest_due_seconds) > 6000'), /promtool test rules alerts.test.yml: [\s\S]*CallbackDeliveryLate/],
  ['datastore ports open to all of 10/8', 'kubernetes/base/network-policies.yaml', (text: string) => text.replace('cidr: 10.0.0.10/32', 'cidr: 10.0.0.0/8'), /NetworkPolicy datastores: datastore ports open to 10.0.0.0\/8/],
  ['a pod reading another app\'s Secret', 'kubernetes/base/delivery-worker.yaml', (text: string) => text.replace('secretRef: { name: delivery-worker-secrets }', 'secretRef: { name: config-api-secrets }'), /Deployment delivery-worker reads the Secret config-api-secrets/],
  ['config-api serving /metrics on its public port (no METRICS_PORT)', 'kubernetes/base/config-api.yaml', (text: string) => text.replace('            - { name: METRICS_PORT, value: "9464" }\n', ''), /Deployment config-api: METRICS_PORT is not set to a port, so \/metrics is served on its public port/],
  ['a METRICS_PORT apart from the declared metrics port', 'kubernetes/base/ingest.yaml', (text: string) => text.replace('{ name: METRICS_PORT, value: "9464" }', '{ name: METRICS_PORT, value: "9465" }'), /Deployment ingest: METRICS_PORT 9465 is not its container port named metrics \(9464\)/],
  ['a Service without the metrics port', 'kubernetes/base/delivery-worker.yaml', (text: string) => text.replace('    - { name: metrics, port: 9464, targetPort: metrics }\n', ''), /Service delivery-worker: no port named metrics/],
  ['a ServiceMonitor scraping the public port', 'kubernetes/base/monitoring.yaml', (text: string) => text.replace('    - port: metrics', '    - port: http'), /ServiceMonitor event-callbacks: scrapes http; it must scrape the port named metrics only/],
  ['an alert expression that does not parse', 'prometheus/alerts.yml', (text: string) => text.replace('max(callbacks_endpoints_disabled) > 5', 'max(callbacks_endpoints_disabled > 5'), /promtool check rules alerts.yml: /],
])('fails on %s', (_what, file, edit, problem) => {
  const dir = brokenCopy(file, edit);
  copies.push(dir);
  const { status, output } = validate(dir);
  expect(status).toBe(1);
  expect(output).toMatch(problem);
  expect(output).not.toContain('deploy manifests: valid');
});

it('fails when the PrometheusRule and alerts.yml differ', () => {
  const dir = brokenCopy('prometheus/alerts.yml', (text) => text.replace('for: 15m', 'for: 16m'));
  copies.push(dir);
  const { status, output } = validate(dir);
  expect(status).toBe(1);
  expect(output).toMatch(/PrometheusRule event-callbacks: its groups differ from deploy\/prometheus\/alerts.yml/);
});

describe.each(OVERLAYS)('%s', (overlay) => {
  const objects = render(overlay);
  const ofKind = (kind: string): K8sObject[] => objects.filter((object) => object.kind === kind);
  /** A generated Secret by its name before kustomize's hash suffix. */
  const secretNamed = (name: string): K8sObject => {
    const found = ofKind('Secret').find((object) => object.metadata.name.replace(/-[a-z0-9]{10}$/, '') === name);
    if (!found) throw new Error(`${overlay} has no Secret ${name}`);
    return found;
  };
  const named = (kind: string, name: string): K8sObject => {
    const found = ofKind(kind).find((object) => object.metadata.name === name);
    if (!found) throw new Error(`${overlay} has no ${kind} ${name}`);
    return found;
  };

  it.each(['config-api', 'ingest', 'delivery-worker'])('runs %s probed, non-root, read-only, migrated first, with settings and secrets', (app) => {
    const pod = named('Deployment', app).spec.template.spec;
    const [container] = pod.containers;
    expect(container.livenessProbe.httpGet.path).toBe('/health/live');
    expect(container.readinessProbe.httpGet.path).toBe('/health/ready');
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(container.resources.requests).toEqual(expect.objectContaining({ cpu: expect.any(String), memory: expect.any(String) }));
    expect(container.resources.limits.memory).toEqual(expect.any(String));
    const configMap = ofKind('ConfigMap')[0].metadata.name;
    const secret = secretNamed(`${app}-secrets`).metadata.name;
    expect(container.envFrom).toEqual([{ configMapRef: { name: configMap } }, { secretRef: { name: secret } }]);
    // The migration before it reads the database URL of the app's Secret, nothing else.
    expect(pod.initContainers.map((init: { env: unknown }) => init.env)).toEqual([[{ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: secret, key: 'DATABASE_URL' } } }]]);
    expect(pod.initContainers.map((init: { command: string[] }) => init.command)).toEqual([['node', 'dist/scripts/migrate.js']]);
    // The kubelet's SIGKILL must come after the app's own shutdown deadline.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(SHUTDOWN_DEADLINE_MS + (container.lifecycle?.preStop ? 5000 : 0));
    const budgets = ofKind('PodDisruptionBudget').filter((budget) => budget.spec.selector.matchLabels['app.kubernetes.io/name'] === app);
    expect(budgets).toHaveLength(1);
  });

  it.each(['config-api', 'ingest', 'delivery-worker'])('serves %s metrics on METRICS_PORT, a port of its own that Prometheus alone scrapes', (app) => {
    const [container] = named('Deployment', app).spec.template.spec.containers;
    expect(container.env).toContainEqual({ name: 'METRICS_PORT', value: '9464' });
    expect(container.ports).toEqual(expect.arrayContaining([{ name: 'metrics', containerPort: 9464 }]));
    expect(container.ports.find((port: { name: string }) => port.name === 'http').containerPort).not.toBe(9464);
    expect(named('Service', app).spec.ports).toContainEqual({ name: 'metrics', port: 9464, targetPort: 'metrics' });
    expect(named('ServiceMonitor', 'event-callbacks').spec.endpoints.map((endpoint: { port: string }) => endpoint.port)).toEqual(['metrics']);
  });

  it('scales config-api and ingest on CPU, and the worker on the backlog within bounds', () => {
    for (const app of ['config-api', 'ingest']) {
      const autoscaler = named('HorizontalPodAutoscaler', app).spec;
      expect(autoscaler.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: app });
      expect(autoscaler.metrics).toEqual([expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) })]);
      expect(autoscaler.minReplicas).toBeLessThanOrEqual(autoscaler.maxReplicas);
    }
    const scaled = named('ScaledObject', 'delivery-worker').spec;
    expect(scaled.scaleTargetRef.name).toBe('delivery-worker');
    expect(scaled.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(scaled.maxReplicaCount).toBeGreaterThan(scaled.minReplicaCount);
    expect(scaled.triggers.map((trigger: { metadata: { query: string } }) => trigger.metadata.query)).toEqual([
      expect.stringMatching(/^max\(callback_backlog_events\{[^}]*\}\)$/),
      expect.stringMatching(/^max\(callback_backlog_oldest_due_seconds\{[^}]*\}\)$/),
    ]);
  });

  it('keeps the callers off private ranges and carries the secrets and datastore settings', () => {
    const egress = named('NetworkPolicy', 'outbound-callers').spec;
    expect(egress.podSelector.matchExpressions[0].values.sort()).toEqual(['delivery-worker', 'ingest']);
    const internet = egress.egress.flatMap((rule: { to: { ipBlock?: { cidr: string; except?: string[] } }[] }) => rule.to).find((peer: { ipBlock?: { cidr: string } }) => peer.ipBlock?.cidr === '0.0.0.0/0');
    expect(internet.ipBlock.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8', '100.64.0.0/10']));
    const keysOf = (name: string): string[] => Object.keys(secretNamed(name).data ?? {}).sort();
    const datastores = ['DATABASE_URL', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD', 'REDIS_URL', 'REDIS_USERNAME', 'SECRETS_KEY'];
    expect(keysOf('config-api-secrets')).toEqual(['ADMIN_TOKEN', ...datastores].sort());
    expect(keysOf('ingest-secrets')).toEqual(['INGEST_TOKEN', ...datastores].sort());
    expect(keysOf('delivery-worker-secrets')).toEqual(datastores);
    expect(keysOf('migrate-secrets')).toEqual(['DATABASE_URL']);
    expect(ofKind('Secret')).toHaveLength(4);
    // The datastores only at their own addresses, never a private range as a whole.
    const datastorePeers = named('NetworkPolicy', 'datastores').spec.egress.filter((rule: { ports: { port: number }[] }) => rule.ports.some((port) => port.port !== 53));
    for (const peer of datastorePeers.flatMap((rule: { to: unknown[] }) => rule.to)) expect(peer).toEqual({ ipBlock: { cidr: expect.stringMatching(/\/32$/) } });
    expect(Object.keys(ofKind('ConfigMap')[0].data ?? {})).toEqual(expect.arrayContaining(['REDIS_CLUSTER_NODES', 'REDIS_SENTINELS', 'DELIVERY_QUEUE_SHARDS', 'BLOCKED_TARGET_RANGES']));
  });
});
