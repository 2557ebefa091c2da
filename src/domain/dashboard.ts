import type { UserRole } from './types.js';

/**
 * Dashboard users, sessions, one-time links, secret-key listings and the audit log: the records behind the
 * dashboard-only routes (README, "Dashboard: users and sessions").
 */

/** A dashboard user as the API shows it: never the password hash. */
export interface User {
  _id: string;
  _organizationId: string;
  email: string;
  name?: string;
  role: UserRole;
  createdAt: string;
  updatedAt: string;
}

export interface StoredUser extends User {
  passwordHash: string;
}

export interface DashboardSessionRecord {
  tokenHash: string;
  userId: string;
  createdAt: string;
  expiresAt: string;
}

export const ONE_TIME_TOKEN_KINDS = ['setup', 'invite'] as const;
export type OneTimeTokenKind = (typeof ONE_TIME_TOKEN_KINDS)[number];

/** The first-start setup link and invite links; only a hash of the token is stored. */
export interface OneTimeToken {
  _id: string;
  tokenHash: string;
  kind: OneTimeTokenKind;
  /** Invites: the organization the new user joins (setup: the bootstrap organization is used). */
  organizationId?: string;
  role?: UserRole;
  /** Invites: when set, only this address may accept. */
  email?: string;
  createdBy?: string;
  createdAt: string;
  expiresAt: string;
  usedAt?: string;
  revokedAt?: string;
}

/** A secret key as listed: the key itself is never stored, only its hash and last four characters. */
export interface ApiKeyInfo {
  _id: string;
  _environmentId: string;
  /** Last four characters; absent for keys made before they were recorded. */
  last4?: string;
  createdAt: string;
  createdBy?: string;
  revokedAt?: string;
}

export const AUDIT_ACTOR_KINDS = ['user', 'apiKey', 'session', 'subscriber', 'anonymous', 'cli'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

export interface AuditEntry {
  _id: string;
  _organizationId: string;
  _environmentId?: string;
  actor: { kind: AuditActorKind; id?: string; label?: string };
  /** `auth.login`, `integration.updated`, `api_key.revoked`, ... (see http/audit.ts). */
  action: string;
  target?: { type: string; id: string };
  outcome: 'success' | 'failure';
  ip?: string;
  createdAt: string;
}

/** Emails compare case-insensitively and without surrounding spaces; stored in this form. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A deliberately small check: one @, something on each side, no spaces. Delivery never uses it. */
export function isPlausibleEmail(email: string): boolean {
  return /^[^\s@]+@[^\s@]+$/.test(email) && email.length <= 254;
}

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 256;

/** Problems with a new password, each naming the field; empty when acceptable. */
export function passwordProblems(password: string, field = 'password'): string[] {
  if (password.length < MIN_PASSWORD_LENGTH) return [`${field} must have at least ${MIN_PASSWORD_LENGTH} characters`];
  if (password.length > MAX_PASSWORD_LENGTH) return [`${field} must have at most ${MAX_PASSWORD_LENGTH} characters`];
  return [];
}

/** A key shown in lists: its last four characters behind a mask, or only the mask for keys without them. */
export function maskedKey(last4: string | undefined): string {
  return last4 ? `••••••••${last4}` : '••••••••';
}
