/**
 * listen's place in the feed, kept in the --state file after every event: the cursor of the page being
 * read and the last event of it that was handled, so a later listen starts with the next one.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { UsageError } from './arguments.js';

export interface Place {
  /** The `after` the current page was read with (null: from the oldest kept event). */
  after: string | null;
  /** The last event of that page that was handled (null: none yet). */
  last_event_id: string | null;
}

/** The place in the file, or undefined when there is no file yet. */
export function readPlace(file: string): Place | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw new UsageError(`--state ${file} cannot be read: ${(error as Error).message}`);
  }
  try {
    const place = JSON.parse(text) as Partial<Place>;
    const after = place.after ?? null;
    const last = place.last_event_id ?? null;
    if ((after !== null && typeof after !== 'string') || (last !== null && typeof last !== 'string')) throw new Error('unexpected values');
    return { after, last_event_id: last };
  } catch {
    throw new UsageError(`--state ${file} is not a state file of event-callbacks listen`);
  }
}

/** Written whole to a temporary file and renamed, so a stop mid-write never leaves half a file. */
export function writePlace(file: string, place: Place): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(place)}\n`);
  renameSync(temporary, file);
}
