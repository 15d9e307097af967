import { createHash } from 'node:crypto';
import { createSecureContext, rootCertificates } from 'node:tls';
import { boundedLookup, guardedLookup } from '@app/runtime';
import { Agent } from 'undici';
import type { DestinationAuth } from './destination-transport';

type MtlsAuth = Extract<DestinationAuth, { type: 'mtls' }>;

interface PooledAgent {
  agent: Agent;
  /** Which certificate the agent presents: an edited destination gets a new agent. */
  settings: string;
  lastUsedAt: number;
}

export type AgentLookup = { ok: true; agent: Agent } | { ok: false; reason: string };

/**
 * One undici pool per mTLS destination, presenting its client certificate on every TLS connection
 * (CONTRACT §11), closed once unused for `idleMs`. Its `ca` is trusted besides the usual roots, and the
 * private-address rule is applied to every address dialled, as for the shared pool.
 */
export class ClientCertificateAgents {
  private readonly agents = new Map<string, PooledAgent>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly allowPrivateTargets: boolean,
    private readonly idleMs = 60_000,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(1000, Math.floor(idleMs / 4)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.agents.size;
  }

  agentFor(destinationId: string, auth: MtlsAuth): AgentLookup {
    const settings = createHash('sha256').update(JSON.stringify([auth.certificate, auth.private_key, auth.ca ?? null])).digest('base64url');
    const pooled = this.agents.get(destinationId);
    if (pooled?.settings === settings) {
      pooled.lastUsedAt = Date.now();
      return { ok: true, agent: pooled.agent };
    }
    const ca = auth.ca ? [...rootCertificates, auth.ca] : undefined;
    try {
      // Checked here so a bad PEM is one clear reason, not a TLS error on every connection.
      createSecureContext({ cert: auth.certificate, key: auth.private_key, ...(ca ? { ca } : {}) });
    } catch (error) {
      // OpenSSL's messages name the routine that failed, never the PEM text.
      const why = error instanceof Error ? error.message : String(error);
      return { ok: false, reason: `mtls: the certificate, private_key or ca cannot be used (${why.slice(0, 200)})` };
    }
    if (pooled) void pooled.agent.close().catch(() => undefined);
    const agent = new Agent({
      connections: 16,
      keepAliveTimeout: 30_000,
      connect: {
        timeout: 10_000,
        cert: auth.certificate,
        key: auth.private_key,
        ...(ca ? { ca } : {}),
        lookup: this.allowPrivateTargets ? boundedLookup : guardedLookup,
      },
    });
    this.agents.set(destinationId, { agent, settings, lastUsedAt: Date.now() });
    return { ok: true, agent };
  }

  /** Agents unused for `idleMs`; a request still running on one finishes, as undici's close waits for it. */
  closeIdle(now = Date.now()): void {
    for (const [destinationId, pooled] of this.agents) {
      if (now - pooled.lastUsedAt < this.idleMs) continue;
      this.agents.delete(destinationId);
      void pooled.agent.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((pooled) => pooled.agent.destroy().catch(() => undefined)));
  }
}
