/**
 * Strict ISO 8601 parsing for query bounds: a calendar date, optionally with a time and an offset
 * (`2026-11-22`, `2026-11-22T12:00:00.000Z`, `2026-11-22T13:00+01:00`). No offset means UTC. Returns the
 * instant as an ISO UTC string with milliseconds, or undefined when the text is not such a timestamp
 * (including impossible dates like `2026-02-30`).
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

export function parseIsoTimestamp(text: string): string | undefined {
  const match = ISO_8601.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '0', offset = 'Z'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const millis = Math.floor(Number(`0.${fraction}`) * 1000);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return undefined;
  const offsetMinutes = offsetToMinutes(offset);
  if (offsetMinutes === undefined) return undefined;
  return new Date(utc - offsetMinutes * 60_000).toISOString();
}

function offsetToMinutes(offset: string): number | undefined {
  if (offset.toUpperCase() === 'Z') return 0;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (hours > 23 || minutes > 59) return undefined;
  return (offset[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}
