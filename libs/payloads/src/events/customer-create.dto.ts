import {
  BooleanField,
  CustomFieldMapField,
  IntegerField,
  NestedArrayField,
  StringArrayField,
  StringField,
} from './field.decorators';

export class CellphoneEntry {
  @IntegerField()
  id?: number;

  @StringField()
  content?: string;
}

/** Customer_create: the seed's "Customer data" table; the customer has more fields it does not show. */
export class CustomerCreateMessage {
  @IntegerField('required')
  id!: number;

  @StringField()
  nick_name?: string;

  @StringField()
  level?: string;

  @StringField('nullable')
  description?: string | null;

  @IntegerField()
  owner_id?: number;

  @IntegerField()
  owner_group_id?: number;

  @CustomFieldMapField()
  custom_fields?: Record<string, string | string[]>;

  @StringField('nullable')
  open_api_token?: string | null;

  @IntegerField('nullable')
  organization_id?: number | null;

  @BooleanField()
  is_blocked?: boolean;

  @StringArrayField()
  tags?: string[];

  @StringField()
  email?: string;

  @StringArrayField()
  other_emails?: string[];

  @NestedArrayField(() => CellphoneEntry)
  cellphones?: CellphoneEntry[];

  @StringField()
  platform?: string;
}
