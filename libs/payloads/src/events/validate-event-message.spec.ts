import { EVENT_ACTIONS, type EventAction } from '../actions';
import { SAMPLE_MESSAGES } from './sample-messages';
import { validateEventMessage, type MessageProblem } from './validate-event-message';
import { PROTO_KEY_PROBLEM } from './message-shape';

// Tests reach into messages of every shape, deliberately breaking their types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** Validates a copy of the action's sample after `edit`; the samples themselves stay pristine. */
function problemsAfter(action: EventAction, edit: (message: Json) => void): MessageProblem[] {
  const message = structuredClone(SAMPLE_MESSAGES[action]) as Json;
  edit(message);
  return validateEventMessage(action, message);
}

const closeEntry = (message: Json): Json => message.im_sub_session_log[0];
const chatLog = (message: Json): Json => message.im_log_infos[0];

describe('validateEventMessage', () => {
  describe('the message itself', () => {
    it.each([null, undefined, 'text', 42, true, [], [{ id: 1 }]])('rejects %p as not an object', (message) => {
      for (const action of EVENT_ACTIONS) {
        expect(validateEventMessage(action, message)).toEqual([{ path: '', problem: 'must be an object' }]);
      }
    });

    it('refuses an action it does not know instead of passing the message', () => {
      expect(validateEventMessage('Nope_create' as EventAction, { id: 1 })).toEqual([
        { path: '', problem: 'cannot be checked: unknown action Nope_create' },
      ]);
    });
  });

  describe('characters PostgreSQL cannot store', () => {
    it('refuses a NUL character in a listed field, an unlisted one, a nested value and a key, naming each path', () => {
      const problems = problemsAfter('Customer_create', (message) => {
        message.nick_name = 'a\u0000b';
        message.extra_note = '\u0000';
        message.cellphones[0].content = 'x\u0000';
        message.custom_fields['TextField_1\u0000'] = 'ok';
      });
      expect(problems.map((problem) => problem.path).sort()).toEqual(
        ['cellphones[0].content', 'custom_fields.TextField_1\u0000', 'extra_note', 'nick_name'].sort(),
      );
      expect(problems.find((problem) => problem.path === 'nick_name')?.problem).toMatch(/NUL character/);
    });

    it('accepts every sample, which holds no NUL character', () => {
      for (const action of EVENT_ACTIONS) expect(validateEventMessage(action, SAMPLE_MESSAGES[action])).toEqual([]);
    });
  });

  describe('required fields', () => {
    it.each<[EventAction, string]>([
      ['Customer_create', 'id'],
      ['Customer_update', 'id'],
      ['Customer_update', 'changes'],
      ['Customer_destroy', 'id'],
      ['Organization_create', 'id'],
      ['Organization_update', 'id'],
      ['Organization_update', 'changes'],
      ['Organization_destroy', 'id'],
      ['ImSubSession_create', 'id'],
      ['ImSubSession_create', 'im_sub_session_log'],
      ['ImSubSession_close', 'id'],
      ['ImSubSession_close', 'im_sub_session_log'],
      ['ShutQueue_create', 'id'],
      ['ShutQueue_create', 'customer_id'],
      ['ShutQueue_create', 'queue_type'],
      ['ShutQueue_create', 'queue_id'],
      ['ShutQueue_create', 'queue_name'],
      ['AgentNote_update', 'note_id'],
      ['ImSurveyVote_create', 'sub_session_id'],
      ['ImSurveyVote_create', 'option_id'],
    ])('%s without %s', (action, field) => {
      expect(problemsAfter(action, (message) => delete message[field])).toEqual([{ path: field, problem: 'is required' }]);
    });

    it('reports every missing required field at once', () => {
      expect(validateEventMessage('ShutQueue_create', {})).toEqual([
        { path: 'id', problem: 'is required' },
        { path: 'customer_id', problem: 'is required' },
        { path: 'queue_name', problem: 'is required' },
        { path: 'queue_type', problem: 'is required' },
        { path: 'queue_id', problem: 'is required' },
      ]);
    });

    it.each<[EventAction, Json]>([
      ['Customer_create', { id: 1 }],
      ['Customer_update', { id: 1, changes: {} }],
      ['Customer_destroy', { id: 1 }],
      ['Organization_create', { id: 1 }],
      ['Organization_update', { id: 1, changes: { name: ['a', 'b'] } }],
      ['Organization_destroy', { id: 1 }],
      ['ImSubSession_create', { id: 1, im_sub_session_log: [] }],
      ['ImSubSession_close', { id: 1, im_sub_session_log: [{}] }],
      ['ShutQueue_create', { id: 'a', customer_id: 'b', queue_type: 'agent', queue_id: '7', queue_name: 'Li' }],
      ['AgentNote_update', { note_id: 1, conversation_id: 2 }],
      ['ImSurveyVote_create', { sub_session_id: 1, option_id: 2 }],
    ])('%s with only its required fields is valid', (action, message) => {
      expect(validateEventMessage(action, message)).toEqual([]);
    });

    it('a required field sent as null is a type error', () => {
      expect(problemsAfter('Customer_destroy', (m) => (m.id = null))).toEqual([{ path: 'id', problem: 'must be an integer' }]);
      expect(problemsAfter('ShutQueue_create', (m) => (m.customer_id = null))).toEqual([{ path: 'customer_id', problem: 'must be a string' }]);
      expect(problemsAfter('ImSubSession_create', (m) => (m.im_sub_session_log = null))).toEqual([
        { path: 'im_sub_session_log', problem: 'must be an array' },
      ]);
    });
  });

  describe('types', () => {
    it.each<[string, unknown]>([
      ['a numeric string', '10086'],
      ['a fraction', 1.5],
      ['a boolean', true],
    ])('an integer field rejects %s', (_label, value) => {
      expect(problemsAfter('Customer_create', (m) => (m.id = value))).toEqual([{ path: 'id', problem: 'must be an integer' }]);
      expect(problemsAfter('Customer_create', (m) => (m.owner_id = value))).toEqual([{ path: 'owner_id', problem: 'must be an integer' }]);
    });

    it('accepts integral numbers written with a fraction part, as JSON.parse gives them', () => {
      expect(validateEventMessage('Customer_destroy', JSON.parse('{"id": 5.0}'))).toEqual([]);
    });

    it('checks strings, booleans, string arrays and integer arrays', () => {
      expect(
        problemsAfter('Customer_create', (m) => {
          m.nick_name = 5;
          m.is_blocked = 'false';
          m.tags = ['ok', 1];
          m.other_emails = 'a@example.com';
          m.email = ['a@example.com'];
        }),
      ).toEqual([
        { path: 'nick_name', problem: 'must be a string' },
        { path: 'is_blocked', problem: 'must be a boolean' },
        { path: 'tags', problem: 'must be an array of strings' },
        { path: 'email', problem: 'must be a string' },
        { path: 'other_emails', problem: 'must be an array of strings' },
      ]);
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).ticket_ids = [1, '2']))).toEqual([
        { path: 'im_sub_session_log[0].ticket_ids', problem: 'must be an array of integers' },
      ]);
    });

    it('rejects null where the seed does not allow it', () => {
      expect(
        problemsAfter('Customer_create', (m) => {
          m.nick_name = null;
          m.owner_id = null;
          m.is_blocked = null;
          m.tags = null;
          m.custom_fields = null;
          m.cellphones = null;
        }),
      ).toEqual([
        { path: 'nick_name', problem: 'must be a string' },
        { path: 'owner_id', problem: 'must be an integer' },
        { path: 'custom_fields', problem: 'must be an object' },
        { path: 'is_blocked', problem: 'must be a boolean' },
        { path: 'tags', problem: 'must be an array of strings' },
        { path: 'cellphones', problem: 'must be an array' },
      ]);
      expect(problemsAfter('ImSurveyVote_create', (m) => (m.created_at = null))).toEqual([
        { path: 'created_at', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS' },
      ]);
      expect(problemsAfter('ImSubSession_close', (m) => (chatLog(m).content = null))).toEqual([
        { path: 'im_log_infos[0].content', problem: 'must be a string holding a JSON object' },
      ]);
    });

    it('accepts null where the seed allows it', () => {
      expect(
        problemsAfter('Customer_create', (m) => {
          m.description = null;
          m.open_api_token = null;
          m.organization_id = null;
        }),
      ).toEqual([]);
      expect(
        problemsAfter('ImSubSession_close', (m) => {
          Object.assign(closeEntry(m), {
            resp_seconds: null,
            survey_vote_id: null,
            source_url: null,
            agent_invite_vote_count: null,
            search_keyword: null,
            custom_channel: null,
          });
          chatLog(m).survey_option_id = null;
          chatLog(m).content = JSON.stringify({ type: 'message', platform: 'web', data: { content: 'x', duration: null } });
        }),
      ).toEqual([]);
    });

    it('names null in the problem of a nullable field', () => {
      expect(
        problemsAfter('Customer_create', (m) => {
          m.description = 1;
          m.organization_id = '5001';
        }),
      ).toEqual([
        { path: 'description', problem: 'must be a string or null' },
        { path: 'organization_id', problem: 'must be an integer or null' },
      ]);
      expect(problemsAfter('ImSubSession_close', (m) => (chatLog(m).survey_option_id = 1.5))).toEqual([
        { path: 'im_log_infos[0].survey_option_id', problem: 'must be an integer or null' },
      ]);
    });

    it('number fields take fractions, not strings', () => {
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).resp_seconds = 0.25))).toEqual([]);
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).resp_seconds = '12'))).toEqual([
        { path: 'im_sub_session_log[0].resp_seconds', problem: 'must be a number or null' },
      ]);
    });

    it('queue_seconds of the close entry is an integer or a string', () => {
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).queue_seconds = 'not queued'))).toEqual([]);
      for (const value of [1.5, null, true]) {
        expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).queue_seconds = value))).toEqual([
          { path: 'im_sub_session_log[0].queue_seconds', problem: 'must be an integer or a string' },
        ]);
      }
    });

    it('"null or scalar" fields take scalars but not objects', () => {
      expect(problemsAfter('ImSubSession_close', (m) => Object.assign(closeEntry(m), { search_keyword: 'x', custom_channel: false }))).toEqual([]);
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).search_keyword = ['x']))).toEqual([
        { path: 'im_sub_session_log[0].search_keyword', problem: 'must be null, a string, a number or a boolean' },
      ]);
    });

    it('ShutQueue_create ids are strings, im_web_plugin_id an integer', () => {
      expect(
        problemsAfter('ShutQueue_create', (m) => {
          m.id = 1;
          m.queue_id = 301;
          m.im_web_plugin_id = '61';
        }),
      ).toEqual([
        { path: 'id', problem: 'must be a string' },
        { path: 'queue_id', problem: 'must be a string' },
        { path: 'im_web_plugin_id', problem: 'must be an integer' },
      ]);
    });
  });

  describe('formats', () => {
    it.each([
      ['a bad shape', '2024/03/15 09:30:12'],
      ['an ISO timestamp', '2024-03-15T09:30:12Z'],
      ['an impossible date', '2024-02-30 09:30:12'],
      ['an impossible time', '2024-03-15 24:00:00'],
    ])('timestamps: %s', (_label, value) => {
      expect(problemsAfter('AgentNote_update', (m) => (m.updated_at = value))).toEqual([
        { path: 'updated_at', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS' },
      ]);
      expect(problemsAfter('ImSubSession_create', (m) => (m.im_sub_session_log[0].created_at = value))).toEqual([
        { path: 'im_sub_session_log[0].created_at', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS' },
      ]);
    });

    it('checks every timestamp of the close event', () => {
      expect(
        problemsAfter('ImSubSession_close', (m) => {
          Object.assign(closeEntry(m), { created_at: 'x', closed_at: '2024-13-01 00:00:00', queue_start_time: '2024-03-15 09:29:37 +0800' });
          m.im_log_infos[1].created_at = '2024-03-15';
        }),
      ).toEqual([
        { path: 'im_sub_session_log[0].created_at', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS' },
        { path: 'im_sub_session_log[0].closed_at', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS' },
        { path: 'im_sub_session_log[0].queue_start_time', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS' },
        { path: 'im_log_infos[1].created_at', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS' },
      ]);
    });

    it.each(['2024-03-15 09:29:37', '2024-03-15 09:29:37 +08:00', '2024-03-15 09:29:37 CST', '2024-02-30 09:29:37 +0800'])(
      'ShutQueue_create times need a real +ZZZZ timestamp, not %s',
      (value) => {
        expect(
          problemsAfter('ShutQueue_create', (m) => {
            m.queue_start_time = value;
            m.queue_end_time = value;
          }),
        ).toEqual([
          { path: 'queue_start_time', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS +ZZZZ' },
          { path: 'queue_end_time', problem: 'must be a timestamp YYYY-MM-DD HH:MM:SS +ZZZZ' },
        ]);
      },
    );

    it.each<unknown>(['90', '90 s', '1.5s', 's', 90])('ShutQueue_create queue_seconds is <n>s, not %p', (value) => {
      expect(problemsAfter('ShutQueue_create', (m) => (m.queue_seconds = value))).toEqual([
        { path: 'queue_seconds', problem: 'must be a duration in seconds like 90s' },
      ]);
    });

    it('chat log content must be a string holding a JSON object', () => {
      const path = 'im_log_infos[1].content';
      const withContent = (content: unknown) => problemsAfter('ImSubSession_close', (m) => (m.im_log_infos[1].content = content));
      expect(withContent('hello')).toEqual([{ path, problem: 'must be a string holding a JSON object (it is not valid JSON)' }]);
      expect(withContent('[{"type":"message"}]')).toEqual([
        { path, problem: 'must be a string holding a JSON object (it holds JSON that is not an object)' },
      ]);
      expect(withContent({ type: 'message' })).toEqual([{ path, problem: 'must be a string holding a JSON object' }]);
      expect(withContent(JSON.stringify({ type: 7, data: { duration: '3' } }))).toEqual([
        { path, problem: 'its JSON field type must be a string; its JSON field data.duration must be a number or null' },
      ]);
    });
  });

  describe('value sets', () => {
    it('queue_type is agent, group or company', () => {
      expect(problemsAfter('ShutQueue_create', (m) => (m.queue_type = 'agent'))).toEqual([]);
      for (const value of ['team', 'Agent', '', null, 1]) {
        expect(problemsAfter('ShutQueue_create', (m) => (m.queue_type = value))).toEqual([
          { path: 'queue_type', problem: 'must be one of agent, group, company' },
        ]);
      }
    });

    it('close_method and resolved_state', () => {
      for (const close_method of ['agent_close', 'redirect_close', 'sys_close', 'customer_close']) {
        expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).close_method = close_method))).toEqual([]);
      }
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).resolved_state = '1'))).toEqual([]);
      expect(
        problemsAfter('ImSubSession_close', (m) => {
          closeEntry(m).close_method = 'timeout';
          closeEntry(m).resolved_state = 0;
        }),
      ).toEqual([
        { path: 'im_sub_session_log[0].close_method', problem: 'must be one of agent_close, redirect_close, sys_close, customer_close' },
        { path: 'im_sub_session_log[0].resolved_state', problem: 'must be one of 0, 1' },
      ]);
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).resolved_state = '2'))).toEqual([
        { path: 'im_sub_session_log[0].resolved_state', problem: 'must be one of 0, 1' },
      ]);
    });

    it('send_status is one of the set or empty', () => {
      for (const send_status of ['sending', 'arrive', 'fail', 'off_sending', 'off_arrive', 'rollback', '']) {
        expect(problemsAfter('ImSubSession_close', (m) => (chatLog(m).send_status = send_status))).toEqual([]);
      }
      expect(problemsAfter('ImSubSession_close', (m) => (chatLog(m).send_status = 'sent'))).toEqual([
        {
          path: 'im_log_infos[0].send_status',
          problem: 'must be one of sending, arrive, fail, off_sending, off_arrive, rollback or an empty string',
        },
      ]);
    });

    it('chat log sender is customer or agent; the close entry sender is free text', () => {
      expect(problemsAfter('ImSubSession_close', (m) => (chatLog(m).sender = 'robot'))).toEqual([
        { path: 'im_log_infos[0].sender', problem: 'must be one of customer, agent' },
      ]);
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).sender = 'robot'))).toEqual([]);
    });
  });

  describe('the company-queue rule', () => {
    it('queue_type company needs the literal company in queue_name and queue_id', () => {
      const company = { queue_type: 'company', queue_name: 'company', queue_id: 'company' };
      expect(problemsAfter('ShutQueue_create', (m) => Object.assign(m, company))).toEqual([]);
      expect(problemsAfter('ShutQueue_create', (m) => Object.assign(m, company, { queue_name: '全公司', queue_id: '1' }))).toEqual([
        { path: 'queue_name', problem: 'must be company when queue_type is company' },
        { path: 'queue_id', problem: 'must be company when queue_type is company' },
      ]);
    });

    it('does not constrain agent and group queues', () => {
      expect(problemsAfter('ShutQueue_create', (m) => Object.assign(m, { queue_type: 'agent', queue_name: '客服小李', queue_id: '2001' }))).toEqual([]);
    });
  });

  describe('AgentNote_update: exactly one of sub_session_id and conversation_id', () => {
    it('accepts the IM form and the CC form', () => {
      expect(problemsAfter('AgentNote_update', () => undefined)).toEqual([]);
      expect(
        problemsAfter('AgentNote_update', (m) => {
          delete m.sub_session_id;
          m.conversation_id = 31337;
        }),
      ).toEqual([]);
    });

    it('rejects both', () => {
      expect(problemsAfter('AgentNote_update', (m) => (m.conversation_id = 31337))).toEqual([
        { path: 'conversation_id', problem: 'must not be sent together with sub_session_id (exactly one of sub_session_id, conversation_id)' },
      ]);
    });

    it('rejects neither', () => {
      expect(problemsAfter('AgentNote_update', (m) => delete m.sub_session_id)).toEqual([
        { path: 'sub_session_id', problem: 'exactly one of sub_session_id, conversation_id is required' },
      ]);
    });

    it('still type-checks the one that is sent', () => {
      expect(problemsAfter('AgentNote_update', (m) => (m.sub_session_id = '880001'))).toEqual([
        { path: 'sub_session_id', problem: 'must be an integer' },
      ]);
      expect(
        problemsAfter('AgentNote_update', (m) => {
          delete m.sub_session_id;
          m.conversation_id = null;
        }),
      ).toEqual([{ path: 'conversation_id', problem: 'must be an integer' }]);
    });
  });

  describe('custom fields', () => {
    it('keys must be SelectField_<n> or TextField_<n>, with arrays of strings and strings', () => {
      expect(
        problemsAfter('Customer_create', (m) => {
          m.custom_fields = { SelectField_1: 'VIP', TextField_2: ['a'], DateField_3: '2024-01-01', SelectField_4: ['ok'] };
        }),
      ).toEqual([
        { path: 'custom_fields.SelectField_1', problem: 'must be an array of strings' },
        { path: 'custom_fields.TextField_2', problem: 'must be a string' },
        { path: 'custom_fields.DateField_3', problem: 'must be a custom field name SelectField_<n> or TextField_<n>' },
      ]);
      expect(problemsAfter('Organization_create', (m) => (m.custom_fields.TextField_202 = 3))).toEqual([
        { path: 'custom_fields.TextField_202', problem: 'must be a string' },
      ]);
      expect(problemsAfter('Organization_create', (m) => (m.custom_fields = ['SelectField_1']))).toEqual([
        { path: 'custom_fields', problem: 'must be an object' },
      ]);
    });

    it('customer_custom_fields of the close entry is any object', () => {
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).customer_custom_fields = { whatever: [1, { a: null }] }))).toEqual([]);
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).customer_custom_fields = []))).toEqual([
        { path: 'im_sub_session_log[0].customer_custom_fields', problem: 'must be an object' },
      ]);
    });

    it('note_custom_fields maps names to strings', () => {
      expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).note_custom_fields = { 备注: '文本', SelectField_9: ['x'] }))).toEqual([
        { path: 'im_sub_session_log[0].note_custom_fields.SelectField_9', problem: 'must be a string' },
      ]);
    });
  });

  describe('changes of the update events', () => {
    it.each<EventAction>(['Customer_update', 'Organization_update'])('%s: every value is a two-element array', (action) => {
      expect(
        problemsAfter(action, (m) => {
          m.changes = { level: ['normal'], name: ['a', 'b', 'c'], tags: 'x', email: [null, 'a@example.com'] };
        }),
      ).toEqual([
        { path: 'changes.level', problem: 'must be a two-element array [original value, new value]' },
        { path: 'changes.name', problem: 'must be a two-element array [original value, new value]' },
        { path: 'changes.tags', problem: 'must be a two-element array [original value, new value]' },
      ]);
      expect(problemsAfter(action, (m) => (m.changes = [['a', 'b']]))).toEqual([
        { path: 'changes', problem: 'must be an object mapping each changed field to [original value, new value]' },
      ]);
    });
  });

  describe('nested entries', () => {
    it('reports paths into arrays and objects', () => {
      expect(
        problemsAfter('ImSubSession_close', (m) => {
          closeEntry(m).chatapp_info = { name: 1 };
          m.im_log_infos[2].user_id = '2001';
        }),
      ).toEqual([
        { path: 'im_sub_session_log[0].chatapp_info.name', problem: 'must be a string' },
        { path: 'im_log_infos[2].user_id', problem: 'must be an integer' },
      ]);
      expect(problemsAfter('Customer_create', (m) => (m.cellphones[1].id = '2'))).toEqual([{ path: 'cellphones[1].id', problem: 'must be an integer' }]);
    });

    it('an element that is not an object is reported, not skipped', () => {
      expect(problemsAfter('Customer_create', (m) => m.cellphones.push('13900000000', null, [{ id: 3 }]))).toEqual([
        { path: 'cellphones[2]', problem: 'must be an object' },
        { path: 'cellphones[3]', problem: 'must be an object' },
        { path: 'cellphones[4]', problem: 'must be an object' },
      ]);
      expect(problemsAfter('ImSubSession_create', (m) => (m.im_sub_session_log = [7]))).toEqual([
        { path: 'im_sub_session_log[0]', problem: 'must be an object' },
      ]);
    });

    it('a list that is not an array gets one problem, however it is shaped', () => {
      for (const value of ['x', 3, { 0: { id: 'a' } }, { session_id: 'a' }]) {
        expect(problemsAfter('ImSubSession_create', (m) => (m.im_sub_session_log = value))).toEqual([
          { path: 'im_sub_session_log', problem: 'must be an array' },
        ]);
      }
      expect(problemsAfter('ImSubSession_close', (m) => (m.im_log_infos = { id: 1 }))).toEqual([{ path: 'im_log_infos', problem: 'must be an array' }]);
    });

    it('a nested object that is not an object gets one problem', () => {
      for (const value of ['service_account_demo', [{ name: 1 }], null]) {
        expect(problemsAfter('ImSubSession_close', (m) => (closeEntry(m).chatapp_info = value))).toEqual([
          { path: 'im_sub_session_log[0].chatapp_info', problem: 'must be an object' },
        ]);
      }
    });

    it('im_log_infos is optional on close', () => {
      expect(problemsAfter('ImSubSession_close', (m) => delete m.im_log_infos)).toEqual([]);
    });
  });

  describe('unlisted fields and immutability', () => {
    it('passes unlisted fields at every level and leaves the message exactly as it was', () => {
      const message = structuredClone(SAMPLE_MESSAGES.ImSubSession_close) as Json;
      message.trace_id = { nested: ['kept', 1, null] };
      closeEntry(message).brand_new = 'x';
      chatLog(message).reactions = [{ emoji: '👍' }];
      closeEntry(message).chatapp_info.open_id = 'abc';
      const copy = structuredClone(message);
      expect(validateEventMessage('ImSubSession_close', message)).toEqual([]);
      expect(message).toStrictEqual(copy);
    });

    it('does not modify an invalid message either', () => {
      const message = structuredClone(SAMPLE_MESSAGES.Customer_create) as Json;
      message.id = '1';
      message.cellphones.push('x');
      message.custom_fields.Bad = 1;
      const copy = structuredClone(message);
      expect(validateEventMessage('Customer_create', message)).toHaveLength(3);
      expect(message).toStrictEqual(copy);
    });

    it('is not fooled by __proto__ or constructor keys (CONTRACT §4: __proto__ refused, constructor an ordinary key)', () => {
      const message = JSON.parse('{"id": 1, "constructor": {"prototype": {}}}');
      expect(validateEventMessage('Customer_destroy', message)).toEqual([]);
      expect(validateEventMessage('Customer_destroy', JSON.parse('{"constructor": {"id": 1}}'))).toEqual([{ path: 'id', problem: 'is required' }]);
      expect(validateEventMessage('Customer_destroy', JSON.parse('{"id": 1, "__proto__": {"id": "x"}}'))).toEqual([{ path: '__proto__', problem: PROTO_KEY_PROBLEM }]);
      expect(({} as Json).id).toBeUndefined();
    });
  });
});
