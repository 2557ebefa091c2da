/**
 * Context keys: a trigger's `context` (`{ tenant: "acme", region: { id: "eu", data: {...} } }`) becomes the keys
 * `tenant:acme` and `region:eu` on the notification event and its messages. Filters match the exact set of keys,
 * order-insensitive, through `normalizeContextKeys`.
 */
import { ValidationError } from './errors.js';

export type TriggerContext = Record<string, string | { id: string; data?: unknown }>;

/** Separates keys in the normalised form; validation keeps it out of every key. */
export const CONTEXT_KEY_SEPARATOR = '\n';

/**
 * The context keys of a trigger's `context`, sorted. Throws ValidationError naming each bad entry: a type must
 * be non-empty without ':'; an id (the string, or `.id`) must be a non-empty string; neither may contain a newline.
 */
export function contextKeysFromContext(context: TriggerContext | undefined | null): string[] {
  if (context === undefined || context === null) return [];
  if (typeof context !== 'object' || Array.isArray(context)) throw new ValidationError(['context must be an object']);
  const problems: string[] = [];
  const keys: string[] = [];
  for (const [type, entry] of Object.entries(context)) {
    const id = typeof entry === 'string' ? entry : entry !== null && typeof entry === 'object' ? entry.id : undefined;
    const typeProblem = contextTypeProblem(type);
    if (typeProblem) problems.push(`context type "${type}" ${typeProblem}`);
    if (typeof id !== 'string' || id.trim() === '') {
      problems.push(`context.${type} must be a non-empty string or an object with a non-empty string id`);
    } else if (id.includes(CONTEXT_KEY_SEPARATOR)) {
      problems.push(`context.${type} id must not contain a line break`);
    }
    if (!typeProblem && typeof id === 'string') keys.push(`${type}:${id}`);
  }
  if (problems.length > 0) throw new ValidationError(problems);
  return [...new Set(keys)].sort();
}

function contextTypeProblem(type: string): string | undefined {
  if (type.trim() === '') return 'must not be empty';
  if (type.includes(':')) return "must not contain ':'";
  if (type.includes(CONTEXT_KEY_SEPARATOR)) return 'must not contain a line break';
  return undefined;
}

/**
 * A context key split at its first ':' (ids may contain ':'), or an error text naming the key. Use it to
 * validate keys given as query filters.
 */
export function parseContextKey(key: string): { type: string; id: string } | { error: string } {
  const colon = typeof key === 'string' ? key.indexOf(':') : -1;
  if (colon <= 0 || colon === key.length - 1) {
    return { error: `contextKeys entry ${JSON.stringify(key)} must have the form type:id` };
  }
  if (key.includes(CONTEXT_KEY_SEPARATOR)) return { error: `contextKeys entry ${JSON.stringify(key)} must not contain a line break` };
  const type = key.slice(0, colon);
  const id = key.slice(colon + 1);
  if (type.trim() === '' || id.trim() === '') return { error: `contextKeys entry ${JSON.stringify(key)} must have the form type:id` };
  return { type, id };
}

/**
 * One string per set of keys, for exact order-insensitive matching in SQL: sorted (by code unit), de-duplicated,
 * joined with a newline (which no valid key contains). No keys gives ''.
 */
export function normalizeContextKeys(keys: readonly string[] | undefined | null): string {
  return [...new Set(keys ?? [])].sort().join(CONTEXT_KEY_SEPARATOR);
}
