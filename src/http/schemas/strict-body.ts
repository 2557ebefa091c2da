import { Ajv } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * A route-level validator compiler: JSON bodies are validated WITHOUT type coercion (so `{"isOnline": null}`,
 * `{"isOnline": "true"}` or `{"firstName": 5}` are 400s, not silently turned into false/true/"5"), while the
 * querystring, params and headers keep the app's coercion (`?limit=5`, a single `?transactionId=x` as an array).
 * Options otherwise mirror app.ts. Use as `validatorCompiler: strictBodyValidatorCompiler` on a route.
 */
const shared = { allErrors: true, removeAdditional: true, useDefaults: true, strict: false, allowUnionTypes: true } as const;
const bodyAjv = new Ajv({ ...shared, coerceTypes: false });
const coercingAjv = new Ajv({ ...shared, coerceTypes: 'array' });

export const strictBodyValidatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : coercingAjv).compile(schema);
