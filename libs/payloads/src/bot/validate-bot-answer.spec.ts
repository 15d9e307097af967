import 'reflect-metadata';
import { MSG_TYPES } from './bot-message.dto';
import { SAMPLE_TASK_PUSH_ANSWERS } from './sample-bot-answers';
import { describeAnswerProblems, validateBotMessage, validateMessageTriggerAnswer, validateTaskPushAnswer } from './validate-bot-answer';

const clone = <T>(value: T): T => structuredClone(value);

/** The problems of an answer, as sentences; fails loudly when the answer is accepted. */
function problemsOf(answer: unknown): string[] {
  const result = validateTaskPushAnswer(answer);
  if (result.ok) throw new Error(`expected ${JSON.stringify(answer)} to be refused`);
  return result.problems.map((entry) => entry.problem);
}

function withContent(msgType: string, msgContent: unknown): Record<string, unknown> {
  return { resCode: 0, message: { msgType, msgContent } };
}

describe('validateTaskPushAnswer', () => {
  it.each(MSG_TYPES)('accepts the %s sample unchanged', (msgType) => {
    const sample = SAMPLE_TASK_PUSH_ANSWERS[msgType];
    expect(validateTaskPushAnswer(clone(sample))).toEqual({ ok: true, answer: sample });
  });

  it('accepts a minimal answer and null optional fields (serializers write absent fields as null)', () => {
    expect(validateTaskPushAnswer({ resCode: -1 })).toEqual({ ok: true, answer: { resCode: -1 } });
    const nulls = { resCode: 0, resError: null, message: null, variables: null, toTaskNodeId: null, routeType: null, command: null };
    expect(validateTaskPushAnswer(nulls)).toEqual({ ok: true, answer: nulls });
  });

  it('drops unlisted top-level fields but keeps the Message as received', () => {
    const message = { msgType: 'plain', msgContent: 'hi', trace: 'x' };
    expect(validateTaskPushAnswer({ resCode: 0, debug: true, message })).toEqual({ ok: true, answer: { resCode: 0, message } });
  });

  it('refuses non-objects', () => {
    expect(problemsOf(null)).toEqual(['the answer must be a JSON object']);
    expect(problemsOf([{ resCode: 0 }])).toEqual(['the answer must be a JSON object']);
    expect(problemsOf('ok')).toEqual(['the answer must be a JSON object']);
  });

  it('requires resCode 0 or -1', () => {
    expect(problemsOf({})).toContain('resCode is required');
    expect(problemsOf({ resCode: 2 })).toEqual(['resCode must be 0 (success) or -1 (failure)']);
    expect(problemsOf({ resCode: '0' })).toEqual(['resCode must be 0 (success) or -1 (failure)']);
  });

  it('checks the other top-level fields', () => {
    expect(problemsOf({ resCode: 0, resError: 5 })).toEqual(['resError must be a string']);
    expect(problemsOf({ resCode: 0, routeType: 3 })).toEqual(['routeType must be 1 (direct trigger) or 2 (wait for reply)']);
    expect(problemsOf({ resCode: 0, toTaskNodeId: 1.5 })).toEqual(['toTaskNodeId must be an integer']);
    expect(problemsOf({ resCode: 0, toTaskNodeId: '12' })).toEqual(['toTaskNodeId must be an integer']);
    expect(problemsOf({ resCode: 0, command: {} })).toEqual(['command must be a string']);
    expect(problemsOf({ resCode: 0, variables: { city: 'Oslo', age: 3 } })).toEqual(['variables.age must be a string']);
    expect(problemsOf({ resCode: 0, variables: { 'first name': null } })).toEqual(['variables["first name"] must be a string']);
    expect(problemsOf({ resCode: 0, variables: ['a'] })).toEqual(['variables must be an object mapping names to strings']);
    expect(problemsOf({ resCode: 0, message: 'hello' })).toEqual(['message must be an object']);
  });

  it('checks msgType and that msgContent is present', () => {
    expect(problemsOf({ resCode: 0, message: { msgType: 'video', msgContent: 'x' } })).toEqual([
      'message.msgType must be one of plain, rich, selective_table, selective_list, show_product, selective_product, custom_card',
    ]);
    expect(problemsOf({ resCode: 0, message: { msgContent: 'x' } })).toContain('message.msgType is required');
    expect(problemsOf({ resCode: 0, message: { msgType: 'plain' } })).toEqual(['message.msgContent is required']);
  });

  it.each([
    ['plain', { text: 'hi' }, 'message.msgContent must be a string when msgType is plain'],
    ['rich', 5, 'message.msgContent must be a string when msgType is rich'],
    ['selective_table', 'a table', 'message.msgContent must be an object when msgType is selective_table'],
    ['selective_list', [], 'message.msgContent must be an object when msgType is selective_list'],
    ['selective_table', { optionList: [{ id: 1, value: 'a' }] }, 'message.msgContent.optionList[0].id must be a string'],
    ['selective_table', { rowNumber: 'two', optionList: [] }, 'message.msgContent.rowNumber must be an integer'],
    ['selective_table', { columnNumber: 1.5, optionList: [] }, 'message.msgContent.columnNumber must be an integer'],
    ['selective_list', { title: 'x' }, 'message.msgContent.optionList is required'],
    ['selective_list', { optionList: 'a,b' }, 'message.msgContent.optionList must be an array'],
    ['selective_list', { optionList: ['a'] }, 'message.msgContent.optionList[0] must be an object'],
    ['selective_list', { optionList: [{ id: 'a' }] }, 'message.msgContent.optionList[0].value is required'],
    ['selective_list', { title: 7, optionList: [] }, 'message.msgContent.title must be a string'],
    ['show_product', { showSize: '2', productList: [] }, 'message.msgContent.showSize must be an integer'],
    ['show_product', { turnFlag: true, productList: [] }, 'message.msgContent.turnFlag must be an integer'],
    ['show_product', { productList: [{ id: 'p1' }] }, 'message.msgContent.productList[0].id must be an integer'],
    ['selective_product', { productList: [{ name: 1 }] }, 'message.msgContent.productList[0].name must be a string'],
    ['selective_product', { productList: [{ image: false }] }, 'message.msgContent.productList[0].image must be a string'],
    ['show_product', { productList: [{ url: 3 }] }, 'message.msgContent.productList[0].url must be a string'],
    ['show_product', { productList: [{ infoList: [{ info: 1 }] }] }, 'message.msgContent.productList[0].infoList[0].info must be a string'],
    ['show_product', { productList: [{ infoList: [{ boldFlag: 1 }] }] }, 'message.msgContent.productList[0].infoList[0].boldFlag must be a string'],
    ['show_product', { productList: [{ infoList: [{ url: 'https://x' }] }] }, 'message.msgContent.productList[0].infoList[0].url must be an integer'],
    ['show_product', { productList: [{ infoList: [{ color: 0 }] }] }, 'message.msgContent.productList[0].infoList[0].color must be a string'],
    ['selective_product', {}, 'message.msgContent.productList is required'],
    ['custom_card', {}, 'message.msgContent.cardList is required'],
    ['custom_card', { id: 'c', cardList: [] }, 'message.msgContent.id must be an integer'],
    ['custom_card', { turnFlag: 2, cardList: [] }, 'message.msgContent.turnFlag must be 0 or 1'],
    ['custom_card', { showSize: 'all', cardList: [] }, 'message.msgContent.showSize must be an integer'],
    ['custom_card', { name: 1, cardList: [] }, 'message.msgContent.name must be a string'],
    ['custom_card', { cardList: [{ content: 'x' }] }, 'message.msgContent.cardList[0].type is required'],
    ['custom_card', { cardList: [{ type: 3 }] }, 'message.msgContent.cardList[0].type must be 1 (rich text card) or 2 (FAQ recommendation list card)'],
    ['custom_card', { cardList: [{ type: 1 }] }, 'message.msgContent.cardList[0].content is required when type is 1'],
    ['custom_card', { cardList: [{ type: 1, content: 'x', isHit: 2 }] }, 'message.msgContent.cardList[0].isHit must be 0 or 1'],
    ['custom_card', { cardList: [{ type: 1, content: 'x', isHit: 1, hitContent: 'y' }] }, 'message.msgContent.cardList[0].hitType is required when type is 1 and isHit is 1'],
    ['custom_card', { cardList: [{ type: 1, content: 'x', isHit: 1, hitType: 2 }] }, 'message.msgContent.cardList[0].hitContent is required when type is 1 and isHit is 1'],
    ['custom_card', { cardList: [{ type: 1, content: 'x', isHit: 1, hitType: 3, hitContent: 'y' }] }, 'message.msgContent.cardList[0].hitType must be 1 (hyperlink) or 2 (reply message)'],
    ['custom_card', { cardList: [{ type: 1, content: 'x', isHit: 1, hitType: 1, hitContent: 5 }] }, 'message.msgContent.cardList[0].hitContent must be a string'],
    ['custom_card', { cardList: [{ type: 2 }] }, 'message.msgContent.cardList[0].suggestList is required when type is 2'],
    ['custom_card', { cardList: [{ type: 2, suggestList: [], suggestContent: 1 }] }, 'message.msgContent.cardList[0].suggestContent must be a string'],
    ['custom_card', { cardList: [{ type: 2, suggestList: [{ id: '1', content: 'q' }] }] }, 'message.msgContent.cardList[0].suggestList[0].id must be an integer'],
    ['custom_card', { cardList: [{ type: 2, suggestList: [{ id: 1 }] }] }, 'message.msgContent.cardList[0].suggestList[0].content is required'],
    ['custom_card', { cardList: [{ type: 2, suggestList: [{ id: 1, content: 'q', type: 'faq' }] }] }, 'message.msgContent.cardList[0].suggestList[0].type must be an integer'],
    ['custom_card', { cardList: [{ type: 2, suggestList: [], content: 3 }] }, 'message.msgContent.cardList[0].content must be a string'],
  ])('%s with msgContent %j is refused: %s', (msgType, msgContent, expected) => {
    expect(problemsOf(withContent(msgType, msgContent))).toContain(expected);
  });

  it('allows fields that are not effective for a card type when they are well typed', () => {
    const card = { type: 2, suggestList: [], isHit: 0, content: '' };
    expect(validateTaskPushAnswer(withContent('custom_card', { cardList: [card] })).ok).toBe(true);
    const unclickable = { type: 1, content: 'x', isHit: 0 };
    expect(validateTaskPushAnswer(withContent('custom_card', { cardList: [unclickable] })).ok).toBe(true);
  });

  it('reports every problem and summarises the first few', () => {
    const answer = { resCode: 5, routeType: 9, toTaskNodeId: 'x', command: 1 };
    const result = validateTaskPushAnswer(answer);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(4);
    expect(describeAnswerProblems(result.problems)).toBe(
      'resCode must be 0 (success) or -1 (failure); toTaskNodeId must be an integer; routeType must be 1 (direct trigger) or 2 (wait for reply) (and 1 more)',
    );
  });
});

