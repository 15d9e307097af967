/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a key names something every object inherits (`constructor`, `toString`, `__proto__`…). */
export function isPrototypeMemberName(key: string): boolean {
  return key in Object.prototype;
}

/**
 * A copy of a JSON value without the keys that name Object.prototype's members, at every depth, for
 * class-transformer: it skips such keys, and crashes on an object whose own `constructor` is an object
 * (it takes it for the class). Those keys are ordinary data to keep (CONTRACT §4): only the copy handed
 * to the validators leaves them out, never what is stored. Iterative, so no depth overflows the stack.
 */
export function withoutPrototypeMemberKeys(value: unknown): unknown {
  const copyOf = (source: unknown): unknown => {
    if (Array.isArray(source)) return new Array<unknown>(source.length);
    return isPlainObject(source) ? {} : source;
  };
  const root = copyOf(value);
  const pending: [unknown, unknown][] = [[value, root]];
  while (pending.length > 0) {
    const [source, target] = pending.pop() as [unknown, unknown];
    if (Array.isArray(source)) {
      const copy = target as unknown[];
      source.forEach((element, index) => {
        copy[index] = copyOf(element);
        pending.push([element, copy[index]]);
      });
    } else if (isPlainObject(source)) {
      const copy = target as Record<string, unknown>;
      for (const key of Object.keys(source)) {
        if (isPrototypeMemberName(key)) continue;
        copy[key] = copyOf(source[key]);
        pending.push([source[key], copy[key]]);
      }
    }
  }
  return root;
}
