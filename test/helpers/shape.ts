import { expect } from 'vitest';

/** Assertions for the spec's conventions, shared by every HTTP test. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const RECORD_ID = /^[0-9a-f]{24}$/;

export function expectIsoTimestamp(value: unknown): void {
  expect(value).toMatch(ISO_MS);
}

export function expectRecordId(value: unknown): void {
  expect(value).toMatch(RECORD_ID);
}

/** The error body of API-CONVENTIONS.md with the given status. */
export function expectErrorBody(body: any, statusCode: number, path?: string): void {
  expect(body).toMatchObject({ statusCode, error: expect.any(String) });
  expect(body.timestamp).toMatch(ISO_MS);
  expect(typeof body.path).toBe('string');
  if (path) expect(body.path).toBe(path);
  expect(typeof body.message === 'string' || Array.isArray(body.message)).toBe(true);
}
