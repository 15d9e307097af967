import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BuiltAppProcess, spawnBuiltApp } from '../support/built-app';
import { IsolatedNamespace } from '../support/isolated-namespace';
import { freePort, waitFor } from '@app/testing';

/**
 * The Grafana dashboard only helps if every metric it queries is really exported. The three apps run
 * as separate processes here (in one Jest process they would share one prom-client registry and hide
 * a metric that only the wrong app exports), each scraped once; every metric name in the dashboard's
 * PromQL must be among what the apps export, and the scrape config must cover all three.
 */
const ROOT = join(__dirname, '..', '..');
const namespace = new IsolatedNamespace('metrics-dashboard');
const APPS = [
  { name: 'config-api', portVariable: 'CONFIG_API_PORT' },
  { name: 'ingest', portVariable: 'INGEST_PORT' },
  { name: 'delivery-worker', portVariable: 'WORKER_PORT' },
] as const;
const children: BuiltAppProcess[] = [];
const ports: Record<string, number> = {};

/** Metric names in an exposition: every `# TYPE`, with the series names a histogram or summary adds. */
function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression reads: identifiers that are not functions, keywords, labels or strings. */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names: string[] = [];
  for (const match of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = stripped.slice((match.index ?? 0) + match[0].length);
    if (/^\s*\(/.test(after) || PROMQL_WORDS.has(match[0].toLowerCase())) continue;
    const before = stripped.slice(0, match.index);
    if (/\d$/.test(before) || /\d[eE]$/.test(before)) continue; // the exponent of 1e-9
    names.push(match[0]);
  }
  return names;
}

beforeAll(async () => {
  await namespace.setUp();
  for (const app of APPS) ports[app.portVariable] = await freePort();
  for (const app of APPS) {
    const portSettings = Object.fromEntries(Object.entries(ports).map(([key, port]) => [key, String(port)]));
    children.push(spawnBuiltApp(app.name, { ...namespace.overrides, ...portSettings, LOG_LEVEL: 'silent' }));
  }
  for (const app of APPS) {
    await waitFor(`${app.name} to answer /health/live`, async () => (await fetch(`http://127.0.0.1:${ports[app.portVariable]}/health/live`)).ok, {
      timeoutMs: 90_000,
      intervalMs: 250,
    });
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(children.map((child) => child.terminate(10_000)));
  await namespace.tearDown();
});

describe('deploy/grafana-dashboard.json', () => {
  it('uses only metrics the apps export', async () => {
    const exported = new Map<string, string[]>();
    for (const app of APPS) {
      const response = await fetch(`http://127.0.0.1:${ports[app.portVariable]}/metrics`);
      expect(response.status).toBe(200);
      for (const name of exportedNames(await response.text())) exported.set(name, [...(exported.get(name) ?? []), app.name]);
    }
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy', 'grafana-dashboard.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    const used = new Map<string, string>();
    for (const panel of dashboard.panels) for (const target of panel.targets) for (const name of metricNames(target.expr)) used.set(name, panel.title);
    // The dashboard covers what the issue asks for (so this test cannot pass on an empty dashboard).
    for (const needed of [
      'callback_delivery_events_settled_total',
      'callback_delivery_attempts_total',
      'callback_delivery_latency_seconds_bucket',
      'delivery_queue_jobs',
      'delivery_queue_oldest_waiting_age_seconds',
      'callbacks_endpoints_breaker_open',
      'callbacks_endpoints_disabled',
      'ingest_events_total',
      'bot_call_duration_seconds_count',
    ]) {
      expect(used.has(needed)).toBe(true);
    }
    const missing = [...used].filter(([name]) => !exported.has(name)).map(([name, panel]) => `${name} (panel "${panel}")`);
    expect(missing).toEqual([]);
  });

  it('is scraped from all three apps by deploy/prometheus.yml, on their metrics port', () => {
    const config = readFileSync(join(ROOT, 'deploy', 'prometheus.yml'), 'utf8');
    // Every app serves /metrics on METRICS_PORT (9464 in docker-compose.yml), never on its public port.
    for (const [job, host] of [['config-api', 'config-api'], ['ingest', 'ingest'], ['delivery-worker', 'worker']] as const) {
      expect(config).toMatch(new RegExp(`job_name: ${job}\\n[\\s\\S]*?targets: \\['${host}:9464'\\]`));
    }
    // Set once in the environment every app of docker-compose.yml shares.
    expect(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')).toMatch(/environment: &app-env\n[\s\S]*?METRICS_PORT: "9464"/);
  });

  it('finds metric names in PromQL the way Prometheus reads them', () => {
    expect(metricNames('histogram_quantile(0.95, sum by (le, type) (rate(bot_call_duration_seconds_bucket{job="ingest"}[5m])))')).toEqual([
      'bot_call_duration_seconds_bucket',
    ]);
    expect(metricNames('sum(rate(a_total{outcome!="delivered"}[5m])) / clamp_min(sum(rate(b_total[5m])), 1e-9)')).toEqual(['a_total', 'b_total']);
    expect(metricNames('max by (state) (delivery_queue_jobs)')).toEqual(['delivery_queue_jobs']);
  });
});
