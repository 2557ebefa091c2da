import { isoNow } from '../../domain/clock.js';
import { isPlausibleEmail, normalizeEmail, passwordProblems, type StoredUser } from '../../domain/dashboard.js';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { USER_ROLES, type UserRole } from '../../domain/types.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { hashPassword } from './passwords.js';

export interface CreateUserInput {
  email: string;
  password: string;
  role: UserRole;
  name?: string;
  /** Default: the organization made on the first start. */
  organizationId?: string;
}

/** Checks a new user's fields; every message names its field. */
export function newUserProblems(input: { email: string; password: string; role: string; name?: string }): string[] {
  const problems: string[] = [];
  if (!isPlausibleEmail(normalizeEmail(input.email))) problems.push('email must be an email address');
  problems.push(...passwordProblems(input.password));
  if (!(USER_ROLES as readonly string[]).includes(input.role)) problems.push(`role must be one of the following values: ${USER_ROLES.join(', ')}`);
  if (input.name !== undefined && input.name.length > 200) problems.push('name must have at most 200 characters');
  return problems;
}

/** Creates a dashboard user (CLI, setup, invite); `store` may be a transaction's. 409 when the email is taken. */
export async function createUser(deps: Pick<Deps, 'clock'>, store: Store, input: CreateUserInput): Promise<StoredUser> {
  const problems = newUserProblems(input);
  if (problems.length > 0) throw new ValidationError(problems);
  const organizationId = input.organizationId ?? (await store.dashboard.firstOrganization())?._id;
  if (!organizationId) throw new NotFoundError('No organization exists yet; start Herald once first');
  const now = isoNow(deps.clock);
  const name = input.name?.trim();
  const user: StoredUser = {
    _id: newId(deps.clock.now()),
    _organizationId: organizationId,
    email: normalizeEmail(input.email),
    ...(name ? { name } : {}),
    role: input.role,
    passwordHash: await hashPassword(input.password),
    createdAt: now,
    updatedAt: now,
  };
  if (!(await store.dashboard.createUser(user))) throw new ConflictError(`A user with email ${user.email} already exists`);
  return user;
}
