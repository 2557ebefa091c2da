import type { Credentials } from '../domain/types.js';
import { ProviderError } from './ports.js';

/** A credential as a trimmed string, or undefined when absent or empty. */
export function optionalCredential(credentials: Credentials, field: string): string | undefined {
  const value = credentials[field];
  if (value === undefined || value === null) return undefined;
  const text = String(value).trim();
  return text === '' ? undefined : text;
}

/** A credential the provider cannot work without: missing is a configuration error, never retried. */
export function requiredCredential(credentials: Credentials, field: string, providerId: string): string {
  const value = optionalCredential(credentials, field);
  if (value === undefined) {
    throw new ProviderError(`${providerId}: missing credential "${field}"`, false);
  }
  return value;
}

/** Booleans arrive as JSON booleans or as the strings the dashboard form sends. */
export function booleanCredential(credentials: Credentials, field: string): boolean | undefined {
  const value = credentials[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  return String(value).toLowerCase() === 'true';
}

/** `baseUrl` from the credentials (for tests and regional endpoints), else the vendor's own; no trailing slash. */
export function baseUrlOf(credentials: Credentials, vendorDefault: string): string {
  return (optionalCredential(credentials, 'baseUrl') ?? vendorDefault).replace(/\/+$/, '');
}
