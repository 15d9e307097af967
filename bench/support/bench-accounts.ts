import { PERMISSION_KEYS } from '@app/payloads';
import { openApiQuery } from '@app/signing';

async function call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${init.method ?? 'GET'} ${url.split('?')[0]} answered ${response.status}: ${text.slice(0, 500)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Operator and API-user calls the bench makes to set itself up, through the public APIs only. */
export class BenchAccounts {
  constructor(
    private readonly configApiUrl: string,
    private readonly adminToken: string,
    private readonly runId: string,
  ) {}

  admin(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    return call(`${this.configApiUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${this.adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** A new account whose callbacks go, as JSON with every permission on, to `pushUrl` (null: no push URL, its primary deliveries end `no_endpoint`). */
  async create(label: string, pushUrl: string | null): Promise<number> {
    const account = await this.admin('POST', '/accounts', { email: `${label}-${this.runId}@bench.example.com` });
    const credentials = { email: String(account.email), openApiToken: String(account.open_api_token) };
    const openApi = (operation: string, body: unknown) =>
      call(`${this.configApiUrl}/open_api_v1/${operation}?${new URLSearchParams(openApiQuery(credentials)).toString()}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    if (pushUrl !== null) await openApi('set_url', { push_url: pushUrl });
    await openApi('set_permissions', { permissions: Object.fromEntries(PERMISSION_KEYS.map((key) => [key, true])) });
    await openApi('set_push_content_type', { push_content_type: 'JSON' });
    return Number(account.id);
  }

  /** Adds a destination (CONTRACT §11) through the admin API; answers its id. */
  async addDestination(account: number, body: { type: 'webhook' | 'rabbitmq' | 'nats' | 'mqtt'; target: string }): Promise<string> {
    const view = await this.admin('POST', `/accounts/${account}/destinations`, body);
    if (typeof view.id !== 'string') throw new Error(`no destination id in ${JSON.stringify(view)}`);
    return view.id;
  }

  async pauseDestination(account: number, id: string, paused: boolean): Promise<void> {
    const view = await this.admin('POST', `/accounts/${account}/destinations/${id}/${paused ? 'pause' : 'resume'}`);
    if (view.paused !== paused) throw new Error(`destination ${id} is not ${paused ? 'paused' : 'resumed'}: ${JSON.stringify(view)}`);
  }
}
