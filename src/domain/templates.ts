/**
 * Liquid templates for step controls (subject, body, cta, buttons, http_request URL and body, ...).
 *
 * Rules: output is not HTML-escaped unless the template says `| escape`; a missing variable renders as '';
 * an unknown filter, a syntax error or a render over its limits throws TemplateError; `{% include %}` and
 * friends find no files (templates come from the database, never the disk); only own properties of the
 * context are readable; the `date` filter works in UTC.
 */
import { Liquid, type Template } from 'liquidjs';

/** What a step's templates can read. The worker may add more top-level names (e.g. `step` for Novu v1 templates). */
export interface TemplateContext {
  payload: Record<string, unknown>;
  subscriber: Record<string, unknown>;
  actor?: Record<string, unknown>;
  /** Results of earlier steps; `digest` after a digest step: the merged events' payloads and their count. */
  steps?: { digest?: { events: unknown[]; eventCount: number } } & Record<string, unknown>;
  [name: string]: unknown;
}

export interface TemplateRenderer {
  /** Renders one template. Throws TemplateError. */
  render(template: string, context: TemplateContext): Promise<string>;
  /**
   * A copy of `controls` with every string leaf rendered, through nested objects and arrays; other leaves are
   * copied as they are. Throws TemplateError whose message starts with the control's path (`cta.data.url: ...`).
   */
  renderControls(controls: Record<string, unknown>, context: TemplateContext): Promise<Record<string, unknown>>;
}

export interface TemplateRendererOptions {
  /** Parsed templates kept, least recently used evicted first. Default 1000. */
  cacheSize?: number;
  /** Milliseconds one render may take. Default 1000. */
  renderLimitMs?: number;
  /** Liquid's memory budget for one render (roughly characters and array items it allocates). Default 10,000,000. */
  memoryLimit?: number;
  /** Longest template accepted, in characters. Default 200,000. */
  parseLimit?: number;
}

export class TemplateError extends Error {
  override readonly name = 'TemplateError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export function createTemplateRenderer(options: TemplateRendererOptions = {}): TemplateRenderer {
  const cacheSize = options.cacheSize ?? 1000;
  const renderLimit = options.renderLimitMs ?? 1000;
  const memoryLimit = options.memoryLimit ?? 10_000_000;
  const liquid = new Liquid({
    strictFilters: true,
    strictVariables: false,
    ownPropertyOnly: true,
    templates: {},
    timezoneOffset: 0,
    parseLimit: options.parseLimit ?? 200_000,
    renderLimit,
    memoryLimit,
  });
  const parsed = new Map<string, Template[]>();

  function parse(template: string): Template[] {
    const cached = parsed.get(template);
    if (cached) {
      // re-insert so the Map's insertion order doubles as recency order
      parsed.delete(template);
      parsed.set(template, cached);
      return cached;
    }
    let templates: Template[];
    try {
      templates = liquid.parse(template);
    } catch (error) {
      throw new TemplateError(`Invalid template: ${errorText(error)}`, { cause: error });
    }
    if (cacheSize > 0) {
      if (parsed.size >= cacheSize) parsed.delete(parsed.keys().next().value as string);
      parsed.set(template, templates);
    }
    return templates;
  }

  // Rendered synchronously (Liquid's renderSync): Herald registers no asynchronous filter or tag and its partials come
  // from memory, so the output and the limits are those of `render`, without a promise per tag, output and control
  // (Liquid's async path was ~4 % of an embedded drain of in-app deliveries, BENCHMARKS.md session 29).
  function renderNow(template: string, context: TemplateContext): string {
    // Most controls are plain text: skip parsing when there is no Liquid markup at all.
    if (!template.includes('{{') && !template.includes('{%')) return template;
    const templates = parse(template);
    try {
      const output: unknown = liquid.renderSync(templates, context, { renderLimit, memoryLimit });
      return String(output ?? '');
    } catch (error) {
      throw new TemplateError(`Template rendering failed: ${errorText(error)}`, { cause: error });
    }
  }

  function renderValue(value: unknown, path: string, context: TemplateContext): unknown {
    if (typeof value === 'string') {
      try {
        return renderNow(value, context);
      } catch (error) {
        if (error instanceof TemplateError) throw new TemplateError(`${path}: ${error.message}`, { cause: error.cause });
        throw error;
      }
    }
    if (Array.isArray(value)) return value.map((item, index) => renderValue(item, `${path}[${index}]`, context));
    if (value !== null && typeof value === 'object') return renderObject(value as Record<string, unknown>, path, context);
    return value;
  }

  function renderObject(object: Record<string, unknown>, path: string, context: TemplateContext): Record<string, unknown> {
    // fromEntries, not assignment: a control named `__proto__` stays a control.
    return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, renderValue(value, path ? `${path}.${key}` : key, context)]));
  }

  return {
    render: async (template, context) => renderNow(template, context),
    renderControls: async (controls, context) => renderObject(controls ?? {}, '', context),
  };
}

/** Liquid's own message (e.g. `undefined filter: shout, line:1, col:1`), without its stack. */
function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
