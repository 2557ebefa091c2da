import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { twilioProvider } from '../../../src/providers/sms/twilio.js';
import { startHttpFake, unusedPort, type HttpFake } from '../../fakes/http-fake.js';
import { testProviderContext } from '../../fakes/provider-context.js';
import { providerFailure } from '../../fakes/provider-errors.js';

describe('twilio', () => {
  let fake: HttpFake;
  const ctx = testProviderContext();
  // Short only where the fake hangs: the calls it answers get the default, as a loaded machine can take 300 ms.
  const hangCtx = testProviderContext(300);
  const credentials = () => ({ accountSid: 'AC123', token: 'tok', from: '+15550001111', baseUrl: fake.url });
  const basic = `Basic ${Buffer.from('AC123:tok').toString('base64')}`;

  beforeEach(async () => {
    fake = await startHttpFake(() => ({
      status: 201,
      body: { sid: 'SM1', date_created: 'Thu, 30 Jul 2015 20:12:31 +0000', status: 'queued' },
    }));
  });
  afterEach(async () => {
    await fake.close();
  });

  it('POSTs a form to Messages.json with basic auth', async () => {
    const result = await twilioProvider.send(credentials(), { to: '+15552223333', content: 'Your code is 1234' }, ctx);
    expect(result).toMatchObject({ id: 'SM1', date: 'Thu, 30 Jul 2015 20:12:31 +0000' });
    const [request] = fake.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/2010-04-01/Accounts/AC123/Messages.json');
    expect(request.headers.authorization).toBe(basic);
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      To: '+15552223333',
      Body: 'Your code is 1234',
      From: '+15550001111',
    });
  });

  it('sends a Messaging Service SID as MessagingServiceSid', async () => {
    await twilioProvider.send({ ...credentials(), from: 'MG999' }, { to: '+1555', content: 'x' }, ctx);
    expect(new URLSearchParams(fake.requests[0].body).get('MessagingServiceSid')).toBe('MG999');
  });

  it('passes overrides.StatusCallback (the delivery-report URL) to Twilio', async () => {
    const url = 'https://notify.example.com/v1/webhooks/organizations/o/environments/e/sms/i';
    await twilioProvider.send(credentials(), { to: '+1555', content: 'x', overrides: { StatusCallback: url } }, ctx);
    expect(new URLSearchParams(fake.requests[0].body).get('StatusCallback')).toBe(url);
  });

  it('check() GETs the account', async () => {
    fake.setHandler(() => ({ status: 200, body: { sid: 'AC123' } }));
    await twilioProvider.check!(credentials(), ctx);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/2010-04-01/Accounts/AC123.json' });
    expect(fake.requests[0].headers.authorization).toBe(basic);
  });

  it('maps 500, 400, a timeout and a closed port', async () => {
    fake.setHandler(() => ({ status: 500, body: { code: 20500 } }));
    expect((await providerFailure(twilioProvider.send(credentials(), { to: '+1', content: 'x' }, ctx))).retryable).toBe(true);

    fake.setHandler(() => ({ status: 400, body: { code: 21211, message: "The 'To' number is not valid" } }));
    const invalid = await providerFailure(twilioProvider.send(credentials(), { to: '+1', content: 'x' }, ctx));
    expect(invalid.retryable).toBe(false);
    expect(invalid.raw).toContain('21211');

    fake.setHandler(() => 'hang');
    const timeout = await providerFailure(twilioProvider.send(credentials(), { to: '+1', content: 'x' }, hangCtx));
    expect(timeout).toMatchObject({ retryable: true });
    expect(timeout.message).toContain('timed out after 300 ms');

    const port = await unusedPort();
    const closed = await providerFailure(
      twilioProvider.send({ ...credentials(), baseUrl: `http://127.0.0.1:${port}` }, { to: '+1', content: 'x' }, ctx),
    );
    expect(closed.retryable).toBe(true);
  });
});
