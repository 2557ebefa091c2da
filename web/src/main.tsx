import { StrictMode, useCallback, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { configureApi, get, post } from './api';
import { Link, match, navigate, useLocation } from './router';
import { SessionContext, storeEnvironmentId, storedEnvironmentId, type Me, type Session } from './session';
import { InvitePage, LoginPage, SetupPage } from './pages/SignIn';
import { ActivityPage } from './pages/Activity';
import { OverviewPage } from './pages/Overview';
import { ActivityEventPage } from './pages/ActivityEvent';
import { WorkflowsPage } from './pages/Workflows';
import { WorkflowEditPage } from './pages/WorkflowEdit';
import { IntegrationsPage } from './pages/Integrations';
import { SubscribersPage, SubscriberPage } from './pages/Subscribers';
import { TopicsPage, TopicPage } from './pages/Topics';
import { SettingsPage } from './pages/Settings';
import { WebhookEndpointPage, WebhooksPage } from './pages/Webhooks';
import './styles.css';

type Boot = { state: 'loading' } | { state: 'signedOut' } | { state: 'signedIn'; me: Me };

const NAV: Array<[path: string, label: string]> = [
  ['/overview', 'Overview'],
  ['/activity', 'Activity'],
  ['/workflows', 'Workflows'],
  ['/integrations', 'Integrations'],
  ['/subscribers', 'Subscribers'],
  ['/topics', 'Topics'],
  ['/webhooks', 'Webhooks'],
  ['/settings', 'Settings'],
];

function App() {
  const location = useLocation();
  const [boot, setBoot] = useState<Boot>({ state: 'loading' });

  const loadMe = useCallback(async () => {
    try {
      const answer = await get<{ data: Me }>('/v1/dashboard/me', { noEnvironment: true });
      configureApi({ csrfToken: answer.data.csrfToken });
      setBoot({ state: 'signedIn', me: answer.data });
    } catch {
      setBoot({ state: 'signedOut' });
    }
  }, []);

  useEffect(() => {
    configureApi({ onUnauthorized: () => setBoot({ state: 'signedOut' }) });
    void loadMe();
  }, [loadMe]);

  const onSignedIn = useCallback(
    async ({ csrfToken }: { csrfToken: string }) => {
      configureApi({ csrfToken });
      await loadMe();
      if (['/login', '/setup', '/invite'].includes(location.path)) navigate('/overview', { replace: true });
    },
    [loadMe, location.path],
  );

  if (location.path === '/setup') return <SetupPage token={location.query.get('token') ?? ''} onSignedIn={onSignedIn} />;
  if (location.path === '/invite') return <InvitePage token={location.query.get('token') ?? ''} onSignedIn={onSignedIn} />;
  if (boot.state === 'loading') return <p className="muted boot">Loading…</p>;
  if (boot.state === 'signedOut') return <LoginPage onSignedIn={onSignedIn} />;
  return <Shell me={boot.me} onSignedOut={() => setBoot({ state: 'signedOut' })} />;
}

function Shell({ me, onSignedOut }: { me: Me; onSignedOut(): void }) {
  const location = useLocation();
  const [environmentId, setEnvironmentId] = useState(() => {
    const stored = storedEnvironmentId();
    const known = me.environments.find((environment) => environment._id === stored);
    return (known ?? me.environments.find((environment) => environment.name === 'development') ?? me.environments[0])._id;
  });
  const [menuOpen, setMenuOpen] = useState(false);
  configureApi({ environmentId });

  const session: Session = useMemo(
    () => ({
      me,
      environment: me.environments.find((environment) => environment._id === environmentId) ?? me.environments[0],
      isAdmin: me.user.role === 'admin',
      switchEnvironment(id: string) {
        storeEnvironmentId(id);
        configureApi({ environmentId: id });
        setEnvironmentId(id);
        // A record of one environment does not exist in the other: go back to the section's list.
        const section = location.path.split('/')[1] || 'overview';
        navigate(`/${section}`, { replace: true });
      },
      async signOut() {
        await post('/v1/dashboard/logout', {}, { noEnvironment: true }).catch(() => undefined);
        configureApi({ csrfToken: undefined });
        onSignedOut();
        navigate('/login', { replace: true });
      },
    }),
    [me, environmentId, onSignedOut, location.path],
  );

  useEffect(() => setMenuOpen(false), [location.path]);

  return (
    <SessionContext.Provider value={session}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <div className="layout">
        <header className="topbar">
          <Link to="/overview" className="logo">
            Herald
          </Link>
          <button type="button" className="menu-toggle" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
            Menu
          </button>
          <nav id="main-nav" aria-label="Main" className={menuOpen ? 'open' : undefined}>
            <ul>
              {NAV.map(([path, label]) => {
                const current = location.path === path || location.path.startsWith(`${path}/`);
                return (
                  <li key={path}>
                    <Link to={path} aria-current={current ? 'page' : undefined}>
                      {label}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </nav>
          <div className="topbar-end">
            <label className="env-switch">
              <span>Environment</span>
              <select value={environmentId} onChange={(event) => session.switchEnvironment(event.target.value)}>
                {me.environments.map((environment) => (
                  <option key={environment._id} value={environment._id}>
                    {environment.name}
                  </option>
                ))}
              </select>
            </label>
            <span className="who" title={me.user.email}>
              {me.user.name || me.user.email} <span className="role">{me.user.role}</span>
            </span>
            <button type="button" onClick={() => void session.signOut()}>
              Sign out
            </button>
          </div>
        </header>
        <main id="main" tabIndex={-1} key={environmentId}>
          <Page path={location.path} query={location.query} />
        </main>
      </div>
    </SessionContext.Provider>
  );
}

function Page({ path, query }: { path: string; query: URLSearchParams }) {
  let params: Record<string, string> | undefined;
  // The overview is the landing page after sign-in.
  if (path === '/' || path === '/login' || path === '/overview') return <OverviewPage query={query} />;
  if (path === '/activity') return <ActivityPage query={query} />;
  if ((params = match('/activity/:id', path))) return <ActivityEventPage id={params.id} />;
  if (path === '/workflows') return <WorkflowsPage />;
  if (path === '/workflows/new') return <WorkflowEditPage />;
  if ((params = match('/workflows/:id', path))) return <WorkflowEditPage id={params.id} />;
  if (path === '/integrations') return <IntegrationsPage />;
  if (path === '/subscribers') return <SubscribersPage />;
  if ((params = match('/subscribers/:id', path))) return <SubscriberPage subscriberId={params.id} />;
  if (path === '/topics') return <TopicsPage />;
  if ((params = match('/topics/:key', path))) return <TopicPage topicKey={params.key} />;
  if (path === '/webhooks') return <WebhooksPage />;
  if ((params = match('/webhooks/:id', path))) return <WebhookEndpointPage id={params.id} />;
  if (path === '/settings') return <SettingsPage />;
  return (
    <div>
      <h1>Page not found</h1>
      <p>
        <Link to="/activity">Go to the activity feed</Link>
      </p>
    </div>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
