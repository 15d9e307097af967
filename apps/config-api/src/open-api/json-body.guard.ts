import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { unsupportedMediaType } from './open-api-errors';

/**
 * The Open API's POST bodies are JSON (seed: "sent with content type JSON"). Any other declared type
 * is 415; a request without a body passes and then fails the body checks with the seed's messages.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    // `is` answers null when there is no body, false when the body has another type.
    if (request.is('application/json') === false) {
      throw unsupportedMediaType(`request body must be JSON (Content-Type: application/json), not ${request.headers['content-type'] ?? 'untyped'}`);
    }
    return true;
  }
}
