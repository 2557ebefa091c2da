import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, get, post } from '../api';
import type { Me } from '../session';
import { ErrorNote, Field, Notice } from '../ui';

/** Sign-in, first-admin setup and invite acceptance share one centred card layout. */
function Card({ title, children }: { title: string; children: React.ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Herald`;
  }, [title]);
  return (
    <main className="auth-page">
      <div className="auth-card">
        <p className="brand" aria-hidden="true">
          Herald
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

interface SignedIn {
  user: Me['user'];
  csrfToken: string;
}

export function LoginPage({ onSignedIn }: { onSignedIn(result: SignedIn): void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [pending, setPending] = useState(false);
  const [setupRequired, setSetupRequired] = useState(false);
  useEffect(() => {
    get<{ data: { required: boolean } }>('/v1/dashboard/setup', { noEnvironment: true })
      .then((answer) => setSetupRequired(answer.data.required))
      .catch(() => setSetupRequired(false));
  }, []);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setPending(true);
    setError(undefined);
    try {
      const answer = await post<{ data: SignedIn }>('/v1/dashboard/login', { email, password }, { noEnvironment: true });
      onSignedIn(answer.data);
    } catch (cause) {
      if (cause instanceof ApiError && cause.status === 401) setError('Wrong email or password.');
      else if (cause instanceof ApiError && cause.status === 429) setError('Too many attempts. Wait a minute and try again.');
      else setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setPending(false);
    }
  };
  return (
    <Card title="Sign in">
      {setupRequired && (
        <Notice>
          No administrator exists yet. Open the one-time setup link that Herald printed when it first started
          (<code>/dashboard/setup?token=…</code>).
        </Notice>
      )}
      <form onSubmit={submit}>
        <Field label="Email" type="email" value={email} onChange={setEmail} required autoComplete="username" name="email" />
        <Field label="Password" type="password" value={password} onChange={setPassword} required autoComplete="current-password" name="password" />
        <ErrorNote error={error} />
        <button type="submit" className="primary" disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </Card>
  );
}

/** First start: the setup token from the printed link creates the first admin. */
export function SetupPage({ token, onSignedIn }: { token: string; onSignedIn(result: SignedIn): void }) {
  return (
    <AccountForm
      title="Create the first administrator"
      intro="This one-time link creates the administrator account of this Herald. It stops working once used."
      submitLabel="Create administrator"
      missingToken={!token}
      onSubmit={async (fields) => (await post<{ data: SignedIn }>('/v1/dashboard/setup', { token, ...fields }, { noEnvironment: true })).data}
      onSignedIn={onSignedIn}
    />
  );
}

export function InvitePage({ token, onSignedIn }: { token: string; onSignedIn(result: SignedIn): void }) {
  return (
    <AccountForm
      title="Join Herald"
      intro="An administrator invited you. Choose your sign-in email and a password."
      submitLabel="Create account"
      missingToken={!token}
      onSubmit={async (fields) => (await post<{ data: SignedIn }>('/v1/dashboard/invites/accept', { token, ...fields }, { noEnvironment: true })).data}
      onSignedIn={onSignedIn}
    />
  );
}

function AccountForm(props: {
  title: string;
  intro: string;
  submitLabel: string;
  missingToken: boolean;
  onSubmit(fields: { email: string; password: string; name?: string }): Promise<SignedIn>;
  onSignedIn(result: SignedIn): void;
}) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [pending, setPending] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setPending(true);
    setError(undefined);
    try {
      props.onSignedIn(await props.onSubmit({ email, password, name: name || undefined }));
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setPending(false);
    }
  };
  return (
    <Card title={props.title}>
      <p className="muted">{props.intro}</p>
      {props.missingToken ? (
        <ErrorNote error="This link has no token. Use the complete link you were given." />
      ) : (
        <form onSubmit={submit}>
          <Field label="Name" value={name} onChange={setName} autoComplete="name" name="name" />
          <Field label="Email" type="email" value={email} onChange={setEmail} required autoComplete="username" name="email" />
          <Field
            label="Password"
            type="password"
            value={password}
            onChange={setPassword}
            required
            autoComplete="new-password"
            name="password"
            hint="At least 8 characters."
          />
          <ErrorNote error={error} />
          <button type="submit" className="primary" disabled={pending}>
            {pending ? 'Working…' : props.submitLabel}
          </button>
        </form>
      )}
    </Card>
  );
}
