/**
 * A workflow's payload schema (JSON Schema, draft-07 keywords), checked against a trigger's payload.
 * Validation never changes the payload: no defaults are inserted, no types coerced, nothing removed.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

type CompiledSchema = { validate: ValidateFunction; compiledFrom: object } | { problem: string };

const MAX_MESSAGES = 20;
const CACHE_SIZE = 500;

// Unknown keywords and formats are tolerated (strict: false) because schemas come from users and from
// generators (zod-to-json-schema, the Novu dashboard) that add their own annotations.
const ajv = new Ajv({ allErrors: true, strict: false, logger: false, useDefaults: false, coerceTypes: false });
addCommonFormats(ajv);
// Code-first workflows are checked the way @novu/framework checks them on the bridge: properties a schema does not
// allow are dropped there, not refused (its ajv runs with removeAdditional: 'failing'), so they are not refused here.
const frameworkAjv = new Ajv({ allErrors: true, strict: false, logger: false, useDefaults: true, coerceTypes: false, removeAdditional: 'failing' });
addCommonFormats(frameworkAjv);

const compiled = new Map<string, CompiledSchema>();
const frameworkCompiled = new Map<string, CompiledSchema>();

/**
 * Readable messages for each way `payload` breaks `schema`, naming the field (`payload.orderId must be string`,
 * `payload.items[0].sku is required`); [] when it conforms or there is no schema. An unusable schema yields one
 * message starting "workflow payload schema is invalid". At most 20 messages. Compiled schemas are cached
 * (by their JSON text, 500 kept).
 */
export function validatePayload(schema: unknown, payload: unknown, options: { framework?: boolean } = {}): string[] {
  if (schema === undefined || schema === null) return [];
  const entry = options.framework ? compile(schema, frameworkAjv, frameworkCompiled) : compile(schema);
  if ('problem' in entry) return [`workflow payload schema is invalid: ${entry.problem}`];
  // The framework flavour changes what it validates (drops, fills defaults): it works on a copy.
  const subject = options.framework ? structuredClone(payload) : payload;
  if (entry.validate(subject)) return [];
  const messages = (entry.validate.errors ?? []).map((error) => describeError(error, subject));
  return [...new Set(messages)].slice(0, MAX_MESSAGES);
}

/** Why a schema cannot be used as a payload schema, or undefined when it can: for workflow create and update. */
export function payloadSchemaProblem(schema: unknown): string | undefined {
  if (schema === undefined || schema === null) return undefined;
  const entry = compile(schema);
  return 'problem' in entry ? entry.problem : undefined;
}

function compile(schema: unknown, instance: Ajv = ajv, cache: Map<string, CompiledSchema> = compiled): CompiledSchema {
  if (typeof schema !== 'object' && typeof schema !== 'boolean') return { problem: 'must be an object' };
  const key = JSON.stringify(schema);
  const cached = cache.get(key);
  if (cached) {
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  const entry = compileFresh(schema as object | boolean, instance);
  if (cache.size >= CACHE_SIZE) {
    const [oldestKey, oldest] = cache.entries().next().value as [string, CompiledSchema];
    cache.delete(oldestKey);
    // Ajv keeps every compiled schema object alive until told otherwise.
    if ('compiledFrom' in oldest) instance.removeSchema(oldest.compiledFrom);
  }
  cache.set(key, entry);
  return entry;
}

function compileFresh(schema: object | boolean, instance: Ajv): CompiledSchema {
  if (Array.isArray(schema)) return { problem: 'must be an object' };
  // A top-level $id would make Ajv refuse a second workflow with the same id, and $schema naming a draft Ajv
  // does not load (2019-09, 2020-12) would fail outright; both are irrelevant to validating one payload.
  const copy: Record<string, unknown> | boolean =
    typeof schema === 'boolean' ? schema : { ...(schema as Record<string, unknown>) };
  if (typeof copy === 'object') {
    delete copy.$id;
    delete copy.$schema;
  }
  try {
    const validate = instance.compile(copy);
    return { validate, compiledFrom: typeof copy === 'object' ? copy : {} };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `payload.items[0].sku` from Ajv's JSON pointer, using the payload to tell array indexes from keys. */
function fieldPath(instancePath: string, payload: unknown, extraProperty?: string): string {
  let path = 'payload';
  let current: unknown = payload;
  const segments = instancePath === '' ? [] : instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extraProperty !== undefined) segments.push(extraProperty);
  for (const segment of segments) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) path += `[${segment}]`;
    else path += IDENTIFIER.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`;
    current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[segment] : undefined;
  }
  return path;
}

function describeError(error: ErrorObject, payload: unknown): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${fieldPath(error.instancePath, payload, String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${fieldPath(error.instancePath, payload, String(params.additionalProperty))} is not allowed`;
    case 'enum':
      return `${fieldPath(error.instancePath, payload)} must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${fieldPath(error.instancePath, payload)} must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${fieldPath(error.instancePath, payload)} ${error.message ?? 'is invalid'}`;
  }
}

/** The formats payload schemas use most; others are accepted without checking (Ajv's strict: false). */
function addCommonFormats(instance: Ajv): void {
  const dateTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
  instance.addFormat('date-time', (value: string) => dateTime.test(value) && !Number.isNaN(Date.parse(value)));
  instance.addFormat('date', (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)));
  instance.addFormat('time', /^\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})?$/);
  instance.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  instance.addFormat('uri', (value: string) => /^[A-Za-z][A-Za-z0-9+.-]*:\S*$/.test(value));
  instance.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
}
