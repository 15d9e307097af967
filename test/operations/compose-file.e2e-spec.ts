import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * docker-compose.yml cannot be run here (no Docker engine), so what matters for safety is read from
 * the file: ports published on loopback only, and no password written in it.
 */
interface Service {
  ports?: string[];
  environment?: Record<string, string>;
}

const text = readFileSync(join(__dirname, '..', '..', 'docker-compose.yml'), 'utf8');
const compose = parse(text, { merge: true }) as { services: Record<string, Service> };

describe('docker-compose.yml', () => {
  it('publishes every port on 127.0.0.1 only', () => {
    const published = Object.entries(compose.services).flatMap(([name, service]) => (service.ports ?? []).map((port) => ({ name, port })));
    expect(published.map(({ name }) => name).sort()).toEqual(['config-api', 'ingest']);
    for (const { port } of published) expect(port).toMatch(/^127\.0\.0\.1:(\d+|\$\{INGEST_HOST_PORTS:-\d+\}):\d+$/);
  });

  it('takes the database password from the environment, required, in every place that uses it', () => {
    const required = '${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD (URL-safe characters)}';
    expect(compose.services.postgres.environment?.POSTGRES_PASSWORD).toBe(required);
    for (const name of ['migrate', 'config-api', 'ingest', 'worker']) {
      expect({ name, url: compose.services[name].environment?.DATABASE_URL }).toEqual({ name, url: `postgres://callbacks:${required}@postgres:5432/callbacks` });
    }
    expect(text).not.toMatch(/callbacks:callbacks@|POSTGRES_PASSWORD: *callbacks/);
  });

  it('requires the tokens instead of defaulting them', () => {
    expect(compose.services['config-api'].environment?.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?/);
    expect(compose.services.ingest.environment?.INGEST_TOKEN).toMatch(/^\$\{INGEST_TOKEN:\?/);
  });
});
