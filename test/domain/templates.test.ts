import { describe, expect, it } from 'vitest';
import { createTemplateRenderer, TemplateError, type TemplateContext } from '../../src/domain/templates.js';

const context: TemplateContext = {
  payload: { orderId: 'o-1', name: '<b>Ada & co</b>', items: [{ sku: 'A' }, { sku: 'B' }], total: 42 },
  subscriber: { subscriberId: 's-1', firstName: 'Ada', email: 'ada@example.com' },
  actor: { firstName: 'Grace' },
  steps: { digest: { events: [{ orderId: 'o-1' }, { orderId: 'o-2' }], eventCount: 2 } },
};

async function renderError(template: string, renderer = createTemplateRenderer()): Promise<TemplateError> {
  try {
    await renderer.render(template, context);
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error(`expected ${template} to fail`);
}

describe('createTemplateRenderer: render', () => {
  const renderer = createTemplateRenderer();

  it('renders payload, subscriber, actor and digest variables', async () => {
    expect(await renderer.render('Hi {{ subscriber.firstName }}, order {{ payload.orderId }}', context)).toBe('Hi Ada, order o-1');
    expect(await renderer.render('{{ actor.firstName }} replied', context)).toBe('Grace replied');
    expect(await renderer.render('{{ steps.digest.eventCount }} orders: {% for e in steps.digest.events %}{{ e.orderId }} {% endfor %}', context)).toBe(
      '2 orders: o-1 o-2 ',
    );
    expect(await renderer.render('{{ payload.items | map: "sku" | join: "," }} {{ payload.total | plus: 1 }}', context)).toBe('A,B 43');
  });

  it('does not escape HTML unless the template says so', async () => {
    expect(await renderer.render('{{ payload.name }}', context)).toBe('<b>Ada & co</b>');
    expect(await renderer.render('{{ payload.name | escape }}', context)).toBe('&lt;b&gt;Ada &amp; co&lt;/b&gt;');
  });

  it('renders missing variables as empty and plain text unchanged', async () => {
    expect(await renderer.render('[{{ payload.nope.deeper }}]', context)).toBe('[]');
    expect(await renderer.render('no markup {here}', context)).toBe('no markup {here}');
    expect(await renderer.render('', context)).toBe('');
  });

  it('reads own properties only', async () => {
    expect(await renderer.render('[{{ payload.constructor }}{{ subscriber.__proto__ }}]', context)).toBe('[]');
  });

  it('formats dates in UTC', async () => {
    expect(await renderer.render('{{ payload.at | date: "%H:%M" }}', { ...context, payload: { at: '2026-05-01T23:30:00Z' } })).toBe('23:30');
  });

  it('gives the same output from a cached template', async () => {
    const template = 'Order {{ payload.orderId }}';
    expect(await renderer.render(template, context)).toBe('Order o-1');
    expect(await renderer.render(template, { ...context, payload: { orderId: 'o-9' } })).toBe('Order o-9');
  });

  it('renders controls through nested objects and arrays, a control named __proto__ kept as a control', async () => {
    const controls = JSON.parse('{"subject":"#{{ payload.orderId }}","cta":{"data":{"url":"/o/{{ payload.orderId }}"}},"tags":["{{ actor.firstName }}",3],"__proto__":"{{ subscriber.firstName }}"}');
    const rendered = await renderer.renderControls(controls, context);
    expect(rendered).toEqual(JSON.parse('{"subject":"#o-1","cta":{"data":{"url":"/o/o-1"}},"tags":["Grace",3],"__proto__":"Ada"}'));
    expect(Object.getPrototypeOf(rendered)).toBe(Object.prototype);
    await expect(renderer.renderControls({ cta: { data: { url: '{{ x | nope }}' } } }, context)).rejects.toThrow(/^cta\.data\.url: Invalid template/);
  });

  it('keeps working past the cache bound', async () => {
    const small = createTemplateRenderer({ cacheSize: 2 });
    for (let i = 0; i < 5; i++) expect(await small.render(`{{ payload.orderId }}-${i}`, context)).toBe(`o-1-${i}`);
    expect(await small.render('{{ payload.orderId }}-0', context)).toBe('o-1-0');
  });
});

describe('createTemplateRenderer: errors and limits', () => {
  it('throws TemplateError naming the problem for syntax errors and unknown filters', async () => {
    const unclosed = await renderError('Hi {{ subscriber.firstName ');
    expect(unclosed.name).toBe('TemplateError');
    expect(unclosed.message).toMatch(/^Invalid template: output "\{\{ subscriber.firstName " not closed/);
    expect((await renderError('{{ payload.orderId | shout }}')).message).toMatch(/undefined filter: shout/);
    expect((await renderError('{% if %}yes{% endif %}')).message).toMatch(/^Invalid template/);
    expect((await renderError('{% nosuchtag %}')).message).toMatch(/nosuchtag/);
  });

  it('never reads partials from the disk', async () => {
    expect((await renderError("{% include 'package.json' %}")).message).toMatch(/^Template rendering failed: .*package\.json/);
    expect((await renderError("{% render 'package.json' %}")).message).toMatch(/package\.json/);
  });

  it('stops a render that allocates too much', async () => {
    const error = await renderError('{% for i in (1..100000000) %}x{% endfor %}');
    expect(error.message).toMatch(/memory alloc limit exceeded/);
    const doubling = '{% assign s = "x" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}';
    expect((await renderError(doubling)).message).toMatch(/memory alloc limit exceeded/);
  });

  it('stops a render that runs too long', async () => {
    const renderer = createTemplateRenderer({ renderLimitMs: 50, memoryLimit: 1e12 });
    // 100 million iterations, far beyond 50 ms; the limit is checked as the loop runs
    const error = await renderError('{% for i in (1..10000) %}{% for j in (1..10000) %}{% endfor %}{% endfor %}', renderer);
    expect(error.message).toMatch(/render limit exceeded/);
  });

  it('refuses an over-long template', async () => {
    const renderer = createTemplateRenderer({ parseLimit: 100 });
    expect((await renderError(`{{ payload.orderId }}${'x'.repeat(200)}`, renderer)).message).toMatch(/^Invalid template: .*parse length limit/);
  });
});

describe('createTemplateRenderer: renderControls', () => {
  const renderer = createTemplateRenderer();

  it('renders every string leaf through nested objects and arrays, keeping other leaves', async () => {
    const controls = {
      subject: 'Order {{ payload.orderId }}',
      body: 'Hello {{ subscriber.firstName }}',
      priority: 3,
      enabled: true,
      none: null,
      cta: {
        type: 'redirect',
        data: { url: '/orders/{{ payload.orderId }}' },
        action: { buttons: [{ type: 'primary', content: 'View {{ payload.orderId }}' }, { type: 'secondary', content: 'Later' }] },
      },
      tags: ['{{ subscriber.subscriberId }}', 7],
    };
    expect(await renderer.renderControls(controls, context)).toEqual({
      subject: 'Order o-1',
      body: 'Hello Ada',
      priority: 3,
      enabled: true,
      none: null,
      cta: {
        type: 'redirect',
        data: { url: '/orders/o-1' },
        action: { buttons: [{ type: 'primary', content: 'View o-1' }, { type: 'secondary', content: 'Later' }] },
      },
      tags: ['s-1', 7],
    });
    expect(controls.subject).toBe('Order {{ payload.orderId }}');
  });

  it('keeps assignments inside the control that makes them, and leaves the context untouched', async () => {
    const shared: TemplateContext = { payload: { a: 1 }, subscriber: {} };
    const rendered = await renderer.renderControls(
      { first: '{% assign payload = "replaced" %}{% assign y = 2 %}{{ payload }}', second: '{{ payload.a }}[{{ y }}]' },
      shared,
    );
    expect(rendered).toEqual({ first: 'replaced', second: '1[]' });
    expect(shared).toEqual({ payload: { a: 1 }, subscriber: {} });
  });

  it('names the failing control in the error', async () => {
    const controls = { cta: { action: { buttons: [{ content: 'ok' }, { content: '{{ payload.orderId | shout }}' }] } } };
    await expect(renderer.renderControls(controls, context)).rejects.toThrow(
      /^cta\.action\.buttons\[1\]\.content: Invalid template: undefined filter: shout/,
    );
    await expect(renderer.renderControls(controls, context)).rejects.toBeInstanceOf(TemplateError);
  });

  it('renders an empty control set', async () => {
    expect(await renderer.renderControls({}, context)).toEqual({});
  });
});
