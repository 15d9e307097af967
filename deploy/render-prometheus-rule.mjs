// Writes deploy/kubernetes/base/prometheus-rule.yaml from deploy/prometheus/alerts.yml, the one source
// of the alert rules: `node deploy/render-prometheus-rule.mjs` after editing the rules.
// (deploy/validate-manifests.mjs fails while the two differ.)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const deployDir = dirname(fileURLToPath(import.meta.url));
const { groups } = parse(readFileSync(join(deployDir, 'prometheus/alerts.yml'), 'utf8'));
const rule = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  // kube-prometheus-stack picks up rules labelled with its release name.
  metadata: { name: 'event-callbacks', labels: { release: 'prometheus' } },
  spec: { groups },
};
const header = '# Generated from deploy/prometheus/alerts.yml by deploy/render-prometheus-rule.mjs: edit the rules there.\n';
writeFileSync(join(deployDir, 'kubernetes/base/prometheus-rule.yaml'), header + stringify(rule, { lineWidth: 0 }));
