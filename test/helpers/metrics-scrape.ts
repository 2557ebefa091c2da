import { expect } from 'vitest';
import { parsePrometheusText, type PromFamily, type PromSample } from './prometheus-text.js';

/** One parsed scrape of `GET /metrics`, with look-ups by family name and exact label set. */
export class Scrape {
  constructor(readonly families: Map<string, PromFamily>, readonly text: string) {}

  family(name: string): PromFamily | undefined {
    return this.families.get(name);
  }

  /** A counter's or gauge's value for exactly these labels (0 when the series does not exist yet). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.sample(name, name.endsWith('_total') || this.family(name)?.type !== 'counter' ? name : `${name}_total`, labels)?.value ?? 0;
  }

  /** A histogram's observation count for exactly these labels (0 when absent). */
  count(name: string, labels: Record<string, string> = {}): number {
    return this.sample(name, `${name}_count`, labels)?.value ?? 0;
  }

  /** Every label set of a family (a histogram's once, from its _count samples). */
  labelSets(name: string): Array<Record<string, string>> {
    const family = this.family(name);
    if (!family) return [];
    const samples = family.type === 'histogram' ? family.samples.filter((sample) => sample.name === `${name}_count`) : family.samples;
    return samples.map((sample) => sample.labels);
  }

  /** Series of Herald's own families (a histogram's label set counts once). */
  heraldSeriesCount(): number {
    return [...this.families.keys()].filter((name) => name.startsWith('herald_')).reduce((sum, name) => sum + this.labelSets(name).length, 0);
  }

  private sample(familyName: string, sampleName: string, labels: Record<string, string>): PromSample | undefined {
    return this.family(familyName)?.samples.find((sample) => sample.name === sampleName && sameLabels(sample.labels, labels));
  }
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

export function parseScrape(text: string): Scrape {
  return new Scrape(parsePrometheusText(text), text);
}

/** GET {url} and parse it; asserts a 200 in the Prometheus text content type. */
export async function scrape(url: string, token?: string): Promise<Scrape> {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseScrape(text);
}
