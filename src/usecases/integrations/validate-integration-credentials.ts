import { ValidationError } from '../../domain/errors.js';
import { missingCredentials, type CatalogueEntry } from '../../domain/provider-catalogue.js';
import type { Credentials } from '../../domain/types.js';

/** The messages naming each required credential field that is missing; empty when complete. */
export function credentialProblems(entry: CatalogueEntry, credentials: Credentials): string[] {
  return missingCredentials(entry, credentials).map((field) => `credentials.${field} is required for provider ${entry.id}`);
}

/** An active integration must carry every credential its provider requires (400 naming each missing one). */
export function validateIntegrationCredentials(entry: CatalogueEntry, credentials: Credentials): void {
  const problems = credentialProblems(entry, credentials);
  if (problems.length > 0) throw new ValidationError(problems);
}
