import { applyDecorators, HttpCode, Post, UseGuards } from '@nestjs/common';
import { Audit } from '../audit/audit.decorator';
import { JsonBodyGuard } from './json-body.guard';

/**
 * A signed call with a JSON body, the seed's way: `POST <name>` answering 200 (its body's `code` says
 * how it went) and recorded in the audit log under the same name. The content type is checked by a
 * method guard, so only after the controller's signature check.
 */
export function OpenApiJsonCall(name: string): MethodDecorator {
  return applyDecorators(Audit(name), Post(name), HttpCode(200), UseGuards(JsonBodyGuard));
}
