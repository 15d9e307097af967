import type { DataSource } from 'typeorm';
import { MAX_RECORD_ID } from '@app/payloads';
import { invalidQuery } from '@app/runtime';
import { DEFAULT_ACCOUNT_PAGE, type ListAccountsQueryDto } from './account-list.dto';

/** created_at in whole microseconds since the epoch (exact in PostgreSQL, unlike a JS Date) and the id. */
interface AccountCursor {
  createdUs: string;
  id: number;
}

function encodeAccountCursor(cursor: AccountCursor): string {
  return Buffer.from(`a1:${cursor.createdUs}:${cursor.id}`, 'utf8').toString('base64url');
}

/** 0001-01-01 and 9999-12-31T23:59:59.999999Z in microseconds since the epoch: no account was created outside them. */
const MIN_CREATED_US = -62_135_596_800_000_000n;
const MAX_CREATED_US = 253_402_300_799_999_999n;

/** Anything this API did not hand out, its numbers beyond an account's id or creation time included, is 400 naming `cursor`. */
function decodeAccountCursor(cursor: string): AccountCursor {
  const match = /^a1:(-?\d{1,18}):(\d{1,10})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || BigInt(match[1]) < MIN_CREATED_US || BigInt(match[1]) > MAX_CREATED_US || Number(match[2]) < 1 || Number(match[2]) > MAX_RECORD_ID) {
    throw invalidQuery([{ path: 'cursor', problem: 'cursor must be a next_cursor value returned by this API' }]);
  }
  return { createdUs: match[1], id: Number(match[2]) };
}

/** LIKE treats % and _ as wildcards; a search for "a_b" means those characters. */
function likeContaining(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/**
 * One page of account ids, newest first by (created_at, id). The search is the id exactly or a part
 * of the email or name; the parts are LIKE '%…%' on lower(...), which the trigram GIN indexes serve
 * (three characters or more; shorter searches scan, as any substring search must).
 */
export async function pageAccountIds(
  dataSource: DataSource,
  query: ListAccountsQueryDto,
): Promise<{ ids: number[]; nextCursor: string | null }> {
  const limit = query.limit ?? DEFAULT_ACCOUNT_PAGE;
  const parameters: unknown[] = [];
  const clauses: string[] = [];
  const search = query.search?.trim();
  if (search) {
    parameters.push(likeContaining(search));
    const like = `$${parameters.length}`;
    const alternatives = [`lower(email) LIKE ${like}`, `lower(name) LIKE ${like}`];
    if (/^\d{1,10}$/.test(search) && Number(search) >= 1 && Number(search) <= MAX_RECORD_ID) {
      parameters.push(Number(search));
      alternatives.unshift(`id = $${parameters.length}`);
    }
    clauses.push(`(${alternatives.join(' OR ')})`);
  }
  if (query.cursor !== undefined) {
    const cursor = decodeAccountCursor(query.cursor);
    parameters.push(cursor.createdUs, cursor.id);
    clauses.push(`(created_at, id) < (timestamptz 'epoch' + $${parameters.length - 1}::bigint * interval '1 microsecond', $${parameters.length})`);
  }
  parameters.push(limit + 1);
  const rows = await dataSource.query<{ id: number; created_us: string }[]>(
    `SELECT id, (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint::text AS created_us
       FROM accounts ${clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''}
      ORDER BY created_at DESC, id DESC
      LIMIT $${parameters.length}`,
    parameters,
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    ids: page.map((row) => row.id),
    nextCursor: rows.length > limit ? encodeAccountCursor({ createdUs: last.created_us, id: last.id }) : null,
  };
}
