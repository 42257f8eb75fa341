import type { OpenAPIObject } from '@nestjs/swagger';
import { toOpenApi31 } from './openapi-31';

function documentWith(schemas: Record<string, unknown>): OpenAPIObject {
  return { openapi: '3.0.0', info: { title: 't', version: '1' }, paths: {}, components: { schemas } } as OpenAPIObject;
}

describe('toOpenApi31', () => {
  it('sets the version and turns a nullable type into a type list with null', () => {
    const document = toOpenApi31(
      documentWith({ A: { type: 'object', properties: { n: { type: 'number', nullable: true, example: 1 } } } }),
    );
    expect(document.openapi).toBe('3.1.0');
    expect(document.components?.schemas?.A).toEqual({ type: 'object', properties: { n: { type: ['number', 'null'], example: 1 } } });
  });

  it('adds null to the values of a nullable enum', () => {
    const document = toOpenApi31(documentWith({ A: { type: 'string', enum: ['a', 'b'], nullable: true } }));
    expect(document.components?.schemas?.A).toEqual({ type: ['string', 'null'], enum: ['a', 'b', null] });
  });

  it('wraps a nullable $ref in anyOf with null, keeping its description outside', () => {
    const document = toOpenApi31(documentWith({ A: { $ref: '#/components/schemas/B', nullable: true, description: 'maybe B' } }));
    expect(document.components?.schemas?.A).toEqual({
      description: 'maybe B',
      anyOf: [{ $ref: '#/components/schemas/B' }, { type: 'null' }],
    });
  });

  it('drops nullable: false and leaves examples alone', () => {
    const document = toOpenApi31(documentWith({ A: { type: 'object', nullable: false, example: { nullable: true } } }));
    expect(document.components?.schemas?.A).toEqual({ type: 'object', example: { nullable: true } });
  });
});
