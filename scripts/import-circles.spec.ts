import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { folderCircles, importCircles, importGraph } from './import-circles';

/** A temporary tree of the given files (path → content), removed after `check`. */
function withTree(files: Record<string, string>, check: (root: string) => void): void {
  const root = mkdtempSync(join(tmpdir(), 'import-circles-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    check(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const relativeTo = (root: string) => (circles: string[][]) => circles.map((circle) => circle.map((path) => relative(root, path)));

describe('import circles', () => {
  const root = resolve(__dirname, '..');
  const graph = importGraph(root);

  it('the repository has none (type-only imports and re-exports count)', () => {
    expect(relativeTo(root)(importCircles(graph))).toEqual([]);
  });

  it('the repository has no folder loop (sibling folders importing each other)', () => {
    expect(relativeTo(root)(folderCircles(graph, root))).toEqual([]);
  });

  it('finds a circle closed by a type-only import, and leaves a plain chain alone', () => {
    withTree(
      {
        'a.ts': "import { b } from './b';\nexport const a = b;\n",
        'b.ts': "import type { C } from './c';\nexport const b: C = 1;\n",
        'c.ts': "import type { a } from './a';\nexport type C = typeof a;\n",
        'd.ts': "export * from './a';\n",
      },
      (tree) => expect(relativeTo(tree)(importCircles(importGraph(tree)))).toEqual([['a.ts', 'b.ts', 'c.ts']]),
    );
  });

  it('finds sibling folders that import each other through different files (no file circle), at any depth', () => {
    withTree(
      {
        'apps/shop/src/orders/order-store.ts': "import type { Rule } from '../rules/rule';\nexport type Order = { rule: Rule };\n",
        'apps/shop/src/rules/rule.ts': 'export type Rule = string;\n',
        'apps/shop/src/rules/rule-check.ts': "import type { Order } from '../orders/order-store';\nexport const check = (order: Order) => order.rule;\n",
        'apps/shop/src/main.ts': "import { check } from './rules/rule-check';\nexport const run = check;\n",
      },
      (tree) => {
        const treeGraph = importGraph(tree);
        expect(importCircles(treeGraph)).toEqual([]);
        expect(relativeTo(tree)(folderCircles(treeGraph, tree))).toEqual([['apps/shop/src/orders', 'apps/shop/src/rules']]);
      },
    );
  });

  it('leaves one-way folder imports, a folder using its own sub-folders, and folders outside apps and libs alone', () => {
    withTree(
      {
        'test/support/helper.ts': "import { b } from '../../libs/base/b/b';\nexport const helper = b;\n",
        'libs/base/b/b.spec.ts': "import { helper } from '../../../test/support/helper';\nexport const spec = helper;\n",
        'libs/base/a/a.ts': "import { b } from '../b/b';\nimport { inner } from './inner/inner';\nexport const a = b + inner;\n",
        'libs/base/a/inner/inner.ts': "import { b } from '../../b/b';\nexport const inner = b;\n",
        'libs/base/b/b.ts': 'export const b = 1;\n',
        'libs/base/b/deep/c.ts': "import { b } from '../b';\nexport const c = b;\n",
      },
      (tree) => expect(folderCircles(importGraph(tree), tree)).toEqual([]),
    );
  });
});
