import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { differences, GENERATED, generateInto } from './generate';
import type { ApiDocument } from './openapi-subset';

/**
 * The generators over the checked-in document: they make exactly the checked-in clients, and a field the
 * service adds to an answer reaches both clients' types (what `npm run clients:check` catches in CI).
 */
describe('the client generators', () => {
  const document = JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8')) as ApiDocument;
  let folder: string;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'clients-generate-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('make the checked-in clients from the checked-in document', () => {
    generateInto(folder, document);
    expect(differences(folder)).toEqual([]);
  });

  it('carry a field added to the destination view into both clients', () => {
    const changed = structuredClone(document);
    const schema = changed.components?.schemas?.DestinationModel as { properties: Record<string, unknown> };
    schema.properties.paused_reason = { type: ['string', 'null'], description: 'Why it was paused.' };
    generateInto(folder, changed);
    expect(differences(folder)).toEqual([
      'clients/openapi.json',
      join('clients', GENERATED.python, 'models.py'),
      join('clients', GENERATED.typescript, 'types.gen.ts'),
    ]);
    expect(readFileSync(join(folder, GENERATED.typescript, 'types.gen.ts'), 'utf8')).toContain('paused_reason?: string | null;');
    expect(readFileSync(join(folder, GENERATED.python, 'models.py'), 'utf8')).toContain('paused_reason: str | None | Unset = UNSET');
  });
});
