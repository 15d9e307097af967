import { setBounded } from './bounded-map';

describe('setBounded', () => {
  it('drops the oldest insertion once the map is full, and keeps the rest in order', () => {
    const map = new Map<string, number>();
    for (const [index, key] of ['a', 'b', 'c', 'd'].entries()) setBounded(map, key, index, 3);
    expect([...map]).toEqual([
      ['b', 1],
      ['c', 2],
      ['d', 3],
    ]);
  });
});
