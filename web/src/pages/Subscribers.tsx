import { useEffect, useState, type FormEvent } from 'react';
import { del, get, patch, put, seg } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import { CHANNEL_LABEL } from '../status';
import { Badge, Empty, ErrorNote, Field, Loading, PageHeader, Pager, Select, Time, useAction, useLoad } from '../ui';

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
      <section className="panel" aria-labelledby="prefs-title">
        <h2 id="prefs-title">Preferences and Inbox preview</h2>
        <p className="muted" id="subscriber-extensions">
          The subscriber's channel preferences and a live preview of their <code>&lt;Inbox /&gt;</code> appear here once those features
          are part of this Herald.
        </p>
      </section>
      <SubscriberMessages subscriberId={subscriberId} />
    </>
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

