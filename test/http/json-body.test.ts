import { describe, expect, it } from 'vitest';
import { jsonBody } from '../../src/http/json-body.js';

/** jsonBody: the list pages' body, a Buffer of the same bytes when the text is ASCII, else the text itself. */
describe('jsonBody', () => {
  it('hands an ASCII text over as a Buffer of its UTF-8 bytes', () => {
    const json = JSON.stringify({ data: [{ subject: 'Order o-1', escaped: 'a "quote" \\ \u0001 \n' }], page: 0, hasMore: false });
    const body = jsonBody(json);
    expect(Buffer.isBuffer(body)).toBe(true);
    expect((body as Buffer).equals(Buffer.from(json, 'utf8'))).toBe(true);
  });

  it('leaves a text with any other character a string (Latin-1 bytes would differ from UTF-8)', () => {
    for (const text of ['Zoë', 'Grüße', '\u00ff', '\u2028', 'emoji \u{1F514}', 'lone \ud800']) {
      const json = JSON.stringify({ data: [{ subject: text }] });
      expect(jsonBody(json)).toBe(json);
    }
  });

  it('a concatenated page (a rope of many parts) gives the bytes of the flat text', () => {
    let json = '{"data":[';
    for (let index = 0; index < 10; index++) json += (index > 0 ? ',' : '') + JSON.stringify({ n: index, text: 'x'.repeat(2000) });
    json += '],"page":0}';
    expect((jsonBody(json) as Buffer).toString('latin1')).toBe(json);
  });
});
