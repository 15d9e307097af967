import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError, type ValidatorOptions } from 'class-validator';
import type { EventAction } from '../actions';
import { AgentNoteUpdateMessage } from './agent-note-update.dto';
import { passesCompiledCheck, plainTreeUnchanged } from './compiled-message-check';
import { CustomerCreateMessage } from './customer-create.dto';
import { KEYED_CONSTRAINTS, PRESENCE_CONSTRAINTS } from './field.decorators';
import { ImSubSessionCloseMessage, ImSubSessionCreateMessage } from './im-sub-session.dto';
import { ImSurveyVoteCreateMessage } from './im-survey-vote-create.dto';
import { OrganizationCreateMessage } from './organization-create.dto';
import { RecordDestroyMessage, RecordUpdateMessage } from './record-change.dto';
import { isPlainObject, withoutPrototypeMemberKeys } from '../plain-object';
import type { MessageProblem } from './message-problem';
import { messageShapeProblems } from './message-shape';
import { hasNulCharacter, nulCharacterProblems } from './nul-characters';
import { ShutQueueCreateMessage } from './shut-queue-create.dto';

export type { MessageProblem } from './message-problem';

/** The seed's table for each action, as a DTO class (decorators are evaluated once, at module load). */
export const MESSAGE_CLASSES: Readonly<Record<EventAction, new () => object>> = {
  Customer_create: CustomerCreateMessage,
  Customer_update: RecordUpdateMessage,
  Customer_destroy: RecordDestroyMessage,
  Organization_create: OrganizationCreateMessage,
  Organization_update: RecordUpdateMessage,
  Organization_destroy: RecordDestroyMessage,
  ImSubSession_create: ImSubSessionCreateMessage,
  ImSubSession_close: ImSubSessionCloseMessage,
  ShutQueue_create: ShutQueueCreateMessage,
  AgentNote_update: AgentNoteUpdateMessage,
  ImSurveyVote_create: ImSurveyVoteCreateMessage,
};

/**
 * No whitelist: unlisted fields are legal (the seed says more exist). `value` is kept on each error
 * because the keyed map constraints recompute their per-key problems from it; `target` is not needed.
 */
const VALIDATOR_OPTIONS: ValidatorOptions = {
  forbidUnknownValues: true,
  validationError: { target: false, value: true },
};

const NESTED_CONSTRAINT = 'nestedValidation';

/**
 * Checks an event's `message` against the seed's table for its action (CONTRACT §4).
 * Returns every problem found; an empty list means the message is valid. Unlisted fields are allowed.
 * The message itself is never modified: class-transformer validates a copy. A message every rule
 * holds for is known valid by the compiled check without that copy (compiled-message-check.ts).
 */
export function validateEventMessage(action: EventAction, message: unknown): MessageProblem[] {
  if (!isPlainObject(message)) return [{ path: '', problem: 'must be an object' }];
  const messageClass = MESSAGE_CLASSES[action] as (new () => object) | undefined;
  // Callers should have checked the action already; a stray one must not slip through as valid.
  if (!messageClass) return [{ path: '', problem: `cannot be checked: unknown action ${String(action)}` }];
  // First, so no walk below (class-transformer's copy, class-validator, the NUL check) meets more levels than the limit.
  const shape = messageShapeProblems(message);
  if (shape.length > 0) return shape;
  if (plainTreeUnchanged(message) && passesCompiledCheck(messageClass, message)) {
    return hasNulCharacter(message) ? mergeSamePath(nulCharacterProblems(message)) : [];
  }
  return classValidatorProblems(messageClass, message);
}

/** What class-validator finds in class-transformer's copy of `message`, NUL characters included: the full check. */
export function classValidatorProblems(messageClass: new () => object, message: Record<string, unknown>): MessageProblem[] {
  const instance = plainToInstance(messageClass, withoutPrototypeMemberKeys(message));
  const problems = flattenProblems(validateSync(instance, VALIDATOR_OPTIONS));
  return mergeSamePath(nulCharacterProblems(message, '', problems));
}

function joinPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

/**
 * class-validator's error tree → one problem per offending path. A node with failed constraints is
 * reported on its own and not descended into: when `im_sub_session_log` is not an array, what its
 * "elements" got wrong is noise.
 */
function flattenProblems(errors: ValidationError[], parent = '', problems: MessageProblem[] = []): MessageProblem[] {
  for (const error of errors) {
    const path = joinPath(parent, error.property);
    const constraints = error.constraints ?? {};
    const names = Object.keys(constraints);
    if (names.length > 0) {
      problems.push(...nodeProblems(path, error.value, constraints));
    } else if (error.children?.length) {
      flattenProblems(error.children, path, problems);
    }
  }
  return problems;
}

function nodeProblems(path: string, value: unknown, constraints: Record<string, string>): MessageProblem[] {
  let names = Object.keys(constraints);
  const presence = names.filter((name) => PRESENCE_CONSTRAINTS.has(name));
  if (presence.length > 0) names = presence;
  else if (names.length > 1) names = names.filter((name) => name !== NESTED_CONSTRAINT);

  const problems: MessageProblem[] = [];
  for (const name of names) {
    const keyed = KEYED_CONSTRAINTS.get(name);
    if (keyed) {
      for (const { key, problem } of keyed(value)) problems.push({ path: key === undefined ? path : `${path}.${key}`, problem });
    } else {
      problems.push({ path, problem: constraints[name] });
    }
  }
  return mergeSamePath(problems);
}

/** Several constraints failing on one path (rare) become one entry, as the contract's `details` expect. */
function mergeSamePath(problems: MessageProblem[]): MessageProblem[] {
  if (problems.length < 2) return problems;
  const byPath = new Map<string, string[]>();
  for (const { path, problem } of problems) {
    const texts = byPath.get(path) ?? [];
    if (!texts.includes(problem)) texts.push(problem);
    byPath.set(path, texts);
  }
  return [...byPath].map(([path, texts]) => ({ path, problem: texts.join('; ') }));
}
