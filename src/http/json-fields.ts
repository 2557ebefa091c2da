/**
 * The top-level fields of a JSON object's text, each as the raw text of its value, without parsing the values:
 * `{"a":1,"b":{"c":[2]}}` gives a → `1`, b → `{"c":[2]}`. For compact JSON as JSON.stringify writes it (no
 * whitespace); anything else (whitespace, not an object, broken text) gives undefined, and the caller parses instead.
 * A repeated key keeps its last value, as JSON.parse does.
 */
export function jsonFields(text: string): Map<string, string> | undefined {
  const fields = new Map<string, string>();
  const end = text.length;
  if (text.charCodeAt(0) !== OPEN_OBJECT) return undefined;
  if (text.charCodeAt(1) === CLOSE_OBJECT) return end === 2 ? fields : undefined;
  let at = 1;
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, at);
    if (keyEnd < 0 || text.charCodeAt(keyEnd) !== COLON) return undefined;
    const rawKey = text.slice(at + 1, keyEnd - 1);
    const key = rawKey.includes('\\') ? (JSON.parse(text.slice(at, keyEnd)) as string) : rawKey;
    const valueStart = keyEnd + 1;
    const valueEnd = skipValue(text, valueStart);
    if (valueEnd <= valueStart) return undefined;
    fields.set(key, text.slice(valueStart, valueEnd));
    const next = text.charCodeAt(valueEnd);
    if (next === CLOSE_OBJECT) return valueEnd === end - 1 ? fields : undefined;
    if (next !== COMMA) return undefined;
    at = valueEnd + 1;
  }
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The index after the closing quote of the string opening at `quote`, or -1. */
function stringEnd(text: string, quote: number): number {
  let from = quote + 1;
  for (;;) {
    const at = text.indexOf('"', from);
    if (at < 0) return -1;
    // Escaped when preceded by an odd number of backslashes.
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at + 1;
    from = at + 1;
  }
}

/** The index just after the value starting at `start`, or -1 when the text breaks off. */
function skipValue(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start);
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    let at = start;
    for (;;) {
      const char = text.charCodeAt(at);
      if (char === QUOTE) {
        at = stringEnd(text, at);
        if (at < 0) return -1;
        continue;
      }
      if (char === OPEN_OBJECT || char === OPEN_ARRAY) depth++;
      else if (char === CLOSE_OBJECT || char === CLOSE_ARRAY) {
        if (--depth === 0) return at + 1;
      } else if (char <= 0x20 || Number.isNaN(char)) return -1; // whitespace: not compact; NaN: the end
      at++;
    }
  }
  // A number, true, false or null: up to the next comma or closing brace.
  let at = start;
  for (;;) {
    const char = text.charCodeAt(at);
    if (char === COMMA || char === CLOSE_OBJECT) return at;
    if (char <= 0x20 || Number.isNaN(char)) return -1;
    at++;
  }
}
