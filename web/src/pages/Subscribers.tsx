import { Component, lazy, Suspense, useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { del, get, patch, put, seg } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import { CHANNEL_LABEL, CHANNELS } from '../status';
import type { InboxPreviewSettings } from './InboxPreview';
import { Badge, Empty, ErrorNote, Field, Loading, Notice, PageHeader, Pager, Select, Time, useAction, useLoad } from '../ui';

// @novu/react is most of the preview's weight: fetched only when a subscriber's page shows the preview.
/** The Inbox preview's chunk (@novu/react), fetched as soon as an admin opens a subscriber, alongside the page's own requests. */
const loadInboxPreview = () => import('./InboxPreview');
const InboxPreview = lazy(loadInboxPreview);

interface Subscriber {
  _id: string;
  subscriberId: string;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  avatar?: string | null;
  locale?: string | null;
  timezone?: string | null;
  data?: Record<string, unknown> | null;
  channels: Array<{ providerId: string; integrationIdentifier?: string; credentials: { webhookUrl?: string; deviceTokens?: string[]; channel?: string } }>;
  createdAt: string;
}

const SEARCH_BY: Array<[string, string]> = [
  ['subscriberId', 'Subscriber ID'],
  ['email', 'Email (exact)'],
  ['name', 'Name (contains)'],
];

export function SubscribersPage() {
  const [by, setBy] = useState('subscriberId');
  const [text, setText] = useState('');
  const [applied, setApplied] = useState<{ by: string; text: string }>({ by: 'subscriberId', text: '' });
  const [page, setPage] = useState(0);
  const list = useLoad(
    (signal) =>
      get<{ data: Subscriber[]; hasMore?: boolean; next?: string | null }>('/v2/subscribers', {
        signal,
        query: { limit: 20, page, ...(applied.text ? { [applied.by]: applied.text } : {}) },
      }),
    [applied.by, applied.text, page],
  );
  const search = (event: FormEvent) => {
    event.preventDefault();
    setPage(0);
    setApplied({ by, text: text.trim() });
  };
  const rows = list.data?.data ?? [];
  return (
    <>
      <PageHeader title="Subscribers" />
      <form className="toolbar" onSubmit={search} role="search" aria-label="Search subscribers">
        <Select label="Search by" value={by} onChange={setBy} options={SEARCH_BY} />
        <Field label="Search for" type="search" value={text} onChange={setText} />
        <button type="submit" className="primary">
          Search
        </button>
      </form>
      <ErrorNote error={list.error} />
      {!list.data && list.loading && <Loading what="subscribers" />}
      {list.data && rows.length === 0 && <Empty>No subscribers found.</Empty>}
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Subscribers</caption>
            <thead>
              <tr>
                <th scope="col">Subscriber ID</th>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Phone</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((subscriber) => (
                <tr key={subscriber._id}>
                  <td>
                    <Link to={`/subscribers/${seg(subscriber.subscriberId)}`} className="mono">
                      {subscriber.subscriberId}
                    </Link>
                  </td>
                  <td>{[subscriber.firstName, subscriber.lastName].filter(Boolean).join(' ') || '—'}</td>
                  <td>{subscriber.email ?? '—'}</td>
                  <td>{subscriber.phone ?? '—'}</td>
                  <td>
                    <Time iso={subscriber.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager page={page} hasMore={Boolean(list.data.hasMore ?? list.data.next)} onPage={setPage} />}
    </>
  );
}

const PROFILE_FIELDS: Array<[keyof Subscriber, string, string?]> = [
  ['firstName', 'First name'],
  ['lastName', 'Last name'],
  ['email', 'Email', 'email'],
  ['phone', 'Phone', 'tel'],
  ['avatar', 'Avatar URL'],
  ['locale', 'Locale (BCP 47)'],
  ['timezone', 'Time zone (IANA)'],
];

export function SubscriberPage({ subscriberId }: { subscriberId: string }) {
  const { isAdmin } = useSession();
  useEffect(() => {
    if (isAdmin) void loadInboxPreview().catch(() => undefined); // a failure shows when the preview renders
  }, [isAdmin]);
  const loaded = useLoad((signal) => get<{ data: Subscriber }>(`/v2/subscribers/${seg(subscriberId)}`, { signal }), [subscriberId]);
  const [profile, setProfile] = useState<Record<string, string>>({});
  const [dataJson, setDataJson] = useState('');
  const [saved, setSaved] = useState<string>();
  const save = useAction();
  const subscriber = loaded.data?.data;
  useEffect(() => {
    if (!subscriber) return;
    setProfile(Object.fromEntries(PROFILE_FIELDS.map(([name]) => [name, (subscriber[name] as string | null | undefined) ?? ''])));
    setDataJson(subscriber.data ? JSON.stringify(subscriber.data, null, 2) : '');
  }, [subscriber]);
  if (loaded.error) {
    return (
      <>
        <PageHeader title={`Subscriber ${subscriberId}`} />
        <ErrorNote error={loaded.error} />
      </>
    );
  }
  if (!subscriber) return <Loading what="the subscriber" />;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(undefined);
    void save.run(async () => {
      const body: Record<string, unknown> = {};
      for (const [name] of PROFILE_FIELDS) body[name] = profile[name] === '' ? null : profile[name];
      body.data = dataJson.trim() ? JSON.parse(dataJson) : null;
      const answer = await patch(`/v2/subscribers/${seg(subscriberId)}`, body);
      loaded.setData(answer);
      setSaved('Profile saved.');
    });
  };
  return (
    <>
      <p className="crumbs">
        <Link to="/subscribers">Subscribers</Link> / {subscriberId}
      </p>
      <PageHeader title={`Subscriber ${subscriberId}`} />
      <form className="panel" onSubmit={submit} aria-labelledby="profile-title">
        <h2 id="profile-title">Profile</h2>
        <fieldset disabled={!isAdmin}>
          <legend className="visually-hidden">Profile fields</legend>
          <div className="grid-2">
            {PROFILE_FIELDS.map(([name, label, type]) => (
              <Field key={name} label={label} type={type} value={profile[name] ?? ''} onChange={(value) => setProfile((current) => ({ ...current, [name]: value }))} />
            ))}
            <Field label="Custom data (JSON)" multiline rows={3} value={dataJson} onChange={setDataJson} />
          </div>
          <ErrorNote error={save.error} />
          {saved && <p role="status" className="ok-text">{saved}</p>}
          {isAdmin && (
            <button type="submit" className="primary" disabled={save.pending}>
              Save profile
            </button>
          )}
        </fieldset>
      </form>
      <ChannelCredentials subscriber={subscriber} canEdit={isAdmin} onChanged={loaded.reload} />
      <SubscriberPreferences subscriberId={subscriberId} canEdit={isAdmin} />
      <InboxPreviewPanel subscriberId={subscriberId} isAdmin={isAdmin} />
      <SubscriberMessages subscriberId={subscriberId} />
    </>
  );
}

type ChannelFlags = Partial<Record<(typeof CHANNELS)[number], boolean>>;

interface Preferences {
  global: { enabled: boolean; channels: ChannelFlags };
  workflows: Array<{
    enabled: boolean;
    channels: ChannelFlags;
    overrides: Array<{ channel: string; source: 'subscriber' | 'template' }>;
    workflow: { id: string; identifier: string; name: string; critical: boolean };
  }>;
}

/**
 * The subscriber's preferences as `GET /v2/subscribers/{id}/preferences?criticality=all` gives them: the global
 * channels and, per active workflow, the channels of its steps as they are decided (the subscriber's choice for the
 * workflow, else the global one, else the workflow's default). An admin's click saves one switch with
 * `PATCH /v2/subscribers/{id}/preferences` and the table is then read back from the API.
 */
function SubscriberPreferences({ subscriberId, canEdit }: { subscriberId: string; canEdit: boolean }) {
  const load = (signal?: AbortSignal) =>
    get<{ data: Preferences }>(`/v2/subscribers/${seg(subscriberId)}/preferences`, { signal, query: { criticality: 'all' } });
  const preferences = useLoad((signal) => load(signal), [subscriberId]);
  const action = useAction();
  const [saved, setSaved] = useState<string>();
  // The switch being saved shows its new state until the table is read back (or reverts if the save fails).
  const [saving, setSaving] = useState<{ row: string; channel: string; enabled: boolean }>();
  const change = (row: string, target: { id: string; name: string } | undefined, channel: string, enabled: boolean) => {
    setSaved(undefined);
    setSaving({ row, channel, enabled });
    void action
      .run(async () => {
        await patch(`/v2/subscribers/${seg(subscriberId)}/preferences`, { channels: { [channel]: enabled }, ...(target ? { workflowId: target.id } : {}) });
        preferences.setData(await load());
        setSaved(`Saved: ${CHANNEL_LABEL[channel]} ${enabled ? 'on' : 'off'} for ${target ? target.name : 'all workflows'}.`);
      })
      .finally(() => setSaving(undefined));
  };
  const data = preferences.data?.data;
  const rows: Array<{ key: string; name: string; target?: { id: string; name: string }; channels: ChannelFlags; locked: boolean; note?: string }> = data
    ? [
        { key: 'global', name: 'All workflows (global)', channels: data.global.channels, locked: false },
        ...data.workflows.map((entry) => ({
          key: entry.workflow.id,
          name: entry.workflow.name,
          target: { id: entry.workflow.id, name: entry.workflow.name },
          channels: entry.channels,
          locked: entry.workflow.critical,
          note: entry.workflow.critical ? 'critical: always sent' : entry.enabled ? undefined : 'switched off by the subscriber',
        })),
      ]
    : [];
  return (
    <section className="panel" aria-labelledby="prefs-title">
      <h2 id="prefs-title">Preferences</h2>
      <p className="muted">
        A workflow's box shows what is delivered: the subscriber's choice for that workflow, else their global choice, else the workflow's
        default. {canEdit ? 'A click saves at once.' : 'Read only: admins can change them.'}
      </p>
      <ErrorNote error={preferences.error ?? action.error} />
      {!data && preferences.loading && <Loading what="preferences" />}
      {data && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table className="prefs-table">
            <caption className="visually-hidden">Channel preferences of {subscriberId}</caption>
            <thead>
              <tr>
                <th scope="col">Applies to</th>
                {CHANNELS.map((channel) => (
                  <th scope="col" key={channel}>
                    {CHANNEL_LABEL[channel]}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.key}>
                  <th scope="row">
                    {row.name}
                    {row.note && <span className="muted small"> ({row.note})</span>}
                  </th>
                  {CHANNELS.map((channel) => {
                    const value = row.channels[channel];
                    if (value === undefined) {
                      return (
                        <td key={channel} className="muted">
                          <span aria-hidden="true">—</span>
                          <span className="visually-hidden">no {CHANNEL_LABEL[channel]} step</span>
                        </td>
                      );
                    }
                    return (
                      <td key={channel}>
                        <input
                          type="checkbox"
                          aria-label={`${CHANNEL_LABEL[channel]} for ${row.name}`}
                          checked={saving?.row === row.key && saving.channel === channel ? saving.enabled : value}
                          disabled={!canEdit || row.locked || action.pending}
                          onChange={(event) => change(row.key, row.target, channel, event.target.checked)}
                        />
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {saved && (
        <p role="status" className="ok-text">
          {saved}
        </p>
      )}
    </section>
  );
}

/** A failed download of the preview's chunk (a new release, a dropped link) stays inside its panel. */
class PreviewBoundary extends Component<{ children: ReactNode }, { failed?: string }> {
  state: { failed?: string } = {};
  static getDerivedStateFromError(error: unknown) {
    return { failed: error instanceof Error ? error.message : String(error) };
  }
  render() {
    return this.state.failed ? <ErrorNote error={`The Inbox preview could not load: ${this.state.failed}`} /> : this.props.children;
  }
}

/**
 * The subscriber's real `<Inbox />`, served by this Herald (admins only: its clicks mark messages read, archive them
 * and change preferences, as the subscriber). The settings come from a dashboard-only route that computes the HMAC
 * on the server when the environment asks for one.
 */
function InboxPreviewPanel({ subscriberId, isAdmin }: { subscriberId: string; isAdmin: boolean }) {
  const settings = useLoad(
    (signal) =>
      isAdmin
        ? get<{ data: InboxPreviewSettings }>(`/v1/dashboard/subscribers/${seg(subscriberId)}/inbox-preview`, { signal })
        : Promise.resolve(undefined),
    [subscriberId, isAdmin],
  );
  return (
    <section className="panel" aria-labelledby="inbox-preview-title">
      <h2 id="inbox-preview-title">Inbox preview</h2>
      {!isAdmin ? (
        <Notice>The live Inbox preview is for administrators: it acts as the subscriber (opening and clicking marks their messages).</Notice>
      ) : (
        <>
          <p className="muted">
            {subscriberId}'s <code>&lt;Inbox /&gt;</code>, live from this Herald. Clicks here act as the subscriber.
          </p>
          <ErrorNote error={settings.error} />
          {settings.data && (
            <PreviewBoundary>
              <Suspense fallback={<Loading what="the Inbox" />}>
                <InboxPreview {...settings.data.data} />
              </Suspense>
            </PreviewBoundary>
          )}
        </>
      )}
    </section>
  );
}

function ChannelCredentials({ subscriber, canEdit, onChanged }: { subscriber: Subscriber; canEdit: boolean; onChanged(): void }) {
  const [providerId, setProviderId] = useState('');
  const [webhookUrl, setWebhookUrl] = useState('');
  const [deviceTokens, setDeviceTokens] = useState('');
  const action = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const tokens = deviceTokens.split(/[\s,]+/).filter(Boolean);
      await put(`/v1/subscribers/${seg(subscriber.subscriberId)}/credentials`, {
        providerId,
        credentials: { ...(webhookUrl ? { webhookUrl } : {}), ...(tokens.length ? { deviceTokens: tokens } : {}) },
      });
      setProviderId('');
      setWebhookUrl('');
      setDeviceTokens('');
      onChanged();
    });
  };
  return (
    <section className="panel" aria-labelledby="credentials-title">
      <h2 id="credentials-title">Channel credentials</h2>
      {subscriber.channels.length === 0 && <p className="muted">No chat or push credentials.</p>}
      {subscriber.channels.length > 0 && (
        <ul className="plain-list">
          {subscriber.channels.map((channel) => (
            <li key={`${channel.providerId}-${channel.integrationIdentifier ?? ''}`}>
              <strong className="mono">{channel.providerId}</strong>
              {channel.integrationIdentifier && <span className="muted"> ({channel.integrationIdentifier})</span>}:{' '}
              {channel.credentials.webhookUrl && <span>webhook {channel.credentials.webhookUrl} </span>}
              {channel.credentials.deviceTokens && <span>{channel.credentials.deviceTokens.length} device token(s)</span>}
              {canEdit && (
                <button
                  type="button"
                  className="danger small-button"
                  onClick={() => action.run(async () => { await del(`/v1/subscribers/${seg(subscriber.subscriberId)}/credentials/${seg(channel.providerId)}`); onChanged(); })}
                >
                  Remove <span className="visually-hidden">{channel.providerId} credentials</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {canEdit && (
        <form onSubmit={submit} className="grid-3">
          <Field label="Provider ID (chat or push)" value={providerId} onChange={setProviderId} required placeholder="slack, fcm, …" />
          <Field label="Webhook URL (chat)" value={webhookUrl} onChange={setWebhookUrl} />
          <Field label="Device tokens (push, comma separated)" value={deviceTokens} onChange={setDeviceTokens} />
          <div className="form-actions">
            <button type="submit" disabled={action.pending}>
              Set credentials
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}

function SubscriberMessages({ subscriberId }: { subscriberId: string }) {
  const [page, setPage] = useState(0);
  const messages = useLoad(
    (signal) => get<{ data: Array<{ _id: string; channel: string; createdAt: string; subject?: string; content?: unknown; status: string; _notificationId: string; read: boolean }>; hasMore: boolean }>('/v1/messages', { signal, query: { subscriberId, limit: 20, page } }),
    [subscriberId, page],
  );
  const rows = messages.data?.data ?? [];
  return (
    <section className="panel" aria-labelledby="messages-title">
      <h2 id="messages-title">Messages</h2>
      <ErrorNote error={messages.error} />
      {messages.data && rows.length === 0 && <p className="muted">No messages yet.</p>}
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Messages sent to {subscriberId}</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Channel</th>
                <th scope="col">Content</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((message) => (
                <tr key={message._id}>
                  <td>
                    <Link to={`/activity/${seg(message._notificationId)}`}>
                      <Time iso={message.createdAt} />
                    </Link>
                  </td>
                  <td>{CHANNEL_LABEL[message.channel]}</td>
                  <td className="clip">{message.subject ? `${message.subject}: ` : ''}{typeof message.content === 'string' ? message.content.replace(/<[^>]+>/g, ' ').slice(0, 140) : ''}</td>
                  <td>
                    <Badge value={message.status} />
                    {message.channel === 'in_app' && <Badge value={message.read ? 'read' : 'unread'} />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {messages.data && <Pager page={page} hasMore={messages.data.hasMore} onPage={setPage} />}
    </section>
  );
}

