// Validates everything under deploy/ that needs no cluster, and exits 1 on the first class of problem
// it finds (after reporting them all):
//  - `kubectl kustomize` renders the base and every overlay;
//  - every rendered object passes the schema of its kind (kubernetes-models, @kubernetes-models/keda,
//    @kubernetes-models/prometheus-operator); a kind without a schema here is an error, not a pass;
//  - the PrometheusRule carries exactly the groups of deploy/prometheus/alerts.yml;
//  - a NetworkPolicy egress rule to a datastore port (PostgreSQL, Redis, Sentinel, OTLP) names single
//    addresses (/32, /128), never a range such as 10.0.0.0/8 or a whole namespace;
//  - no Deployment or Job reads a Secret meant for another app (its own `<app>-secrets` only);
//  - every app serves /metrics off its public port: its Deployment sets METRICS_PORT to a port of its
//    own, declared as the container port `metrics`; its Service carries that port as `metrics`; and
//    the ServiceMonitor scrapes `metrics`, never `http`;
//  - `promtool check rules` and `promtool test rules` pass, and so does `promtool check config` on
//    deploy/prometheus.yml (the compose scrape configuration, which loads the same rules).
// Usage: node deploy/validate-manifests.mjs [deploy directory]   (default: the one beside this file)
// KUBECTL=/path/to/kubectl picks another kubectl (e.g. Debian's 1.20, to check the old kustomize too).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments, parse } from 'yaml';
import * as core from 'kubernetes-models/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as batch from 'kubernetes-models/batch/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as autoscaling from 'kubernetes-models/autoscaling/v2';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as monitoring from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

const modelsByApiVersion = {
  v1: core,
  'apps/v1': apps,
  'batch/v1': batch,
  'policy/v1': policy,
  'autoscaling/v2': autoscaling,
  'networking.k8s.io/v1': networking,
  'keda.sh/v1alpha1': keda,
  'monitoring.coreos.com/v1': monitoring,
};

const deployDir = resolve(process.argv[2] ?? dirname(fileURLToPath(import.meta.url)));
const kubernetesDir = join(deployDir, 'kubernetes');
const prometheusDir = join(deployDir, 'prometheus');
const problems = [];

