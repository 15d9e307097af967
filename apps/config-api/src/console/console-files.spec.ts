import { join } from 'node:path';
import { CONSOLE_PAGE_ROUTE, consoleDirectory } from './console-files';

describe('console files', () => {
  it.each(['/admin', '/admin/', '/admin/events', '/admin/events/evt_1%3Cb%3E', '/admin/accounts/12', '/admin/bot-calls', '/admin/v1x'])(
    'answers the page route %s with the console',
    (path) => expect(CONSOLE_PAGE_ROUTE.test(path)).toBe(true),
  );

  it.each(['/admin/v1', '/admin/v1/', '/admin/v1/events', '/admin/assets/index-abc.js', '/administrator', '/docs', '/'])(
    'leaves %s to the API, the static files or the 404',
    (path) => expect(CONSOLE_PAGE_ROUTE.test(path)).toBe(false),
  );

  it('finds dist/console of the repository from the source and from the compiled app alike', () => {
    const root = join(__dirname, '..', '..', '..', '..');
    expect(consoleDirectory()).toBe(join(root, 'dist', 'console'));
    expect(consoleDirectory(join(root, 'dist', 'apps', 'config-api', 'src', 'console'))).toBe(join(root, 'dist', 'console'));
  });
});
