import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { MAX_RECORD_ID } from '@app/payloads';
import { invalidQuery } from '@app/runtime';

/**
 * Path ids (`:id`, `:bot_id`): a positive integer that fits the integer id columns, else 422 naming the
 * parameter. ParseIntPipe alone lets 99999999999 through to PostgreSQL, which then fails with a 500.
 */
@Injectable()
export class IdParamPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    const name = metadata.data ?? 'id';
    const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(id) || id < 1 || id > MAX_RECORD_ID) {
      throw invalidQuery([{ path: name, problem: `${name} must be an integer from 1 to ${MAX_RECORD_ID}` }]);
    }
    return id;
  }
}
