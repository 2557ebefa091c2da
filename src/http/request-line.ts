import pino from 'pino';

/** Writes one request line: the request's id, method, path (no query), status and whole milliseconds. */
export type RequestLineWriter = (reqId: string, method: string, path: string, statusCode: number, ms: number) => void;

const S = pino.symbols as typeof pino.symbols & { msgPrefixSym: symbol };
/** The line's own keys, in their order after pino's (level, time, the logger's bindings). */
const LINE_KEYS = ['reqId', 'method', 'url', 'statusCode', 'ms'];

/**
 * The request line as the bytes `request.log.info({ method, url, statusCode, ms }, 'request')` writes through the
 * request's pino child, put together directly from the logger's own precomputed parts (pino.symbols: the level's
 * prefix, its time function, its bindings, the line's end) and written to its destination. pino would make a child
 * per request for it and then run each of the line's values through its redaction (the app's wildcard paths,
 * `*.credentials` …, send every top-level value through `@pinojs/redact`, which for a string or a number returns its
 * `JSON.stringify`): ~9 % of an embedded list request's CPU (BENCHMARKS.md, session 29). The line's values are a
 * method, a path, two numbers and the request id, never an object a redaction path could name.
 *
 * Undefined when the logger is not a pino logger whose lines this can match byte for byte (a mixin, a log formatter,
 * a nested key, hooks, a message prefix, a serializer or a top-level redaction path for one of the line's keys, a
 * destination that wants metadata, levels without `info`): the caller then logs through pino. The level is checked
 * per line, as pino does.
 */
export function requestLineWriter(logger: unknown): RequestLineWriter | undefined {
  if (typeof logger !== 'object' || logger === null) return undefined;
  const l = logger as Record<symbol, any> & { levels?: { values?: Record<string, number> }; isLevelEnabled?: (level: string) => boolean };
  const stream = l[S.streamSym] as { write?: (line: string) => unknown } | undefined;
  const info = l.levels?.values?.info;
  const prefix = info === undefined ? undefined : (l[S.lsCacheSym] as Record<number, string> | undefined)?.[info];
  const messageKey = l[S.messageKeySym];
  const serializers = (l[S.serializersSym] ?? {}) as Record<string, unknown>;
  const stringifiers = (l[S.stringifiersSym] ?? {}) as Record<string, unknown>;
  if (
    typeof stream?.write !== 'function' ||
    (stream as Record<symbol, unknown>)[S.needsMetadataGsym] ||
    typeof prefix !== 'string' ||
    typeof messageKey !== 'string' ||
    typeof l[S.timeSym] !== 'function' ||
    typeof l[S.chindingsSym] !== 'string' ||
    typeof l[S.endSym] !== 'string' ||
    typeof l.isLevelEnabled !== 'function' ||
    l[S.mixinSym] ||
    l[S.formattersSym]?.log ||
    l[S.nestedKeySym] ||
    l[S.hooksSym]?.logMethod ||
    l[S.hooksSym]?.streamWrite ||
    l[S.msgPrefixSym] ||
    [...LINE_KEYS, messageKey].some((key) => serializers[key] || stringifiers[key])
  ) {
    return undefined;
  }
  const message = `,"${messageKey}":"request"`;
  const write = stream.write.bind(stream);
  return (reqId, method, path, statusCode, ms) => {
    if (!l.isLevelEnabled!('info')) return;
    // Read per line, as pino does: its bindings can change (setBindings), its time function is the logger's.
    write(
      `${prefix}${l[S.timeSym]()}${l[S.chindingsSym]},"reqId":${JSON.stringify(reqId)},"method":${JSON.stringify(method)},"url":${JSON.stringify(path)},"statusCode":${statusCode},"ms":${ms}${message}${l[S.endSym]}`,
    );
  };
}

/** A URL's path: what precedes its query. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
