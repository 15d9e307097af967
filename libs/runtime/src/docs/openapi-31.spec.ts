import { toOpenApi31Nullability } from './openapi-31';

describe('toOpenApi31Nullability', () => {
  it('turns a nullable scalar into a type list, enums included', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', nullable: true }, b: { type: 'integer', enum: [1, 2], nullable: true } } };
    toOpenApi31Nullability(schema);
    expect(schema.properties).toEqual({ a: { type: ['string', 'null'] }, b: { type: ['integer', 'null'], enum: [1, 2, null] } });
  });

  it('puts a nullable reference beside null, keeping its description outside', () => {
    const schema = { type: 'object', nullable: true, allOf: [{ $ref: '#/components/schemas/X' }], description: 'the x' };
    toOpenApi31Nullability(schema);
    expect(schema).toEqual({ description: 'the x', oneOf: [{ type: 'object', allOf: [{ $ref: '#/components/schemas/X' }] }, { type: 'null' }] });
  });

  it('drops nullable: false and leaves property names called nullable alone', () => {
    const schema = { type: 'object', properties: { nullable: { type: 'boolean' }, c: { type: 'string', nullable: false } } };
    toOpenApi31Nullability(schema);
    expect(schema.properties).toEqual({ nullable: { type: 'boolean' }, c: { type: 'string' } });
  });
});
