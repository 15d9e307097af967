import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { audit, Sql } from '@app/persistence';
import { clientAddress, ENVIRONMENT, type Environment, loggableError } from '@app/runtime';
import type { AuditActor } from './audit-actor';

/** What one entry says besides who: never a secret, a token or a body (the columns have no room for one). */
export interface AuditFacts {
  action: string;
  status: number;
  accountId?: number | null;
  target?: string | null;
}

/** An actor is at most this long: an email, a subject or a token's name; longer is cut, never refused. */
const MAX_TEXT = 320;

/** Writes audit entries (CONTRACT §15); the table refuses every change after the insert. */
@Injectable()
export class AuditRecorder {
  private readonly logger = new Logger(AuditRecorder.name);

  constructor(
    private readonly sql: Sql,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  /** Resolves once the entry is stored; rejects when it cannot be (the caller decides what the answer becomes). */
  async record(request: Request, who: AuditActor, facts: AuditFacts): Promise<void> {
    const entry: audit.AuditEntryParams = {
      actor: who.actor.slice(0, MAX_TEXT),
      role: who.role,
      via: who.via,
      action: facts.action,
      accountId: facts.accountId ?? who.accountId ?? null,
      target: facts.target?.slice(0, MAX_TEXT) ?? null,
      status: facts.status,
      ip: clientAddress(request, this.environment.trustProxy) || null,
      requestId: typeof request.id === 'string' || typeof request.id === 'number' ? String(request.id) : null,
    };
    try {
      await this.sql.rows(audit.INSERT_AUDIT_ENTRY, entry);
    } catch (error) {
      this.logger.error({ action: entry.action, status: entry.status, ...loggableError(error) }, 'could not write the audit entry');
      throw error;
    }
  }
}
