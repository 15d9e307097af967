const COMPOSITIONS = ['$ref', 'allOf', 'oneOf', 'anyOf'];

/**
 * @nestjs/swagger writes nullability the OpenAPI 3.0 way (`nullable: true`), a keyword OpenAPI 3.1
 * (JSON Schema 2020-12) no longer has: validators accept it silently and tools ignore it. This rewrites
 * it into 3.1's form, `type: [T, "null"]`, or `oneOf [schema, {type: null}]` for references and
 * compositions, so that null really is allowed where the code allows it.
 */
export function toOpenApi31Nullability(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) toOpenApi31Nullability(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Record<string, unknown>;
  for (const value of Object.values(schema)) toOpenApi31Nullability(value);
  if (!('nullable' in schema) || typeof schema.nullable !== 'boolean') return;

  const nullable = schema.nullable;
  delete schema.nullable;
  if (!nullable) return;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...(schema.enum as unknown[]), null];
  if (COMPOSITIONS.some((key) => key in schema)) {
    // A reference or a composition (@nestjs/swagger writes a nullable class as `allOf: [$ref]`): the
    // schema moves into a oneOf beside null; what describes the property (description, example) stays.
    const inner: Record<string, unknown> = {};
    for (const key of [...COMPOSITIONS, 'type', 'properties', 'items', 'additionalProperties']) {
      if (key in schema) {
        inner[key] = schema[key];
        delete schema[key];
      }
    }
    schema.oneOf = [inner, { type: 'null' }];
  } else if (typeof schema.type === 'string') {
    schema.type = [schema.type, 'null'];
  } else if (Array.isArray(schema.type) && !schema.type.includes('null')) {
    schema.type = [...(schema.type as unknown[]), 'null'];
  }
}
