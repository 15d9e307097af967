import { CustomFieldMapField, IntegerField, StringField } from './field.decorators';

/** Organization_create: the seed's "Organization data" table. */
export class OrganizationCreateMessage {
  @IntegerField('required')
  id!: number;

  @StringField()
  name?: string;

  /** A single string in the seed (not a list), even though it may name several domains. */
  @StringField()
  domains?: string;

  @CustomFieldMapField()
  custom_fields?: Record<string, string | string[]>;

  @StringField()
  description?: string;
}
