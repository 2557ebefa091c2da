import { createContext, useContext } from 'react';

export interface DashboardUser {
  _id: string;
  email: string;
  name?: string;
  role: 'admin' | 'viewer';
}

export interface Environment {
  _id: string;
  name: string;
  identifier?: string;
}

export interface Me {
  user: DashboardUser;
  organization?: { _id: string; name?: string };
  environments: Environment[];
  csrfToken: string;
}

export interface Session {
  me: Me;
  environment: Environment;
  isAdmin: boolean;
  switchEnvironment(id: string): void;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in shell');
  return session;
}

const ENVIRONMENT_KEY = 'herald.environmentId';

export function storedEnvironmentId(): string | null {
  try {
    return localStorage.getItem(ENVIRONMENT_KEY);
  } catch {
    return null;
  }
}

export function storeEnvironmentId(id: string): void {
  try {
    localStorage.setItem(ENVIRONMENT_KEY, id);
  } catch {
    // Storage disabled: the choice lasts for this page only.
  }
}
