import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ExpressAdapter } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { errorCodeWord } from '@app/runtime';
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
      // A Range the page cannot satisfy (`bytes=5-1`) fails the send with 416: answered as such, not left to a 500.
      response.sendFile(indexFile, (error?: Error & { status?: number }) => {
        if (!error || response.headersSent) return;
        const status = error.status !== undefined && error.status >= 400 && error.status < 500 ? error.status : 500;
        response.status(status).json({ error: errorCodeWord(status), message: status === 416 ? 'the requested range cannot be served' : 'the console page cannot be served' });
      });
    });
  }
}
