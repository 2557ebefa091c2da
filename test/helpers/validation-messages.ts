import { expect } from 'vitest';
import { ValidationError } from '../../src/domain/errors.js';

/** The messages of the ValidationError `run` throws; fails the test when it throws anything else or nothing. */
export function validationMessages(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).messages;
  }
  throw new Error('expected a ValidationError');
}
