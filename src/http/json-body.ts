/**
 * A JSON text as the body a route hands to `reply.send`: the same bytes, as a Buffer when every character is ASCII.
 *
 * Given a string, Fastify and node each count its UTF-8 length (`Buffer.byteLength`), node prepends the head to it and
 * the socket's writev encodes the whole as UTF-8 into a buffer of three bytes per character. An ASCII text's UTF-8
 * bytes are its Latin-1 bytes, which are one copy; a Buffer then goes to the socket as it is, as the bare route of
 * `npm run bench:http` sends its page. A text with any other character is sent as before, as a string.
 */
export function jsonBody(json: string): string | Buffer {
  return Buffer.byteLength(json, 'utf8') === json.length ? Buffer.from(json, 'latin1') : json;
}
