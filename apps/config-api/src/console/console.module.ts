import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ExpressAdapter } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONSOLE_PAGE_ROUTE, CONSOLE_ROOT, consoleDirectory } from './console-files';

/**
 * Serves the operators' console (static files built by `npm run build` into dist/console) at `/admin`.
 * Registered on module init, after Nest has mounted its controllers, so `/admin/v1/*` always reaches the
 * admin API first; the security headers come from configureHttpApp like on every other response.
 */
@Module({})
export class ConsoleModule implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter as ExpressAdapter;
    const directory = consoleDirectory();
    const indexFile = join(directory, 'index.html');
    // File names under assets/ carry a content hash, so they never change; index.html always revalidates.
    adapter.useStaticAssets(directory, {
      prefix: CONSOLE_ROOT,
      index: false,
      redirect: false,
      fallthrough: true,
      setHeaders: (response: Response, path: string) => {
        response.setHeader('Cache-Control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
    adapter.get(CONSOLE_PAGE_ROUTE, (_request: Request, response: Response) => {
      if (!existsSync(indexFile)) {
        response.status(404).json({ error: 'not_found', message: 'the console is not built: run `npm run build` (it writes dist/console)' });
        return;
      }
      response.setHeader('Cache-Control', 'no-cache');
      response.sendFile(indexFile);
    });
  }
}
