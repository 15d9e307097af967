import { IsInt } from 'class-validator';
import { ExactlyOneOf, IntegerField, StringField, TimestampField } from './field.decorators';

const NOTE_TARGETS = ['sub_session_id', 'conversation_id'] as const;

/** AgentNote_update: the IM form carries sub_session_id, the CC form conversation_id; never both. */
export class AgentNoteUpdateMessage {
  @TimestampField()
  updated_at?: string;

  @ExactlyOneOf(NOTE_TARGETS)
  @IsInt({ message: 'must be an integer' })
  sub_session_id?: number;

  @ExactlyOneOf(NOTE_TARGETS)
  @IsInt({ message: 'must be an integer' })
  conversation_id?: number;

  @IntegerField('required')
  note_id!: number;

  @StringField()
  note_content?: string;

  /** "e.g. SelectField_<n>" in the seed: an example, so the custom field key rule is not imposed. */
  @StringField()
  field_id?: string;

  @StringField()
  field_title?: string;

  /** Spelled `filed_value` on the wire, as the seed says. */
  @StringField()
  filed_value?: string;
}
