import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { importCircles, importGraph } from './import-circles';

describe('import circles', () => {
  it('the repository has none (type-only imports and re-exports count)', () => {
    const root = resolve(__dirname, '..');
    const circles = importCircles(importGraph(root)).map((circle) => circle.map((file) => relative(root, file)));
    expect(circles).toEqual([]);
  });

  it('finds a circle closed by a type-only import, and leaves a plain chain alone', () => {
    const root = mkdtempSync(join(tmpdir(), 'import-circles-'));
    try {
      writeFileSync(join(root, 'a.ts'), "import { b } from './b';\nexport const a = b;\n");
      writeFileSync(join(root, 'b.ts'), "import type { C } from './c';\nexport const b: C = 1;\n");
      writeFileSync(join(root, 'c.ts'), "import type { a } from './a';\nexport type C = typeof a;\n");
      writeFileSync(join(root, 'd.ts'), "export * from './a';\n");
      const circles = importCircles(importGraph(root)).map((circle) => circle.map((file) => relative(root, file)));
      expect(circles).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
