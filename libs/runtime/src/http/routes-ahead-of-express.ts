import { BadRequestException } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { json } from 'express';
import type { Environment } from '../config/environment';
import { requestLog } from '../logging/logging';
import { type ErrorAnswer, errorAnswer } from './error.filter';
import { securityHeaders } from './security-headers';

/** The body limit of every app's JSON and form parsers. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What a route answers: a status and a JSON body (errors are thrown and answered like the global filter does). */
export type JsonAnswer = ErrorAnswer;

export interface RouteAheadOfExpress {
  /** The exact request target (no query string, no trailing slash): anything else goes to Express as before. */
  path: string;
  /** Runs once the JSON body is parsed, where a Nest guard, pipe and handler would; throws like they do. */
  handle(body: unknown, request: IncomingMessage): Promise<JsonAnswer>;
}

/** A token check for every request under a path prefix, made before its body is read (CONTRACT §4). */
export interface TokenBeforeBody {
  /** e.g. `/v1/`: every request whose path starts with it, whatever its method, body or route. */
  pathPrefix: string;
  /** Throws the 401 (an ApiError) when the `Authorization` header carries no valid token. */
  verify(authorization: string | undefined): void;
}

/** `scheme://authority` at the start of a request target in absolute form (RFC 9112 §3.2.2). */
const ABSOLUTE_FORM_ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The origin-form target (`/path?query`) of a request, also when the client sent it in absolute form
 * (`POST http://host/v1/events`): Express routes both alike, so both must meet the same checks first.
 */
export function originFormTarget(url: string | undefined): string {
  const target = url ?? '';
  const origin = ABSOLUTE_FORM_ORIGIN.exec(target);
  if (!origin) return target;
  const rest = target.slice(origin[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

type Listener = (request: IncomingMessage, response: ServerResponse) => void;
type Middleware = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void;

/** Express's weak ETag (the `etag` package with `weak: true`) of a UTF-8 body, which res.json sets on every answer. */
function weakEtag(text: string): string {
  const hash = createHash('sha1').update(text, 'utf8').digest('base64').substring(0, 27);
  return `W/"${Buffer.byteLength(text, 'utf8').toString(16)}-${hash}"`;
}

/** What Express's `res.status(status).json(body)` writes, header for header. */
function sendJson(response: ServerResponse, { status, body }: JsonAnswer): void {
  const text = JSON.stringify(body);
  response.statusCode = status;
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(text, 'utf8'));
  response.setHeader('ETag', weakEtag(text));
  response.end(text);
}

/**
 * What Nest's RoutesResolver makes of a body-parser error before the global filter sees it: invalid
 * JSON (a SyntaxError with status 400) becomes a BadRequestException carrying the parser's message.
 */
function parserException(error: unknown): unknown {
  const status = (error as { status?: unknown } | null)?.status;
  return (error instanceof SyntaxError || error instanceof URIError) && status === 400 ? new BadRequestException(error.message) : error;
}

function asMiddleware(handler: RequestHandler): Middleware {
  return handler as unknown as Middleware;
}

/**
 * Serves a few hot POST routes with a plain node:http listener installed in front of the Express app
 * (every other request, and any of these whose body is not JSON, is handed to Express untouched).
 *
 * Express's router, Nest's per-request pipeline (route lookup, guards, pipes, interceptors, the
 * exception zone) cost several times the work of an event; profiles put them at most of ingest's CPU
 * per request. The steps here are the same pieces, in the same order, that configureHttpApp and the
 * logger module give every route: helmet's headers, the same JSON body parser and limit, the request
 * log, then the route (token check, validation, work), and errors answered
 * by the global filter's own errorAnswer. Routes stay declared as Nest controllers too, for the docs
 * and for the requests handed on.
 */
export function serveRoutesAheadOfExpress(
  server: Server,
  routes: readonly RouteAheadOfExpress[],
  environment: Environment,
  tokenBeforeBody?: TokenBeforeBody,
): void {
  const expressListeners = server.listeners('request') as Listener[];
  const handOn: Listener = (request, response) => {
    for (const listener of expressListeners) listener.call(server, request, response);
  };
  const byPath = new Map(routes.map((route) => [route.path, route]));
  const headers = asMiddleware(securityHeaders());
  const parseJson = asMiddleware(json({ limit: MAX_BODY_BYTES }));
  const logRequest = requestLog(environment);

  const serve = async (route: RouteAheadOfExpress, request: IncomingMessage & { body?: unknown }, response: ServerResponse): Promise<void> => {
    let answer: JsonAnswer;
    try {
      answer = await route.handle(request.body, request);
    } catch (error) {
      answer = errorAnswer(error, route.path, request);
    }
    sendJson(response, answer);
  };

  /** True when the request was answered 401 here, unread: nobody's body is parsed before their token is known good. */
  const refusedUnread = (request: IncomingMessage, response: ServerResponse): boolean => {
    const url = originFormTarget(request.url);
    // Lower-cased: Express matches routes case-insensitively, so `/V1/events` reaches the same controller.
    if (!tokenBeforeBody || !url.toLowerCase().startsWith(tokenBeforeBody.pathPrefix)) return false;
    try {
      tokenBeforeBody.verify(request.headers.authorization);
      return false;
    } catch (error) {
      const path = url.split('?')[0];
      headers(request, response, () => {
        logRequest(request, response);
        sendJson(response, errorAnswer(error, path, request));
      });
      return true;
    }
  };

  const listener: Listener = (request: IncomingMessage & { body?: unknown }, response) => {
    if (refusedUnread(request, response)) return;
    const route = request.method === 'POST' ? byPath.get(originFormTarget(request.url)) : undefined;
    if (!route) return handOn(request, response);
    headers(request, response, () =>
      parseJson(request, response, (error?: unknown) => {
        if (error !== undefined) return sendJson(response, errorAnswer(parserException(error), route.path, request));
        // Not parsed (no body, or not application/json): the stream is untouched and Express judges it as before.
        if (request.body === undefined) return handOn(request, response);
        logRequest(request, response);
        void serve(route, request, response);
      }),
    );
  };
  server.removeAllListeners('request');
  server.on('request', listener);
}
