/** Wall-clock time in IANA time zones through Intl (no dependency): digest windows and delivery schedules. */


export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(tz: string): Intl.DateTimeFormat {
  let formatter = formatters.get(tz);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23',
      year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(tz, formatter);
  }
  return formatter;
}

export function isValidTimezone(tz: string): boolean {
  try {
    formatterFor(tz);
    return true;
  } catch {
    return false;
  }
}

export function localParts(ms: number, tz: string): WallTime {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(tz).formatToParts(new Date(ms))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour % 24, minute: parts.minute, second: parts.second };
}

export function wallTimeAsUtc(t: WallTime): number {
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
}

function offsetAt(ms: number, tz: string): number {
  const wholeSecond = Math.floor(ms / 1000) * 1000;
  return wallTimeAsUtc(localParts(wholeSecond, tz)) - wholeSecond;
}

/**
 * The instant at which clocks in `tz` show `wall`. Offsets are sampled a day either side, which brackets any
 * single DST transition: of the instants showing `wall` the earliest wins (fall-back overlap); when none does
 * (spring-forward gap) the offset in force before the gap applies, which moves the time forward by the gap.
 */
export function wallTimeToUtc(wall: WallTime, tz: string): number {
  const naive = wallTimeAsUtc(wall);
  const offsetBefore = offsetAt(naive - 86_400_000, tz);
  const offsetAfter = offsetAt(naive + 86_400_000, tz);
  const showsWall = (ms: number) => wallTimeAsUtc(localParts(ms, tz)) === naive;
  const candidates = [naive - offsetBefore, naive - offsetAfter].filter(showsWall);
  return candidates.length > 0 ? Math.min(...candidates) : naive - offsetBefore;
}
