import { PostgresAdapter, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { newApplicationIdentifier } from '../../domain/ids.js';

/**
 * Versioned migrations, written once with Kysely's schema builder so they run unchanged on SQLite and
 * PostgreSQL. Append new migrations; never edit one that has shipped.
 * Numbers never to use: 0035, 0036, 0039, 0040 and 0041 were on branches or on main for a while and then reverted
 * (BENCHMARKS.md says why); a database that ran one must not meet a different migration under its name.
 */
const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('environments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('integrations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text', (c) => c.notNull())
        .addColumn('channel', 'text')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('credentials_enc', 'text', (c) => c.notNull())
        .addColumn('configurations', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('deleted_at', 'text')
        .addColumn('deleted_by', 'text')
        .addColumn('is_primary', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('conditions', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('integrations_identifier_unique')
        .on('integrations')
        .columns(['environment_id', 'identifier'])
        .unique()
        .where(sql.ref('deleted'), '=', 0)
        .execute();
      await db.schema.createIndex('integrations_env_channel').on('integrations').columns(['environment_id', 'channel']).execute();

      await db.schema
        .createTable('subscribers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('first_name', 'text')
        .addColumn('last_name', 'text')
        .addColumn('email', 'text')
        .addColumn('phone', 'text')
        .addColumn('avatar', 'text')
        .addColumn('locale', 'text')
        .addColumn('timezone', 'text')
        .addColumn('data', 'text')
        .addColumn('channels', 'text', (c) => c.notNull())
        .addColumn('topics', 'text', (c) => c.notNull())
        .addColumn('is_online', 'integer')
        .addColumn('last_online_at', 'text')
        .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('subscribers_subscriber_id_unique')
        .on('subscribers')
        .columns(['environment_id', 'subscriber_id'])
        .unique()
        .where(sql.ref('deleted'), '=', 0)
        .execute();
      await db.schema.createIndex('subscribers_env_email').on('subscribers').columns(['environment_id', 'email']).execute();
      await db.schema.createIndex('subscribers_env_created').on('subscribers').columns(['environment_id', 'created_at', 'id']).execute();

      await db.schema
        .createTable('workflows')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('workflows_workflow_id_unique')
        .on('workflows')
        .columns(['environment_id', 'workflow_id'])
        .unique()
        .where(sql.ref('deleted'), '=', 0)
        .execute();

      await db.schema
        .createTable('topics')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('topics_key_unique').on('topics').columns(['environment_id', 'key']).unique().execute();

      await db.schema
        .createTable('topic_subscriptions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('topic_id', 'text', (c) => c.notNull())
        .addColumn('topic_key', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('external_subscriber_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('topic_subscriptions_unique')
        .on('topic_subscriptions')
        .columns(['topic_id', 'subscriber_id'])
        .unique()
        .execute();
      await db.schema
        .createIndex('topic_subscriptions_subscriber')
        .on('topic_subscriptions')
        .columns(['environment_id', 'subscriber_id'])
        .execute();

      await db.schema
        .createTable('triggers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('transaction_id', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('request', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('triggers_transaction_unique')
        .on('triggers')
        .columns(['environment_id', 'transaction_id'])
        .unique()
        .execute();

      await db.schema
        .createTable('notifications')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('external_subscriber_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_email', 'text')
        .addColumn('template_id', 'text')
        .addColumn('transaction_id', 'text', (c) => c.notNull())
        .addColumn('digested_notification_id', 'text')
        .addColumn('channels_mask', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('severity', 'text')
        .addColumn('context_keys_norm', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('notifications_env_created').on('notifications').columns(['environment_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('notifications_env_transaction').on('notifications').columns(['environment_id', 'transaction_id']).execute();
      await db.schema
        .createIndex('notifications_env_subscriber')
        .on('notifications')
        .columns(['environment_id', 'external_subscriber_id', 'created_at'])
        .execute();
      await db.schema.createIndex('notifications_env_template').on('notifications').columns(['environment_id', 'template_id', 'created_at']).execute();
      await db.schema.createIndex('notifications_env_email').on('notifications').columns(['environment_id', 'subscriber_email', 'created_at']).execute();
      await db.schema.createIndex('notifications_env_context').on('notifications').columns(['environment_id', 'context_keys_norm', 'created_at']).execute();

      await db.schema
        .createTable('notification_topics')
        .addColumn('notification_id', 'text', (c) => c.notNull())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('topic_id', 'text', (c) => c.notNull())
        .addColumn('topic_key', 'text', (c) => c.notNull())
        .addColumn('subscription_id', 'text')
        .addPrimaryKeyConstraint('notification_topics_pk', ['notification_id', 'topic_id'])
        .execute();
      await db.schema.createIndex('notification_topics_key').on('notification_topics').columns(['environment_id', 'topic_key']).execute();
      await db.schema
        .createIndex('notification_topics_subscription')
        .on('notification_topics')
        .columns(['environment_id', 'subscription_id'])
        .execute();

      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('notification_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('transaction_id', 'text', (c) => c.notNull())
        .addColumn('template_id', 'text')
        .addColumn('step_index', 'integer', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text', (c) => c.notNull())
        .addColumn('digest_group', 'text')
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_notification_step').on('jobs').columns(['notification_id', 'step_index']).unique().execute();
      await db.schema.createIndex('jobs_env_transaction').on('jobs').columns(['environment_id', 'transaction_id']).execute();
      await db.schema.createIndex('jobs_digest_group').on('jobs').columns(['digest_group', 'status']).execute();

      await db.schema
        .createTable('execution_details')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('notification_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('is_retry', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('is_test', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('provider_id', 'text')
        .addColumn('raw', 'text')
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('execution_details_job').on('execution_details').columns(['job_id', 'created_at']).execute();
      await db.schema.createIndex('execution_details_notification').on('execution_details').columns(['notification_id']).execute();

      await db.schema
        .createTable('messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('notification_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('external_subscriber_id', 'text', (c) => c.notNull())
        .addColumn('template_id', 'text')
        .addColumn('job_id', 'text')
        .addColumn('transaction_id', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('read', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('seen', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('context_keys_norm', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('messages_job_unique').on('messages').column('job_id').unique().execute();
      await db.schema.createIndex('messages_env_created').on('messages').columns(['environment_id', 'deleted', 'created_at', 'id']).execute();
      await db.schema
        .createIndex('messages_env_subscriber')
        .on('messages')
        .columns(['environment_id', 'external_subscriber_id', 'deleted', 'created_at'])
        .execute();
      await db.schema
        .createIndex('messages_env_channel')
        .on('messages')
        .columns(['environment_id', 'channel', 'deleted', 'created_at'])
        .execute();
      await db.schema.createIndex('messages_env_transaction').on('messages').columns(['environment_id', 'transaction_id']).execute();
      await db.schema.createIndex('messages_env_context').on('messages').columns(['environment_id', 'context_keys_norm', 'created_at']).execute();
      await db.schema.createIndex('messages_notification').on('messages').column('notification_id').execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('body_hash', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('response_headers', 'text')
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['environment_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at').execute();

      await db.schema
        .createTable('rate_limit_counters')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('category', 'text', (c) => c.notNull())
        .addColumn('window_start', 'text', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('rate_limit_counters_pk', ['environment_id', 'category', 'window_start'])
        .execute();

      await db.schema
        .createTable('queue_jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('run_at', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('locked_until', 'text')
        .addColumn('last_error', 'text')
        .addColumn('dedupe_key', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('queue_jobs_ready').on('queue_jobs').columns(['state', 'run_at']).execute();
      await db.schema.createIndex('queue_jobs_dedupe').on('queue_jobs').column('dedupe_key').unique().execute();

      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0002_activity_list_indexes': {
    // The message and event lists filter by one column and read newest first by (created_at, id). An index
    // ending in created_at AND id serves both the filter and the whole ORDER BY, so the planner picks it over
    // scanning the environment in date order (which costs a full scan when the filter matches few rows).
    async up(db: Kysely<any>) {
      const replaced = [
        'messages_env_subscriber', 'messages_env_channel', 'messages_env_context', 'messages_env_transaction',
        'notifications_env_subscriber', 'notifications_env_template', 'notifications_env_email',
        'notifications_env_context', 'notifications_env_transaction',
      ];
      for (const name of replaced) await db.schema.dropIndex(name).execute();
      const messages: Array<[string, string]> = [
        ['messages_env_subscriber_list', 'external_subscriber_id'],
        ['messages_env_channel_list', 'channel'],
        ['messages_env_context_list', 'context_keys_norm'],
        ['messages_env_transaction_list', 'transaction_id'],
      ];
      for (const [name, column] of messages) {
        await db.schema.createIndex(name).on('messages').columns(['environment_id', column, 'deleted', 'created_at', 'id']).execute();
      }
      const notifications: Array<[string, string]> = [
        ['notifications_env_subscriber_list', 'external_subscriber_id'],
        ['notifications_env_template_list', 'template_id'],
        ['notifications_env_email_list', 'subscriber_email'],
        ['notifications_env_context_list', 'context_keys_norm'],
        ['notifications_env_transaction_list', 'transaction_id'],
      ];
      for (const [name, column] of notifications) {
        await db.schema.createIndex(name).on('notifications').columns(['environment_id', column, 'created_at', 'id']).execute();
      }
    },
  },
  '0003_list_indexes': {
    // Found by bench/lists.ts. The event list loads its page's jobs with `environment_id = ? AND notification_id
    // IN (...)`: SQLite served it from jobs_env_transaction (environment_id only), reading every job of the
    // environment per request (216 ms at 100k events). An index leading with both columns makes it 10 lookups.
    // The topicKey filter builds its list of event ids from notification_topics; with notification_id in the
    // index that is an index-only scan instead of one table lookup per linked event (7x faster at 100k).
    async up(db: Kysely<any>) {
      await db.schema.createIndex('jobs_env_notification').on('jobs').columns(['environment_id', 'notification_id', 'step_index']).execute();
      await db.schema
        .createIndex('notification_topics_key_notification')
        .on('notification_topics')
        .columns(['environment_id', 'topic_key', 'notification_id'])
        .execute();
      await db.schema.dropIndex('notification_topics_key').execute();
    },
  },
  '0004_queue_job_backoff': {
    // EnqueueOptions.backoffMs is per job; without a column the SQL queue could only use its default.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('queue_jobs').addColumn('backoff_ms', 'integer').execute();
    },
  },
  '0005_message_counters_and_topic_order': {
    // Found by bench/lists.ts at 1M rows. GET /v1/messages counted every matching row for totalCount (~400 ms
    // unfiltered); message_counters keeps exact totals per scope, maintained by SqlMessageRepository in the
    // transaction of each write. The topicKey filter of GET /v1/notifications read every link of the topic (SQLite)
    // or probed events in date order (PostgreSQL); with the event time on the link, one index range in
    // (topic_key, created_at, notification_id) order serves the page.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('message_counters')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('message_counters_pk', ['environment_id', 'scope', 'shard'])
        .execute();
      // The scopes SqlMessageRepository counts (messageCounterScopes), from the non-deleted messages, all in shard 0.
      const scopes: Array<[scope: string, column: string | undefined]> = [
        ['all', undefined],
        ['channel:', 'channel'],
        ['subscriber:', 'external_subscriber_id'],
        ['context:', 'context_keys_norm'],
      ];
      for (const [prefix, column] of scopes) {
        const scope = column === undefined ? sql`${sql.lit(prefix)}` : sql`${sql.lit(prefix)} || ${sql.ref(column)}`;
        const groupBy = column === undefined ? sql`environment_id` : sql`environment_id, ${sql.ref(column)}`;
        await sql`
          insert into message_counters (environment_id, scope, shard, count)
          select environment_id, ${scope}, 0, count(*) from messages where deleted = 0 group by ${groupBy}
        `.execute(db);
      }

      // SQLite adds a NOT NULL column only with a default; every insert writes the real time.
      await db.schema.alterTable('notification_topics').addColumn('created_at', 'text', (c) => c.notNull().defaultTo('')).execute();
      await sql`
        update notification_topics set created_at = coalesce(
          (select notifications.created_at from notifications where notifications.id = notification_topics.notification_id), '')
      `.execute(db);
      await db.schema
        .createIndex('notification_topics_key_created')
        .on('notification_topics')
        .columns(['environment_id', 'topic_key', 'created_at', 'notification_id'])
        .execute();
      await db.schema.dropIndex('notification_topics_key_notification').execute();
    },
  },
  '0006_accepted_triggers_index': {
    // The sweep that re-enqueues triggers still `accepted` (at worker start, then periodically) scanned the whole
    // triggers table: 42 ms at 20k triggers, seconds at millions. Almost every trigger leaves `accepted` within
    // milliseconds, so a partial index over those few rows answers it at any size.
    async up(db: Kysely<any>) {
      await db.schema.createIndex('triggers_accepted').on('triggers').column('created_at').where(sql.ref('state'), '=', 'accepted').execute();
    },
  },
  '0007_jobs_found_through_their_event': {
    // Every index is a page written per insert (`npm run bench -- --wal-pages`). Jobs are read by id, by event
    // (jobs_notification_step, unique, which the event list now uses with the environment checked on the rows), by
    // digest group, and by transaction only to cancel, which now goes through the transaction's events.
    async up(db: Kysely<any>) {
      await db.schema.dropIndex('jobs_env_notification').execute();
      await db.schema.dropIndex('jobs_env_transaction').execute();
    },
  },
  '0008_subscriber_preferences': {
    // One row per subscriber and level: the global row has workflow_id ''. The primary key is the only index: the
    // worker reads a subscriber's global and workflow rows in one range of it before every channel step, and the
    // preference routes read all of a subscriber's rows.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('subscriber_preferences')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer')
        .addColumn('channels', 'text', (c) => c.notNull())
        .addColumn('schedule', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('subscriber_preferences_pk', ['environment_id', 'subscriber_id', 'workflow_id'])
        .execute();
    },
  },
  '0010_application_identifiers': {
    // The Inbox: every environment gets the public identifier browsers send as `applicationIdentifier`
    // (existing ones are backfilled here), and API keys get an encrypted copy next to their hash so the
    // session route can verify `subscriberHash` HMACs. Keys made before this migration stay hash-only: their
    // plaintext was never stored, so they cannot be recovered (README: the Inbox, HMAC).
    async up(db: Kysely<any>) {
      await db.schema.alterTable('environments').addColumn('identifier', 'text').execute();
      const environments = await db.selectFrom('environments').select('id').execute();
      for (const environment of environments) {
        await db.updateTable('environments').set({ identifier: newApplicationIdentifier() }).where('id', '=', environment.id).execute();
      }
      await db.schema.createIndex('environments_identifier_unique').on('environments').column('identifier').unique().execute();
      await db.schema.alterTable('api_keys').addColumn('key_enc', 'text').execute();
    },
  },
  '0011_inbox_message_state': {
    // The Inbox filters a subscriber's in-app messages by archived / snoozed / severity / tags; these mirror the
    // document's fields in columns. Existing messages predate archive, snooze, severity and tags: the defaults are
    // their true state. One index serves the Inbox list, its cursor and its counts.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('messages').addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('messages').addColumn('snoozed_until', 'text').execute();
      await db.schema.alterTable('messages').addColumn('severity', 'text', (c) => c.notNull().defaultTo('none')).execute();
      await db.schema.alterTable('messages').addColumn('tags', 'text', (c) => c.notNull().defaultTo('')).execute();
      await db.schema
        .createIndex('messages_inbox')
        .on('messages')
        .columns(['environment_id', 'subscriber_id', 'channel', 'deleted', 'created_at', 'id'])
        .execute();
    },
  },
  '0013_dashboard_users': {
    // Dashboard sign-in: users per organization, server-side sessions (only a hash of the cookie value is stored),
    // one-time links (the first-start setup link and invites; hashes only) and sign-in attempt counters.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text')
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('users_organization').on('users').columns(['organization_id', 'created_at']).execute();

      await db.schema
        .createTable('dashboard_sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('dashboard_sessions_user').on('dashboard_sessions').column('user_id').execute();

      await db.schema
        .createTable('dashboard_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text')
        .addColumn('role', 'text')
        .addColumn('email', 'text')
        .addColumn('created_by', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('dashboard_tokens_organization').on('dashboard_tokens').columns(['organization_id', 'kind', 'created_at']).execute();

      await db.schema
        .createTable('login_attempts')
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('window_start', 'text', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('login_attempts_pk', ['key', 'window_start'])
        .execute();
    },
  },
  '0014_api_key_management': {
    // Keys listed, named by their last characters and revoked from the dashboard; a revoked key stays as a record.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('api_keys').addColumn('hint', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('revoked_at', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
    },
  },
  '0015_audit_log': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('environment_id', 'text')
        .addColumn('actor_kind', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('actor_label', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text')
        .addColumn('target_id', 'text')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('ip', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_log_organization_created').on('audit_log').columns(['organization_id', 'created_at', 'id']).execute();
    },
  },
  '0016_jobs_by_event_status': {
    // The event list's status filter. Partial indexes list the events with a failed, a canceled or an unfinished
    // job: failed and canceled ones only such jobs enter (a failure or a cancel writes one entry, a retry removes
    // it); unfinished jobs enter at insert and leave when done, on the rightmost pages (notification ids grow in
    // trigger order). To keep a job's write cost, the digest index, which every job's status change rewrote, now
    // holds digest jobs only (its one query asks for a digest group, which implies NOT NULL). README: the event
    // list's status filter; BENCHMARKS: pages written per trigger before and after.
    async up(db: Kysely<any>) {
      await db.schema.createIndex('jobs_failed').on('jobs').columns(['environment_id', 'notification_id']).where(sql.ref('status'), '=', sql.lit('failed')).execute();
      await db.schema.createIndex('jobs_canceled').on('jobs').columns(['environment_id', 'notification_id']).where(sql.ref('status'), '=', sql.lit('canceled')).execute();
      await db.schema
        .createIndex('jobs_unfinished')
        .on('jobs')
        .columns(['environment_id', 'notification_id'])
        .where(sql<boolean>`status in ('pending', 'queued', 'running', 'delayed')`)
        .execute();
      await db.schema.dropIndex('jobs_digest_group').execute();
      await db.schema.createIndex('jobs_digest_group').on('jobs').columns(['digest_group', 'status']).where(sql.ref('digest_group'), 'is not', null).execute();
    },
  },
  '0021_provider_delivery_reports': {
    // Provider delivery reports (docs/provider-delivery-reports.md): a report names the message by the vendor's own id,
    // kept at send time; a partial index, since in-app messages have none. provider_reports remembers each vendor
    // event id taken, so a vendor's redelivery of the same event changes nothing.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('messages').addColumn('provider_message_id', 'text').execute();
      await db.schema
        .createIndex('messages_provider_message_id')
        .on('messages')
        .columns(['environment_id', 'provider_message_id'])
        .where(sql.ref('provider_message_id'), 'is not', null)
        .execute();
      await db.schema
        .createTable('provider_reports')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('integration_id', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('provider_reports_pk', ['environment_id', 'integration_id', 'event_id'])
        .execute();
    },
  },
  '0020_webhooks': {
    // Outbound webhooks (docs/webhooks.md): endpoints, the outbox of domain events, and one row per delivery attempt.
    // Undispatched events and pending attempts have partial indexes: the relay and the sweep read only those.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('event_types', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('headers_enc', 'text', (c) => c.notNull())
        .addColumn('secret_enc', 'text', (c) => c.notNull())
        .addColumn('previous_secret_enc', 'text')
        .addColumn('previous_secret_expires_at', 'text')
        .addColumn('disabled_reason', 'text')
        .addColumn('failing_since', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('deleted_at', 'text')
        .execute();
      await db.schema.createIndex('webhook_endpoints_environment').on('webhook_endpoints').columns(['environment_id', 'enabled']).execute();
      await db.schema
        .createTable('webhook_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('dispatched', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_events_undispatched').on('webhook_events').column('id').where(sql.ref('dispatched'), '=', sql.lit(0)).execute();
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('endpoint_id', 'text', (c) => c.notNull())
        .addColumn('webhook_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('response_status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('response_body_snippet', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('due_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .execute();
      await db.schema.createIndex('webhook_attempts_endpoint').on('webhook_attempts').columns(['environment_id', 'endpoint_id', 'id']).execute();
      await db.schema.createIndex('webhook_attempts_event').on('webhook_attempts').columns(['environment_id', 'webhook_id']).execute();
      await db.schema.createIndex('webhook_attempts_pending').on('webhook_attempts').column('due_at').where(sql.ref('status'), '=', sql.lit('pending')).execute();
    },
  },
  '0022_framework_bridge': {
    // Code-first workflows (@novu/framework): which workflows came from a bridge (a re-sync deletes the external ones
    // no longer discovered), the bridge URL of each environment with the API key it was synced with (the key that
    // signs every call), and control values edited outside the code, per step; they survive a re-sync.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('workflows').addColumn('origin', 'text').execute();
      await db.schema
        .createTable('bridge_endpoints')
        .addColumn('environment_id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('api_key_id', 'text')
        .addColumn('synced_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('bridge_controls')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('step_id', 'text', (c) => c.notNull())
        .addColumn('controls', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('bridge_controls_pk', ['environment_id', 'workflow_id', 'step_id'])
        .execute();
    },
  },
  '0024_overview_aggregates': {
    // The dashboard's overview reads these, never the events: per environment and UTC hour, the channel steps that
    // ended per channel × provider × workflow × outcome (sent, failed, skipped; delivered and bounced when providers
    // report them; read and seen for in-app, by the message's creation hour), and a fixed histogram of trigger-to-
    // delivery latency. SqlJobRepository and SqlMessageRepository add to them in the transaction of the state change.
    // `shard` spreads concurrent PostgreSQL increments of one hot row over several rows (always 0 on SQLite).
    // Existing history is not backfilled: counting starts with this migration.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('overview_counts')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('hour', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('overview_counts_pk', ['environment_id', 'hour', 'channel', 'provider_id', 'workflow_id', 'outcome', 'shard'])
        .execute();
      await db.schema
        .createTable('overview_latency')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('hour', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('bucket', 'integer', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('overview_latency_pk', ['environment_id', 'hour', 'channel', 'bucket', 'shard'])
        .execute();
    },
  },
  '0018_idempotency_leases': {
    // A claim names its process and holds a short lease renewed while the request runs: a claim whose process died
    // lapses within seconds and a retry takes it over (docs/operations-runtime.md). Rows from before have no lease:
    // lapsed, so keys left stuck by an earlier crash free up too.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('idempotency_keys').addColumn('owner', 'text').execute();
      await db.schema.alterTable('idempotency_keys').addColumn('lease_expires_at', 'text').execute();
      await db.schema.alterTable('idempotency_keys').addColumn('seed', 'text').execute();
      // The heartbeat renews a process's claims by owner: only in-progress rows (a handful) enter this index, not the
      // day of answered keys the table holds.
      await db.schema
        .createIndex('idempotency_keys_in_progress')
        .on('idempotency_keys')
        .column('owner')
        .where(sql.ref('state'), '=', sql.lit('in_progress'))
        .execute();
    },
  },
  '0026_notification_buckets': {
    // Deep pages of the event list (issue 24): an OFFSET of thousands walked that many index entries, and on a
    // PostgreSQL table without a fresh visibility map (no autovacuum, or not yet) visited the heap for each. The
    // count of events per environment and second of created_at lets a page skip whole seconds (see
    // SqlNotificationRepository.listPage). Kept by triggers, so every writer (events, retention, imports) keeps
    // it exact in the transaction of its write; an event's created_at and environment never change, but an update
    // of either moves its count too. PostgreSQL only: SQLite's index walk is cheaper there than this seek, and its
    // triggers cost every event insert ~50-70 µs (an extra page per commit); the table exists on both, empty on SQLite
    // until 0027.
    async up(db: Kysely<any>) {
      await notificationBucketsTable(db).execute();
      if (db.getExecutor().adapter instanceof PostgresAdapter) {
        await sql`
          insert into notification_buckets (environment_id, bucket, shard, n)
          select environment_id, substr(created_at, 1, 19), hashtext(id) & 7, count(*) from notifications group by 1, 2, 3
        `.execute(db);
        // The count follows the row; a second's shard row is deleted when it reaches zero (retention empties old seconds).
        await sql`
          create function notification_buckets_count() returns trigger language plpgsql as $$
          begin
            if tg_op in ('DELETE', 'UPDATE') then
              update notification_buckets set n = n - 1
                where environment_id = old.environment_id and bucket = substr(old.created_at, 1, 19) and shard = hashtext(old.id) & 7;
              delete from notification_buckets
                where environment_id = old.environment_id and bucket = substr(old.created_at, 1, 19) and shard = hashtext(old.id) & 7 and n <= 0;
            end if;
            if tg_op in ('INSERT', 'UPDATE') then
              insert into notification_buckets (environment_id, bucket, shard, n)
                values (new.environment_id, substr(new.created_at, 1, 19), hashtext(new.id) & 7, 1)
                on conflict (environment_id, bucket, shard) do update set n = notification_buckets.n + 1;
            end if;
            return null;
          end $$
        `.execute(db);
        await sql`create trigger notification_buckets_insert after insert or delete on notifications for each row execute function notification_buckets_count()`.execute(db);
        await sql`
          create trigger notification_buckets_move after update of environment_id, created_at, id on notifications for each row
          when (old.environment_id is distinct from new.environment_id or old.created_at is distinct from new.created_at or old.id is distinct from new.id)
          execute function notification_buckets_count()
        `.execute(db);
      }
    },
  },
  '0027_notification_buckets_sqlite': {
    // The counts of 0026 on SQLite too (issue 24): a deep page there walked ~50 ns an index entry (10,000 entries on
    // page 1,000 of 10), and sqliteSeekPage (notification-repository.ts) skips whole seconds instead. Kept by triggers, as on PostgreSQL, so
    // every writer (events, retention, seeds, imports) keeps them exact in its own transaction. Under group commit a
    // trigger's upsert costs each event insert a few µs (the bucket's page is written once per commit; 0026's note of
    // 50-70 µs was for one commit per insert). One shard: SQLite has one writer. PostgreSQL: 0026's triggers already.
    async up(db: Kysely<any>) {
      if (db.getExecutor().adapter instanceof PostgresAdapter) return;
      // Remade WITHOUT ROWID (it was empty here): the count then sits in the primary key's own b-tree, and reading the
      // seconds newest first walks that b-tree alone, with no table lookup per second.
      await db.schema.dropTable('notification_buckets').execute();
      await notificationBucketsTable(db).modifyEnd(sql`without rowid`).execute();
      await sql`
        insert into notification_buckets (environment_id, bucket, shard, n)
        select environment_id, substr(created_at, 1, 19), 0, count(*) from notifications group by 1, 2
      `.execute(db);
      const counted = (row: 'new' | 'old') =>
        sql.raw(`environment_id = ${row}.environment_id and bucket = substr(${row}.created_at, 1, 19) and shard = 0`);
      const add = sql`
        insert into notification_buckets (environment_id, bucket, shard, n) values (new.environment_id, substr(new.created_at, 1, 19), 0, 1)
          on conflict (environment_id, bucket, shard) do update set n = n + 1;`;
      // A second's row is deleted when it reaches zero (retention empties old seconds).
      const remove = sql`
        update notification_buckets set n = n - 1 where ${counted('old')};
        delete from notification_buckets where ${counted('old')} and n <= 0;`;
      await sql`create trigger notification_buckets_insert after insert on notifications begin ${add} end`.execute(db);
      await sql`create trigger notification_buckets_delete after delete on notifications begin ${remove} end`.execute(db);
      await sql`
        create trigger notification_buckets_move after update of environment_id, created_at on notifications
        when old.environment_id is not new.environment_id or substr(old.created_at, 1, 19) is not substr(new.created_at, 1, 19)
        begin ${remove} ${add} end
      `.execute(db);
    },
  },
  '0028_message_list_text': {
    // Each message's text as GET /v1/messages writes it, less its subscriber (issue 24): written with every message
    // write, so a list page reads one value per message instead of fifteen columns and a JSON document to take apart.
    // Messages written before stay NULL and are written from their columns and document, as before.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('messages').addColumn('list_text', 'text').execute();
    },
  },
  '0029_notification_texts': {
    // GET /v1/notifications (issue 24): an event whose jobs have all ended keeps the text its list entry is written as
    // (notification_texts), so a page reads one value per event instead of its jobs and their execution details, and
    // parses and re-serialises nothing. The worker writes it when the event's last step ends (keepText in
    // notification-repository.ts). Any later write to the event, its jobs or their execution details deletes it, by
    // triggers, so every writer (delivery reports, cancels, retries, retention, hand-written SQL) invalidates it in
    // its own transaction; the event then falls back to being assembled. SQLite only: its writes are serialised, so
    // reading an event and keeping its text in one transaction cannot miss a concurrent write. PostgreSQL keeps the
    // table empty (no triggers): there a delete by a concurrent transaction cannot see an uncommitted text. (0030 lets
    // PostgreSQL keep texts another way: each with a print of its rows, checked by the page.)
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('notification_texts')
        .addColumn('notification_id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .execute();
      if (db.getExecutor().adapter instanceof PostgresAdapter) return;
      const forget = (row: 'new' | 'old', column: string) => sql.raw(`delete from notification_texts where notification_id = ${row}.${column};`);
      for (const table of ['jobs', 'execution_details']) {
        await sql`create trigger ${sql.raw(`notification_texts_${table}_insert`)} after insert on ${sql.table(table)} begin ${forget('new', 'notification_id')} end`.execute(db);
        await sql`
          create trigger ${sql.raw(`notification_texts_${table}_update`)} after update on ${sql.table(table)}
          begin ${forget('old', 'notification_id')} ${forget('new', 'notification_id')} end
        `.execute(db);
        await sql`create trigger ${sql.raw(`notification_texts_${table}_delete`)} after delete on ${sql.table(table)} begin ${forget('old', 'notification_id')} end`.execute(db);
      }
      await sql`create trigger notification_texts_event_update after update on notifications begin ${forget('old', 'id')} ${forget('new', 'id')} end`.execute(db);
      await sql`create trigger notification_texts_event_delete after delete on notifications begin ${forget('old', 'id')} end`.execute(db);
    },
  },
  '0030_notification_text_prints': {
    // GET /v1/notifications scaled out (issue 24): PostgreSQL keeps event texts too, each with the print of the rows it
    // was written from (the xmins of the event, its jobs and their execution details: eventPrint in
    // notification-repository.ts); a page uses a text only while the print of the rows stored now is the same. No
    // trigger or lock on any write (session 15's triggers took a row lock per job and detail write and halved the
    // trigger rate). SQLite keeps its triggers and leaves the column empty.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('notification_texts').addColumn('print', 'text').execute();
    },
  },
  '0031_message_templates': {
    // Data size (issue 24 point 4): every message embedded its workflow's snapshot (~1.1 KB) in its document and again
    // in its list text, so a SQLite row no longer fit three to a page (4.1 KB per message row). Messages now reference
    // one copy per snapshot, by a hash of its text. Rows written before keep their inline snapshot and read as before.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('message_templates')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('text', 'text', (c) => c.notNull())
        .execute();
      // No statement reads messages by their event (the event pages read jobs and details; retention deletes messages
      // by environment and time), and every message insert wrote this index: 33-78 bytes per message (bench:storage).
      await db.schema.dropIndex('messages_notification').ifExists().execute();
    },
  },
  '0032_execution_details_by_event': {
    // Embedded deliveries (issue 24, session 18): every in-app delivery writes three execution details, and each wrote
    // an entry of execution_details_job. Its one reader, a job's details (jobs.get), now finds them through the job's
    // event (execution_details_notification, a few rows per event) with the job checked on the rows; every other read
    // and retention's delete already went by the event.
    async up(db: Kysely<any>) {
      await db.schema.dropIndex('execution_details_job').ifExists().execute();
    },
  },
  '0033_notification_tenths_sqlite': {
    // Embedded events list (issue 24, session 19): a deep page finds its second by notification_buckets (0027) and then
    // walked that second's index entries up to the page (~40 ns each; bench:http writes 1,000-5,000 events a second, so
    // ~250-1,250 entries walked per page on average, a tenth of its CPU). The counts per tenth of a second bound the walk
    // to a tenth's events; kept by triggers as 0027's, so every writer keeps them exact in its own transaction. The
    // table exists on PostgreSQL (one schema for both) but stays empty: its seek is one statement over the seconds.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('notification_tenths')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('bucket', 'text', (c) => c.notNull())
        .addColumn('n', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('notification_tenths_pk', ['environment_id', 'bucket'])
        .$call((table) => (db.getExecutor().adapter instanceof PostgresAdapter ? table : table.modifyEnd(sql`without rowid`)))
        .execute();
      if (db.getExecutor().adapter instanceof PostgresAdapter) return;
      await sql`
        insert into notification_tenths (environment_id, bucket, n)
        select environment_id, substr(created_at, 1, 21), count(*) from notifications group by 1, 2
      `.execute(db);
      const counted = (row: 'new' | 'old') => sql.raw(`environment_id = ${row}.environment_id and bucket = substr(${row}.created_at, 1, 21)`);
      const add = sql`
        insert into notification_tenths (environment_id, bucket, n) values (new.environment_id, substr(new.created_at, 1, 21), 1)
          on conflict (environment_id, bucket) do update set n = n + 1;`;
      const remove = sql`
        update notification_tenths set n = n - 1 where ${counted('old')};
        delete from notification_tenths where ${counted('old')} and n <= 0;`;
      await sql`create trigger notification_tenths_insert after insert on notifications begin ${add} end`.execute(db);
      await sql`create trigger notification_tenths_delete after delete on notifications begin ${remove} end`.execute(db);
      await sql`
        create trigger notification_tenths_move after update of environment_id, created_at on notifications
        when old.environment_id is not new.environment_id or substr(old.created_at, 1, 21) is not substr(new.created_at, 1, 21)
        begin ${remove} ${add} end
      `.execute(db);
    },
  },
  '0034_notification_buckets_connection_shard': {
    // Scaled-out deliveries (issue 24, session 19): every delivery's held write inserts its event, and 0026's trigger
    // added it to the row of its second picked by a hash of the event's id (8 rows a second). That row stays locked
    // until the write's commit is flushed, and with ten connections writing at once most writes waited on another's
    // (`Lock:transactionid`). An event is now added to its connection's row of the second (the backend's process id
    // modulo 32, as the counters of the same write, see backend-shard.ts), so writes running at one moment use different
    // rows. A removed event is taken off one row of its second that still counts one (the lowest shard; FOR UPDATE
    // waits for a concurrent change and rechecks `n > 0` on the row's newest version, moving on to the next row
    // otherwise); a row that reaches zero is deleted, as before. Readers sum a second's rows whatever their shards.
    // SQLite keeps its one shard (0027).
    async up(db: Kysely<any>) {
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      await sql`
        create or replace function notification_buckets_count() returns trigger language plpgsql as $$
        declare
          taken integer;
        begin
          if tg_op in ('DELETE', 'UPDATE') then
            select shard into taken from notification_buckets
              where environment_id = old.environment_id and bucket = substr(old.created_at, 1, 19) and n > 0
              order by shard limit 1 for update;
            if taken is not null then
              update notification_buckets set n = n - 1
                where environment_id = old.environment_id and bucket = substr(old.created_at, 1, 19) and shard = taken;
              delete from notification_buckets
                where environment_id = old.environment_id and bucket = substr(old.created_at, 1, 19) and shard = taken and n <= 0;
            end if;
          end if;
          if tg_op in ('INSERT', 'UPDATE') then
            insert into notification_buckets (environment_id, bucket, shard, n)
              values (new.environment_id, substr(new.created_at, 1, 19), pg_backend_pid() % 32, 1)
              on conflict (environment_id, bucket, shard) do update set n = notification_buckets.n + 1;
          end if;
          return null;
        end $$
      `.execute(db);
    },
  },
  '0037_subscribers_without_env_email': {
    // Scaled-out deliveries (issue 24, session 20): subscribers_env_email (environment_id, email) served no query (the
    // list's email filter compares lower(email)), but it led with environment_id as the unique index does, and its
    // entries are the smallest (most emails are null). Without statistics (autovacuum off, or a table before its first
    // ANALYZE), PostgreSQL's generic plan for a read by (environment, subscriberId) tied between the two from a few
    // hundred to a thousand or two subscribers, and settled on this one: a walk of every subscriber of the environment
    // per read, kept for the prepared statement's life (BENCHMARKS.md, session 19). Without it the read has one index
    // that can find its row; every new subscriber also writes one index entry fewer.
    async up(db: Kysely<any>) {
      await db.schema.dropIndex('subscribers_env_email').ifExists().execute();
    },
  },
  '0038_delivery_index_entries': {
    // Embedded deliveries (issue 24, session 22): every in-app delivery wrote an entry in each index of its event, its
    // message, their jobs and details, the subscriber, the trigger and the counters, and each of those b-trees wrote
    // ~0.11-0.18 WAL pages per delivery (BENCHMARKS.md, session 21). Three of them held entries no query can read:
    // - the context indexes of messages and notifications held every row, though most rows have no context keys ('')
    //   and the list filters ask only for a set of keys (an API filter cannot be empty). They now hold the rows with
    //   keys; the filters state the condition as written here (contextKeysAre, plan-hints.ts), which both databases
    //   need to use a partial index for a bound value.
    // - notifications_env_email_list held the events of subscribers without an email (an email filter compares with
    //   `=` or `IN`, which no null matches; both databases infer `IS NOT NULL` from those comparisons).
    // SQLite also keeps the count tables WITHOUT ROWID (as notification_buckets, 0027): message_counters, overview_counts
    // and overview_latency were each a table b-tree plus the primary key's own index (sqlite_autoindex_<table>_1), two
    // b-trees written by every commit's sums (and by a new subscriber's first message), where the primary key's b-tree
    // alone holds the row (a key and a count). Their columns and types are those of 0005 and 0024.
    async up(db: Kysely<any>) {
      await db.schema.dropIndex('messages_env_context_list').execute();
      await db.schema
        .createIndex('messages_env_context_list')
        .on('messages')
        .columns(['environment_id', 'context_keys_norm', 'deleted', 'created_at', 'id'])
        .where(sql.ref('context_keys_norm'), '<>', sql.lit(''))
        .execute();
      await db.schema.dropIndex('notifications_env_context_list').execute();
      await db.schema
        .createIndex('notifications_env_context_list')
        .on('notifications')
        .columns(['environment_id', 'context_keys_norm', 'created_at', 'id'])
        .where(sql.ref('context_keys_norm'), '<>', sql.lit(''))
        .execute();
      await db.schema.dropIndex('notifications_env_email_list').execute();
      await db.schema
        .createIndex('notifications_env_email_list')
        .on('notifications')
        .columns(['environment_id', 'subscriber_email', 'created_at', 'id'])
        .where(sql.ref('subscriber_email'), 'is not', null)
        .execute();
      if (db.getExecutor().adapter instanceof PostgresAdapter) return;
      const counts: Array<[string, string[], string[]]> = [
        ['message_counters', ['environment_id', 'scope', 'shard'], ['count']],
        ['overview_counts', ['environment_id', 'hour', 'channel', 'provider_id', 'workflow_id', 'outcome', 'shard'], ['count']],
        ['overview_latency', ['environment_id', 'hour', 'channel', 'bucket', 'shard'], ['count']],
      ];
      for (const [table, key, values] of counts) {
        const columns = [...key, ...values];
        const remade = `${table}_0038`;
        await db.schema
          .createTable(remade)
          .$call((create) => columns.reduce((t, column) => t.addColumn(column, column === 'shard' || column === 'bucket' || column === 'count' ? 'integer' : 'text', (c) => c.notNull()), create))
          .addPrimaryKeyConstraint(`${table}_pk`, key as never)
          .modifyEnd(sql`without rowid`)
          .execute();
        const list = sql.join(columns.map((column) => sql.ref(column)));
        await sql`insert into ${sql.table(remade)} (${list}) select ${list} from ${sql.table(table)}`.execute(db);
        await db.schema.dropTable(table).execute();
        await db.schema.alterTable(remade).renameTo(table).execute();
      }
    },
  },
};

/** notification_buckets as 0026 made it (0027 remakes it on SQLite, WITHOUT ROWID). */
function notificationBucketsTable(db: Kysely<any>) {
  return db.schema
    .createTable('notification_buckets')
    .addColumn('environment_id', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_buckets_pk', ['environment_id', 'bucket', 'shard']);
}

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
