/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4), for tests. Written here because the npm
 * parser we tried (parse-prometheus-text-format 1.1.1) drops a histogram's labels, `_count` and `_sum`, and skips
 * lines it does not understand: a test must fail on malformed output instead. prom-client has no parser.
 */
export type FamilyType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface PromSample {
  /** The sample's own name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: FamilyType;
  help?: string;
  samples: PromSample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?[ \\t]+(\\S+)(?:[ \\t]+(-?\\d+))?$`);
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/;
const SUFFIXES: Record<FamilyType, string[]> = {
  counter: ['', '_total'],
  gauge: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
  untyped: [''],
};

export class PrometheusParseError extends Error {
  constructor(line: number, message: string, text: string) {
    super(`line ${line}: ${message}: ${JSON.stringify(text)}`);
  }
}

export function parsePrometheusText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const seen = new Set<string>();
  let current: PromFamily | undefined;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, index) => {
    const fail = (message: string): never => {
      throw new PrometheusParseError(index + 1, message, line);
    };
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) return; // an ordinary comment
      const [, kind, name, rest = ''] = meta;
      if (!new RegExp(`^${NAME}$`).test(name!)) fail('bad metric name');
      let family = families.get(name!);
      if (!family) {
        family = { name: name!, type: 'untyped', samples: [] };
        families.set(name!, family);
      } else if (family !== current) fail('metadata of a family that already ended');
      if (kind === 'TYPE') {
        if (!(rest in SUFFIXES)) fail('unknown type');
        if (family.samples.length > 0) fail('TYPE after samples');
        family.type = rest as FamilyType;
      } else {
        family.help = rest.replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      }
      current = family;
      return;
    }
    const match = SAMPLE.exec(line) ?? fail('not a sample line');
    const [, name, rawLabels = '', rawValue] = match;
    const value = parseValue(rawValue!) ?? fail('bad value');
    const labels = parseLabels(rawLabels) ?? fail('bad labels');
    const family =
      current && SUFFIXES[current.type].some((suffix) => name === current!.name + suffix)
        ? current
        : families.has(name!)
          ? fail('sample of a family that already ended')
          : undefined;
    const target = family ?? { name: name!, type: 'untyped' as const, samples: [] };
    if (!family) {
      families.set(name!, target);
      current = target;
    }
    const key = `${name}{${Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
    if (seen.has(key)) fail('duplicate series');
    seen.add(key);
    target.samples.push({ name: name!, labels, value });
  });
  for (const family of families.values()) {
    if (family.type === 'histogram') checkHistogram(family);
  }
  return families;
}

function parseValue(raw: string): number | undefined {
  if (/^[+-]?inf$/i.test(raw)) return raw.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(raw)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) return undefined;
  return Number(raw);
}

function parseLabels(raw: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  let rest = raw;
  while (rest.trim() !== '') {
    const match = LABEL.exec(rest);
    if (!match) return undefined;
    const [whole, name, escaped] = match;
    if (name! in labels) return undefined;
    let value = '';
    for (let i = 0; i < escaped!.length; i++) {
      const char = escaped![i]!;
      if (char !== '\\') {
        value += char;
        continue;
      }
      const next = escaped![++i];
      if (next === 'n') value += '\n';
      else if (next === '\\' || next === '"') value += next;
      else return undefined;
    }
    labels[name!] = value;
    rest = rest.slice(whole!.length);
    if (match[3] === '' && rest.trim() !== '') return undefined;
  }
  return labels;
}

/** Each label set has buckets rising to +Inf, and +Inf equals its _count. */
function checkHistogram(family: PromFamily): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)));
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (sample.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      group.buckets.push([parseValue(le) ?? NaN, sample.value]);
    } else if (sample.name.endsWith('_count')) group.count = sample.value;
  }
  for (const [key, group] of groups) {
    const buckets = group.buckets.sort(([a], [b]) => a - b);
    if (buckets.at(-1)?.[0] !== Infinity) throw new Error(`${family.name}${key}: no +Inf bucket`);
    for (let i = 1; i < buckets.length; i++) if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${family.name}${key}: buckets decrease`);
    if (buckets.at(-1)![1] !== group.count) throw new Error(`${family.name}${key}: +Inf bucket differs from _count`);
  }
}
