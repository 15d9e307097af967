import { Injectable, type PipeTransform } from '@nestjs/common';
import { validationFailed } from '@app/runtime';

const MAX_INT4 = 2_147_483_647;

/** `:id` path parameters: a positive integer that fits the accounts.id column, else 422 naming `id`. */
@Injectable()
export class AccountIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(id) || id < 1 || id > MAX_INT4) {
      throw validationFailed([{ path: 'id', problem: `id must be an account id (an integer from 1 to ${MAX_INT4})` }]);
    }
    return id;
  }
}
