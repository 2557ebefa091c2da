import { ValidationError } from '../../domain/errors.js';
import type { Subscriber } from '../../domain/types.js';

/** The profile fields a create or PATCH may carry: absent leaves a field as it is, null clears it. */
export interface SubscriberProfileInput {
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  avatar?: string | null;
  locale?: string | null;
  timezone?: string | null;
  data?: Record<string, unknown> | null;
}

const PROFILE_FIELDS = ['firstName', 'lastName', 'email', 'phone', 'avatar', 'locale', 'timezone', 'data'] as const;

// Deliberately loose (one @, a dot in the domain, no spaces): strict RFC 5322 rejects addresses people use.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Throws ValidationError naming every bad field: email format, BCP 47 locale, IANA timezone. */
export function validateProfile(input: SubscriberProfileInput): void {
  const problems: string[] = [];
  if (typeof input.email === 'string' && !EMAIL_PATTERN.test(input.email)) problems.push('email must be an email');
  if (typeof input.locale === 'string' && !isBcp47Locale(input.locale)) problems.push('locale must be a valid BCP 47 language tag');
  if (typeof input.timezone === 'string' && !isIanaTimeZone(input.timezone)) problems.push('timezone must be a valid IANA time zone');
  if (problems.length > 0) throw new ValidationError(problems);
}

export function isBcp47Locale(locale: string): boolean {
  try {
    return Intl.getCanonicalLocales(locale).length === 1;
  } catch {
    return false;
  }
}

export function isIanaTimeZone(timeZone: string): boolean {
  if (timeZone.trim() === '') return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** The subscriber with the given fields applied (absent unchanged, null cleared), version and updatedAt bumped. */
export function applyProfile(subscriber: Subscriber, input: SubscriberProfileInput, at: string): Subscriber {
  const next: Subscriber = { ...subscriber, __v: subscriber.__v + 1, updatedAt: at };
  for (const field of PROFILE_FIELDS) {
    const value = input[field];
    if (value !== undefined) (next as unknown as Record<string, unknown>)[field] = value;
  }
  return next;
}
