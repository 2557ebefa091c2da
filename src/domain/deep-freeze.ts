/**
 * Freezes a JSON-like value and everything in it; returns it. A value already frozen is taken as deep-frozen (the
 * workflow cache freezes only values it copied itself).
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const nested of Object.values(value)) deepFreeze(nested);
  }
  return value;
}

/**
 * Whether a JSON-like value can no longer change: it and every object in it frozen. Freezing cannot be undone, so a
 * value found deep-frozen once stays so, and what is computed from it can be kept by its identity.
 */
export function isDeepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (!Object.isFrozen(value)) return false;
  for (const nested of Object.values(value)) if (!isDeepFrozen(nested)) return false;
  return true;
}
