import { parseContextKey } from '../../domain/context-keys.js';
import { ValidationError } from '../../domain/errors.js';

/** Checks `contextKeys` query entries (`type:id` each); throws ValidationError naming the bad ones. */
export function validateContextKeyFilter(keys: string[] | undefined): string[] | undefined {
  if (keys === undefined) return undefined;
  const problems = keys.flatMap((key) => {
    const parsed = parseContextKey(key);
    return 'error' in parsed ? [parsed.error] : [];
  });
  if (problems.length > 0) throw new ValidationError(problems);
  return keys;
}
