import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ExpressAdapter } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { consoleDirectory } from '../console/console-files';

/** The portal's only page route; its views are chosen by the query, and /portal/v1/* stays the API. */
export const PORTAL_PAGE_ROUTE = /^\/portal\/?$/;

/**
 * Serves the account portal's page (portal.html of the console build, its assets under /admin/assets)
 * at `/portal`, with the same security headers and CSP as every response (configureHttpApp).
 */
@Module({})
export class PortalPageModule implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter as ExpressAdapter;
    const page = join(consoleDirectory(), 'portal.html');
    adapter.get(PORTAL_PAGE_ROUTE, (_request: Request, response: Response) => {
      if (!existsSync(page)) {
        response.status(404).json({ error: 'not_found', message: 'the portal is not built: run `npm run build` (it writes dist/console)' });
        return;
      }
      response.setHeader('Cache-Control', 'no-cache');
      response.sendFile(page);
    });
  }
}
