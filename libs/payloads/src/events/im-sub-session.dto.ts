import {
  CHAT_LOG_SENDERS,
  CLOSE_METHODS,
  RESOLVED_STATES,
  SEND_STATUSES,
  type ChatLogSender,
  type CloseMethod,
  type ResolvedState,
  type SendStatus,
} from './event-message.constants';
import {
  IntegerArrayField,
  IntegerField,
  IntegerOrStringField,
  JsonObjectStringField,
  NestedArrayField,
  NestedObjectField,
  NumberField,
  ObjectField,
  OneOfField,
  ScalarOrNullField,
  StringArrayField,
  StringField,
  StringMapField,
  TimestampField,
} from './field.decorators';

/** Element of `im_sub_session_log` on ImSubSession_create. */
export class SubSessionCreateEntry {
  @IntegerField()
  session_id?: number;

  @IntegerField()
  sub_session_id?: number;

  @IntegerField()
  agent_id?: number;

  @IntegerField()
  customer_id?: number;

  @StringField()
  platform?: string;

  @StringField()
  source?: string;

  @StringField()
  weifeng?: string;

  @TimestampField()
  created_at?: string;
}

export class ChatappInfo {
  @StringField()
  name?: string;
}

/** Element of `im_sub_session_log` on ImSubSession_close. */
export class SubSessionCloseEntry {
  @IntegerField()
  session_id?: number;

  @IntegerField()
  sub_session_id?: number;

  @IntegerField()
  note_id?: number;

  @StringField()
  note_content?: string;

  @StringMapField()
  note_custom_fields?: Record<string, string>;

  @StringField()
  note_template_id?: string;

  @StringField()
  note_template_name?: string;

  @IntegerField()
  customer_id?: number;

  @StringField()
  customer_name?: string;

  /** Typed only as "object" by the seed, so neither its keys nor its values are checked. */
  @ObjectField()
  customer_custom_fields?: Record<string, unknown>;

  @IntegerField()
  agent_id?: number;

  @StringField()
  agent_nick_name?: string;

  @StringField()
  agent_email?: string;

  @TimestampField()
  created_at?: string;

  @TimestampField()
  closed_at?: string;

  @NumberField('nullable')
  resp_seconds?: number | null;

  @IntegerOrStringField()
  queue_seconds?: number | string;

  @IntegerField()
  sustain_seconds?: number;

  @IntegerField('nullable')
  survey_vote_id?: number | null;

  @StringField()
  platform?: string;

  @StringField()
  source?: string;

  @StringField()
  belong_queue?: string;

  @IntegerField()
  agent_msg_num?: number;

  @IntegerField()
  customer_msg_num?: number;

  @StringField('nullable')
  source_url?: string | null;

  @TimestampField()
  queue_start_time?: string;

  @IntegerField()
  conversations_num_today?: number;

  @ScalarOrNullField()
  agent_invite_vote_count?: string | number | boolean | null;

  @ScalarOrNullField()
  search_keyword?: string | number | boolean | null;

  @ScalarOrNullField()
  custom_channel?: string | number | boolean | null;

  @StringField()
  last_response?: string;

  @IntegerField()
  alert_num?: number;

  @StringField()
  alert_desc?: string;

  @IntegerField()
  ticket_num?: number;

  @StringField()
  ticket_nos?: string;

  @IntegerArrayField()
  ticket_ids?: number[];

  @IntegerField()
  im_web_plugin_id?: number;

  /** A free string here; only the chat log's `sender` has the customer/agent value set. */
  @StringField()
  sender?: string;

  @StringField()
  active_guest?: string;

  @StringField()
  weifeng?: string;

  @OneOfField(CLOSE_METHODS)
  close_method?: CloseMethod;

  @IntegerField()
  robot_session_id?: number;

  @OneOfField(RESOLVED_STATES)
  resolved_state?: ResolvedState;

  @StringField()
  curl_url?: string;

  @StringArrayField()
  customer_tags?: string[];

  @NestedObjectField(() => ChatappInfo)
  chatapp_info?: ChatappInfo;
}

/** Element of `im_log_infos` on ImSubSession_close. */
export class ChatLogEntry {
  @IntegerField()
  id?: number;

  @TimestampField()
  created_at?: string;

  @OneOfField(CHAT_LOG_SENDERS)
  sender?: ChatLogSender;

  @IntegerField()
  user_id?: number;

  @JsonObjectStringField()
  content?: string;

  @IntegerField()
  session_id?: number;

  @IntegerField()
  sub_session_id?: number;

  @IntegerField('nullable')
  survey_option_id?: number | null;

  @OneOfField(SEND_STATUSES, 'optional', { allowEmpty: true })
  send_status?: SendStatus | '';
}

export class ImSubSessionCreateMessage {
  @IntegerField('required')
  id!: number;

  @NestedArrayField(() => SubSessionCreateEntry, 'required')
  im_sub_session_log!: SubSessionCreateEntry[];
}

export class ImSubSessionCloseMessage {
  @IntegerField('required')
  id!: number;

  @NestedArrayField(() => SubSessionCloseEntry, 'required')
  im_sub_session_log!: SubSessionCloseEntry[];

  @NestedArrayField(() => ChatLogEntry)
  im_log_infos?: ChatLogEntry[];
}
