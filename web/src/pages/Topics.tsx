import { useState, type FormEvent } from 'react';
import { api, get, post, seg } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import { Empty, ErrorNote, Field, Loading, PageHeader, Time, useAction, useLoad } from '../ui';

interface Topic {
  _id: string;
  key: string;
  name?: string;
  createdAt: string;
}

export function TopicsPage() {
  const { isAdmin } = useSession();
  const [cursor, setCursor] = useState<string | undefined>();
  const list = useLoad((signal) => get<{ data: Topic[]; next: string | null; previous: string | null; totalCount: number }>('/v2/topics', { signal, query: { limit: 50, after: cursor } }), [cursor]);
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const create = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run(async () => {
      await post('/v2/topics', { key, name: name || undefined });
      setKey('');
      setName('');
      list.reload();
    });
  };
  const rows = list.data?.data ?? [];
  return (
    <>
      <PageHeader title="Topics" />
      {isAdmin && (
        <form className="toolbar" onSubmit={submit} aria-label="Create a topic">
          <Field label="Topic key" value={key} onChange={setKey} required />
          <Field label="Name" value={name} onChange={setName} />
          <button type="submit" className="primary" disabled={create.pending}>
            Create topic
          </button>
        </form>
      )}
      <ErrorNote error={list.error ?? create.error} />
      {!list.data && list.loading && <Loading what="topics" />}
      {list.data && rows.length === 0 && <Empty>No topics yet.</Empty>}
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Topics ({list.data?.totalCount ?? rows.length})</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((topic) => (
                <tr key={topic._id}>
                  <td>
                    <Link to={`/topics/${seg(topic.key)}`} className="mono">
                      {topic.key}
                    </Link>
                  </td>
                  <td>{topic.name ?? '—'}</td>
                  <td>
                    <Time iso={topic.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav className="pager" aria-label="Pages">
        <button type="button" disabled={!list.data?.previous} onClick={() => setCursor(undefined)}>
          First page
        </button>
        <button type="button" disabled={!list.data?.next} onClick={() => setCursor(list.data?.next ?? undefined)}>
          Next
        </button>
      </nav>
    </>
  );
}

export function TopicPage({ topicKey }: { topicKey: string }) {
  const { isAdmin } = useSession();
  const subscriptions = useLoad(
    (signal) => get<{ data: Array<{ _id: string; createdAt: string; subscriber: { subscriberId: string; email?: string | null } | null }> }>(`/v2/topics/${seg(topicKey)}/subscriptions`, { signal, query: { limit: 100 } }),
    [topicKey],
  );
  const [subscriberIds, setSubscriberIds] = useState('');
  const action = useAction();
  const add = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      await post(`/v2/topics/${seg(topicKey)}/subscriptions`, { subscriberIds: subscriberIds.split(/[\s,]+/).filter(Boolean) });
      setSubscriberIds('');
      subscriptions.reload();
    });
  };
  const rows = subscriptions.data?.data ?? [];
  return (
    <>
      <p className="crumbs">
        <Link to="/topics">Topics</Link> / {topicKey}
      </p>
      <PageHeader title={`Topic ${topicKey}`} />
      {isAdmin && (
        <form className="toolbar" onSubmit={add} aria-label="Add subscribers">
          <Field label="Subscriber IDs (comma separated)" value={subscriberIds} onChange={setSubscriberIds} required />
          <button type="submit" className="primary" disabled={action.pending}>
            Add subscribers
          </button>
        </form>
      )}
      <ErrorNote error={subscriptions.error ?? action.error} />
      {!subscriptions.data && subscriptions.loading && <Loading what="subscriptions" />}
      {subscriptions.data && rows.length === 0 && <Empty>No subscribers in this topic.</Empty>}
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Subscribers of {topicKey}</caption>
            <thead>
              <tr>
                <th scope="col">Subscriber</th>
                <th scope="col">Email</th>
                <th scope="col">Since</th>
                {isAdmin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {rows.map((subscription) => (
                <tr key={subscription._id}>
                  <td>
                    {subscription.subscriber ? (
                      <Link to={`/subscribers/${seg(subscription.subscriber.subscriberId)}`} className="mono">
                        {subscription.subscriber.subscriberId}
                      </Link>
                    ) : (
                      <span className="muted">deleted subscriber</span>
                    )}
                  </td>
                  <td>{subscription.subscriber?.email ?? '—'}</td>
                  <td>
                    <Time iso={subscription.createdAt} />
                  </td>
                  {isAdmin && (
                    <td>
                      {subscription.subscriber && (
                        <button
                          type="button"
                          className="danger"
                          onClick={() =>
                            action.run(async () => {
                              await fetchDelete(topicKey, subscription.subscriber!.subscriberId);
                              subscriptions.reload();
                            })
                          }
                        >
                          Remove <span className="visually-hidden">{subscription.subscriber.subscriberId}</span>
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** DELETE with a body: the unsubscribe route takes the ids in its body. */
async function fetchDelete(topicKey: string, subscriberId: string): Promise<void> {
  await api('DELETE', `/v2/topics/${seg(topicKey)}/subscriptions`, { body: { subscriberIds: [subscriberId] } });
}
