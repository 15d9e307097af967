import { IntegerField, StringField, TimestampField } from './field.decorators';

/** ImSurveyVote_create: a saved satisfaction vote. */
export class ImSurveyVoteCreateMessage {
  @TimestampField()
  created_at?: string;

  @IntegerField('required')
  sub_session_id!: number;

  @IntegerField('required')
  option_id!: number;

  @StringField()
  option_name?: string;

  /** Comma separated labels in one string, not an array. */
  @StringField()
  tags?: string;

  @StringField()
  remark?: string;
}