function run(command, args, cwd) {
  try {
    return { ok: true, output: execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (error) {
    if (error.code === 'ENOENT') return { ok: false, output: `${command} is not installed` };
    return { ok: false, output: `${error.stdout ?? ''}${error.stderr ?? ''}`.trim() };
  }
}

function validateObject(where, object) {
  const name = `${where}: ${object?.kind ?? '?'} ${object?.metadata?.name ?? '?'}`;
  const Model = modelsByApiVersion[object?.apiVersion]?.[object?.kind];
  if (!Model) return problems.push(`${name}: no schema for ${object?.apiVersion} ${object?.kind}`);
  try {
    new Model(object).validate();
  } catch (error) {
    problems.push(`${name}: ${error.message}`);
  }
}

const DATASTORE_PORTS = new Set([5432, 6379, 26379, 4318]);

function checkDatastoreEgress(where, object) {
  if (object.kind !== 'NetworkPolicy') return;
  for (const rule of object.spec?.egress ?? []) {
    if (!(rule.ports ?? []).some((port) => DATASTORE_PORTS.has(port.port))) continue;
    for (const peer of rule.to ?? [{}]) {
      const cidr = peer.ipBlock?.cidr;
      if (!cidr || !/\/(32|128)$/.test(cidr) || peer.ipBlock.except?.length) {
        problems.push(`${where}: NetworkPolicy ${object.metadata.name}: datastore ports open to ${cidr ?? 'a selector, not an address'}; name each datastore's own address (/32 or /128)`);
      }
    }
  }
}

/** The Secrets a pod template reads, by their name before kustomize's hash suffix. */
function secretsRead(podSpec) {
  const names = new Set();
  for (const container of [...(podSpec?.initContainers ?? []), ...(podSpec?.containers ?? [])]) {
    for (const source of container.envFrom ?? []) if (source.secretRef) names.add(source.secretRef.name);
    for (const variable of container.env ?? []) if (variable.valueFrom?.secretKeyRef) names.add(variable.valueFrom.secretKeyRef.name);
  }
  return [...names].map((name) => name.replace(/-[a-z0-9]{10}$/, ''));
}

function checkOwnSecrets(where, object) {
  if (object.kind !== 'Deployment' && object.kind !== 'Job') return;
  const app = object.spec?.template?.metadata?.labels?.['app.kubernetes.io/name'] ?? object.metadata.name;
  for (const secret of secretsRead(object.spec?.template?.spec)) {
    if (secret !== `${app}-secrets`) problems.push(`${where}: ${object.kind} ${object.metadata.name} reads the Secret ${secret}; each app reads only ${app}-secrets`);
  }
}

const APPS = ['config-api', 'ingest', 'delivery-worker'];

/** Per overlay: each app's Deployment, Service and the ServiceMonitor agree on a metrics port apart from http. */
function checkMetricsPorts(where, objects) {
  const named = (kind, name) => objects.find((object) => object.kind === kind && object.metadata?.name === name);
  for (const app of APPS) {
    const container = named('Deployment', app)?.spec?.template?.spec?.containers?.find((candidate) => candidate.name === app);
    if (!container) {
      problems.push(`${where}: Deployment ${app}: no container named ${app}`);
      continue;
    }
    const setting = (container.env ?? []).find((variable) => variable.name === 'METRICS_PORT')?.value;
    const ports = Object.fromEntries((container.ports ?? []).map((port) => [port.name, port.containerPort]));
    if (!/^[1-9][0-9]*$/.test(setting ?? '')) {
      problems.push(`${where}: Deployment ${app}: METRICS_PORT is not set to a port, so /metrics is served on its public port`);
    } else if (ports.metrics !== Number(setting)) {
      problems.push(`${where}: Deployment ${app}: METRICS_PORT ${setting} is not its container port named metrics (${ports.metrics ?? 'none'})`);
    } else if (ports.metrics === ports.http) {
      problems.push(`${where}: Deployment ${app}: its metrics port is its http port`);
    }
    const servicePort = named('Service', app)?.spec?.ports?.find((port) => port.name === 'metrics');
    if (!servicePort || (servicePort.targetPort !== 'metrics' && servicePort.targetPort !== Number(setting))) {
      problems.push(`${where}: Service ${app}: no port named metrics targeting the container's metrics port`);
    }
  }
  for (const monitor of objects.filter((object) => object.kind === 'ServiceMonitor')) {
    const scraped = (monitor.spec?.endpoints ?? []).map((endpoint) => endpoint.port);
    if (scraped.length === 0 || scraped.some((port) => port !== 'metrics')) {
      problems.push(`${where}: ServiceMonitor ${monitor.metadata.name}: scrapes ${scraped.join(', ') || 'nothing'}; it must scrape the port named metrics only`);
    }
  }
}

const alerts = parse(readFileSync(join(prometheusDir, 'alerts.yml'), 'utf8'));
const overlays = ['base', ...readdirSync(join(kubernetesDir, 'overlays')).map((overlay) => join('overlays', overlay))];
for (const overlay of overlays) {
  const rendered = run(process.env.KUBECTL ?? 'kubectl', ['kustomize', overlay], kubernetesDir);
  if (!rendered.ok) {
    problems.push(`${overlay}: kubectl kustomize failed: ${rendered.output}`);
    continue;
  }
  const documents = parseAllDocuments(rendered.output);
  const kinds = new Map();
  const objects = [];
  for (const document of documents) {
    if (document.errors.length) problems.push(`${overlay}: YAML: ${document.errors.map((error) => error.message).join('; ')}`);
    const object = document.toJS();
    if (object === null) continue;
    objects.push(object);
    kinds.set(object.kind, (kinds.get(object.kind) ?? 0) + 1);
    validateObject(overlay, object);
    checkDatastoreEgress(overlay, object);
    checkOwnSecrets(overlay, object);
    if (object.kind === 'PrometheusRule' && !isDeepStrictEqual(object.spec?.groups, alerts.groups)) {
      problems.push(`${overlay}: PrometheusRule ${object.metadata.name}: its groups differ from deploy/prometheus/alerts.yml (run node deploy/render-prometheus-rule.mjs)`);
    }
  }
  checkMetricsPorts(overlay, objects);
  console.log(`${overlay}: ${documents.length} objects (${[...kinds].map(([kind, count]) => `${count} ${kind}`).join(', ')})`);
}

for (const args of [['check', 'rules', 'alerts.yml'], ...(existsSync(join(prometheusDir, 'alerts.test.yml')) ? [['test', 'rules', 'alerts.test.yml']] : [])]) {
  const result = run('promtool', args, prometheusDir);
  if (result.ok) console.log(`promtool ${args.join(' ')}: ok`);
  else problems.push(`promtool ${args.join(' ')}: ${result.output}`);
}
if (!existsSync(join(prometheusDir, 'alerts.test.yml'))) problems.push('deploy/prometheus/alerts.test.yml is missing');
const scrapeConfig = run('promtool', ['check', 'config', 'prometheus.yml'], deployDir);
if (scrapeConfig.ok) console.log('promtool check config prometheus.yml: ok');
else problems.push(`promtool check config prometheus.yml: ${scrapeConfig.output}`);

if (problems.length) {
  console.error(`${problems.length} problem(s):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exit(1);
}
console.log('deploy manifests: valid');
