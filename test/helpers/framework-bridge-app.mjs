// A code-first app as a Novu user writes one: workflows defined with the real @novu/framework, served by its
// express adapter at /api/novu. Run as a child process by test/helpers/framework-bridge.ts with NODE_ENV=production,
// so the framework checks Herald's HMAC signature strictly. Two workflows misbehave on purpose (see faults below);
// `/calls` lists every request the bridge received, for the tests to count retries.
import express from 'express';
import { workflow } from '@novu/framework';
import { serve } from '@novu/framework/express';

const without = new Set((process.env.BRIDGE_WITHOUT ?? '').split(',').filter(Boolean));

const welcome = workflow(
  'welcome',
  async ({ step, payload }) => {
    await step.inApp(
      'hello',
      async (controls) => ({
        subject: `${controls.greeting}, ${payload.name}!`,
        body: `You are on the ${payload.plan} plan.`,
        data: { plan: payload.plan },
        primaryAction: { label: 'Open', redirect: { url: `/plans/${payload.plan}` } },
      }),
      {
        controlSchema: {
          type: 'object',
          properties: { greeting: { type: 'string', default: 'Hello', title: 'Greeting' } },
          additionalProperties: false,
        },
      },
    );
    await step.email(
      'welcome-email',
      async (controls) => ({
        subject: `Welcome aboard, ${payload.name}`,
        body: `<p>Hi ${payload.name}, thanks for choosing ${payload.plan}.</p><p>${controls.signature}</p>`,
      }),
      {
        controlSchema: {
          type: 'object',
          properties: { signature: { type: 'string', default: 'The Acme team' } },
          additionalProperties: false,
        },
        // Skipped by code: the payload says the user wants no email.
        skip: () => payload.noEmail === true,
      },
    );
  },
  {
    name: 'Welcome',
    tags: ['onboarding'],
    severity: 'high',
    payloadSchema: {
      type: 'object',
      properties: { name: { type: 'string' }, plan: { type: 'string', enum: ['free', 'pro'] }, noEmail: { type: 'boolean' } },
      required: ['name', 'plan'],
      additionalProperties: false,
    },
  },
);

const scoring = workflow(
  'scoring',
  async ({ step, payload }) => {
    const score = await step.custom(
      'score',
      async () => {
        const points = payload.points;
        return { points, tier: points >= 100 ? 'gold' : 'silver' };
      },
      {
        outputSchema: {
          type: 'object',
          properties: { points: { type: 'number' }, tier: { type: 'string' } },
          required: ['points', 'tier'],
          additionalProperties: false,
        },
      },
    );
    await step.inApp('tier-note', async () => ({ body: `Your tier is ${score.tier} (${score.points} points)` }));
  },
  { payloadSchema: { type: 'object', properties: { points: { type: 'number' } }, required: ['points'] } },
);

// Without a payloadSchema the framework drops every payload field (its default schema allows none).
const reminder = workflow(
  'reminder',
  async ({ step, payload }) => {
    await step.delay('wait', async () => ({ type: 'regular', amount: payload.seconds, unit: 'seconds' }));
    await step.inApp('remind', async () => ({ body: `Reminder: ${payload.what}` }));
  },
  { payloadSchema: { type: 'object', properties: { seconds: { type: 'number', default: 2 }, what: { type: 'string' } }, required: ['what'] } },
);

const orders = workflow('order-digest', async ({ step }) => {
  // The digested events carry each trigger's payload as Herald stored it.
  const digest = await step.digest('collect', async () => ({ amount: 3, unit: 'seconds' }));
  await step.email('summary', async () => ({
    subject: `${digest.events.length} new orders`,
    body: `<ul>${digest.events.map((event) => `<li>${event.payload.item}</li>`).join('')}</ul>`,
  }));
});

const flaky = workflow(
  'flaky',
  async ({ step, payload }) => {
    await step.inApp('note', async () => ({ body: `Flaky ${payload.n} finally answered` }));
  },
  { payloadSchema: { type: 'object', properties: { n: { type: 'number' } } } },
);

const refused = workflow('refused', async ({ step }) => {
  await step.inApp('note', async () => ({ body: 'never shown' }));
});

const removable = workflow('removable', async ({ step }) => {
  await step.inApp('note', async () => ({ body: 'still here' }));
});

// Provider overrides from code: Slack blocks computed next to the step's text.
const deployAlert = workflow(
  'deploy-alert',
  async ({ step, payload }) => {
    await step.chat('alert', async () => ({ body: `Deployed ${payload.version}` }), {
      providers: {
        slack: ({ outputs }) => ({ blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `*${outputs.body}*` } }] }),
      },
    });
  },
  { payloadSchema: { type: 'object', properties: { version: { type: 'string' } } } },
);

// Preferences from code: email off by default; subscribers may change it.
const quiet = workflow(
  'quiet',
  async ({ step }) => {
    await step.inApp('note', async () => ({ body: 'In the inbox only' }));
    await step.email('mail', async () => ({ subject: 'Never sent', body: '<p>off by default</p>' }));
  },
  { tags: ['digest', 'weekly'], severity: 'low', preferences: { channels: { email: { enabled: false } } } },
);

// At most one alert per subscriber per minute.
const throttled = workflow('throttled', async ({ step }) => {
  await step.throttle('limit', async () => ({ type: 'fixed', amount: 1, unit: 'minutes', threshold: 1 }));
  await step.inApp('alert', async () => ({ body: 'CPU is high' }));
});

const workflows = [deployAlert, quiet, throttled, welcome, scoring, reminder, orders, flaky, refused, removable].filter((entry) => !without.has(entry.id));

const calls = [];
let flakyFailures = 0;
const app = express();
app.use(express.json());
app.get('/calls', (_req, res) => res.json(calls));
app.use('/api/novu', (req, res, next) => {
  const { action, workflowId, stepId } = req.query;
  calls.push({ method: req.method, action, workflowId, stepId, signed: Boolean(req.headers['novu-signature']) });
  // Faults: `flaky` answers 500 twice before the framework answers; `refused` is refused with a 400.
  if (action === 'execute' && workflowId === 'flaky' && flakyFailures < 2) {
    flakyFailures += 1;
    return res.status(500).json({ message: `Database unavailable (${flakyFailures})`, code: 'BridgeError' });
  }
  if (action === 'execute' && workflowId === 'refused') {
    return res.status(400).json({ message: 'Account 42 is closed', code: 'AccountClosedError', data: { account: 42 } });
  }
  next();
});
app.use('/api/novu', serve({ workflows }));

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`bridge listening on ${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
