import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * The app's validator compiler: JSON bodies are validated WITHOUT type coercion (so `{"isOnline": null}`,
 * `{"isOnline": "true"}` or `{"firstName": 5}` are 400s, not silently turned into false/true/"5"), while the
 * querystring, params and headers keep coercion (`?limit=5`, a single `?transactionId=x` as an array).
 */
const shared = { allErrors: true, removeAdditional: true, useDefaults: true, strict: false, allowUnionTypes: true } as const;
const bodyAjv = addFormats.default(new Ajv({ ...shared, coerceTypes: false }));
const coercingAjv = addFormats.default(new Ajv({ ...shared, coerceTypes: 'array' }));

export const strictBodyValidatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : coercingAjv).compile(schema);