describe('validateBotMessage', () => {
  it('uses the path it is given', () => {
    expect(validateBotMessage({ msgType: 'plain', msgContent: 1 }, 'reply')).toEqual([
      { path: 'reply.msgContent', problem: 'reply.msgContent must be a string when msgType is plain' },
    ]);
  });
});

describe('validateMessageTriggerAnswer', () => {
  it('accepts {answerContent} and hands on only that', () => {
    expect(validateMessageTriggerAnswer({ answerContent: 'Hello', extra: 1 })).toEqual({ ok: true, answer: { answerContent: 'Hello' } });
    expect(validateMessageTriggerAnswer({ answerContent: '' })).toEqual({ ok: true, answer: { answerContent: '' } });
  });

  it('refuses a missing or non-string answerContent', () => {
    const missing = validateMessageTriggerAnswer({ answer: 'Hello' });
    expect(missing.ok || missing.problems.map((entry) => entry.problem)).toContain('answerContent is required');
    const wrong = validateMessageTriggerAnswer({ answerContent: 42 });
    expect(wrong.ok || wrong.problems.map((entry) => entry.problem)).toEqual(['answerContent must be a string']);
    const notObject = validateMessageTriggerAnswer('Hello');
    expect(notObject.ok || notObject.problems.map((entry) => entry.problem)).toEqual(['the answer must be a JSON object']);
  });
});

describe('hostile webhook answers', () => {
  it('refuses an answer nested thousands of levels instead of overflowing the stack', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level += 1) deep = { a: deep };
    const verdict = validateTaskPushAnswer({ resCode: 0, variables: deep });
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? [] : verdict.problems.map((problem) => problem.problem)).toEqual([expect.stringMatching(/^variables(\.a){31}: nests deeper than 32 levels/)]);
  });

  it('refuses __proto__ and takes an object-valued constructor key as an ordinary field', () => {
    expect(validateMessageTriggerAnswer(JSON.parse('{"answerContent":"x","__proto__":{}}')).ok).toBe(false);
    expect(validateMessageTriggerAnswer(JSON.parse('{"answerContent":"x","constructor":{"prototype":{}}}'))).toEqual({ ok: true, answer: { answerContent: 'x' } });
  });
});
