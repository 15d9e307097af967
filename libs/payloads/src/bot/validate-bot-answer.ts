import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { MessageTriggerAnswerDto, type MessageTriggerAnswer, TaskPushAnswerDto, type TaskPushAnswer } from './bot-answer.dto';
import { BotMessageDto, MSG_CONTENT_DTOS, type MsgType, TEXT_MSG_TYPES } from './bot-message.dto';
import { messageShapeProblems } from '../events/message-shape';
import { isPlainObject, withoutPrototypeMemberKeys } from '../plain-object';

/** One way an answer is off-spec; `problem` is a whole sentence starting with the path, e.g. `message.msgType must be one of …`. */
export interface BotAnswerProblem {
  path: string;
  problem: string;
}

export type BotAnswerCheck<T> = { ok: true; answer: T } | { ok: false; problems: BotAnswerProblem[] };

function joinPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

/**
 * Flattens class-validator's tree. Every message here starts with `$property` (the last path segment),
 * which is swapped for the whole path so a problem reads `message.msgContent.optionList[0].id must be a string`.
 * For a list element class-validator fills `$property` with the list's name, not the index.
 */
function collectProblems(errors: ValidationError[], parent: string, parentProperty = '', into: BotAnswerProblem[] = []): BotAnswerProblem[] {
  for (const error of errors) {
    const path = joinPath(parent, error.property);
    const named = /^\d+$/.test(error.property) ? parentProperty : error.property;
    for (const text of Object.values(error.constraints ?? {})) {
      const rest = text.startsWith(named) ? text.slice(named.length) : null;
      const problem = rest !== null && /^[ .[]/.test(rest) ? `${path}${rest}` : `${path}: ${text}`;
      into.push({ path, problem });
    }
    if (error.children?.length) collectProblems(error.children, path, error.property, into);
  }
  return into;
}

/**
 * The answer comes from the API user's server: its shape is held to the message limits first (32 levels,
 * no `__proto__`), so class-transformer's recursive copy cannot overflow the stack, and the copy leaves
 * out keys named like Object.prototype members, on which class-transformer crashes.
 */
function check(dto: new () => object, value: Record<string, unknown>, path: string): BotAnswerProblem[] {
  const shape = messageShapeProblems(value);
  if (shape.length > 0) {
    return shape.map((found) => {
      const where = found.path.startsWith('[') ? `${path}${found.path}` : joinPath(path, found.path);
      return { path: where, problem: `${where || 'the answer'}: ${found.problem}` };
    });
  }
  return collectProblems(validateSync(plainToInstance(dto, withoutPrototypeMemberKeys(value))), path);
}

/** Checks one Message (msgType, then msgContent's shape for that msgType); `path` prefixes every problem. */
export function validateBotMessage(value: unknown, path = 'message'): BotAnswerProblem[] {
  if (!isPlainObject(value)) return [{ path, problem: `${path} must be an object` }];
  const problems = check(BotMessageDto, value, path);
  if (problems.length > 0) return problems;
  const msgType = value.msgType as MsgType;
  const content = value.msgContent;
  const contentPath = `${path}.msgContent`;
  if (TEXT_MSG_TYPES.includes(msgType)) {
    return typeof content === 'string' ? [] : [{ path: contentPath, problem: `${contentPath} must be a string when msgType is ${msgType}` }];
  }
  if (!isPlainObject(content)) {
    return [{ path: contentPath, problem: `${contentPath} must be an object when msgType is ${msgType}` }];
  }
  return check(MSG_CONTENT_DTOS[msgType as keyof typeof MSG_CONTENT_DTOS], content, contentPath);
}

const TASK_PUSH_FIELDS = ['resCode', 'resError', 'message', 'variables', 'toTaskNodeId', 'routeType', 'command'] as const;

/**
 * Checks a task-push webhook's parsed answer against the seed completely. The answer handed on keeps the
 * seven fields the seed lists (unlisted top-level fields are dropped); the Message goes on as received.
 */
export function validateTaskPushAnswer(raw: unknown): BotAnswerCheck<TaskPushAnswer> {
  if (!isPlainObject(raw)) return { ok: false, problems: [{ path: '', problem: 'the answer must be a JSON object' }] };
  const problems = check(TaskPushAnswerDto, raw, '');
  if (isPlainObject(raw.message)) problems.push(...validateBotMessage(raw.message, 'message'));
  if (problems.length > 0) return { ok: false, problems };
  const answer: Record<string, unknown> = {};
  for (const field of TASK_PUSH_FIELDS) if (field in raw) answer[field] = raw[field];
  return { ok: true, answer: answer as TaskPushAnswer };
}

/** Checks a message-trigger webhook's parsed answer; the bot is given `{answerContent}` only. */
export function validateMessageTriggerAnswer(raw: unknown): BotAnswerCheck<MessageTriggerAnswer> {
  if (!isPlainObject(raw)) return { ok: false, problems: [{ path: '', problem: 'the answer must be a JSON object' }] };
  const problems = check(MessageTriggerAnswerDto, raw, '');
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, answer: { answerContent: raw.answerContent as string } };
}

/** A short, readable list of the first problems, for `resError` and the call log. */
export function describeAnswerProblems(problems: readonly BotAnswerProblem[], max = 3): string {
  const shown = problems.slice(0, max).map((entry) => entry.problem);
  const more = problems.length > max ? ` (and ${problems.length - max} more)` : '';
  return `${shown.join('; ')}${more}`;
}
