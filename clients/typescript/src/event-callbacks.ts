/**
 * The client: every generated Open API operation (OpenApiOperations, from clients/openapi.json) on an
 * HTTP client whose requests are signed by signing.ts. `baseUrl` is config-api's origin.
 */
import { createClient, createConfig } from './generated/client/index.js';
import { OpenApiOperations } from './generated/sdk.gen.js';
import { type Credentials, signRequest } from './signing.js';

export interface EventCallbacksOptions extends Credentials {
  /** config-api's origin, e.g. `https://callbacks.example.com`. */
  baseUrl: string;
  /** Another fetch (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
}

export class EventCallbacks extends OpenApiOperations {
  /** config-api's origin, as given (without a trailing slash). */
  readonly baseUrl: string;

  constructor(options: EventCallbacksOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    const client = createClient(createConfig({ baseUrl, fetch: options.fetch }));
    const credentials: Credentials = { email: options.email, token: options.token };
    client.interceptors.request.use((request) => signRequest(request, credentials));
    super({ client });
    this.baseUrl = baseUrl;
  }
}
