import { Liquid } from 'liquidjs';
import { ValidationError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { payloadSchemaProblem } from '../../domain/payload-schema.js';
import { DELIVERY_CHANNELS, TIME_UNITS, type DeliveryChannel, type StepFilter } from '../../domain/types.js';
import type { WorkflowStep, WorkflowStepType } from '../../domain/workflow.js';

/**
 * The parts of a workflow request shared by create, update and patch: steps, preferences and the
 * payload schema, turned into the stored Workflow fields with the domain rules the HTTP schema cannot
 * express (unique stepIds, metadata of delay/digest/throttle controls, Liquid syntax, a compilable schema).
 */

export interface StepInput {
  /** An existing step's `_id` (update): the step keeps its identity. */
  _id?: string;
  stepId?: string;
  name: string;
  type: WorkflowStepType;
  controlValues?: Record<string, unknown>;
  filters?: StepFilter[];
  active?: boolean;
  shouldStopOnFail?: boolean;
  variants?: Array<Omit<StepInput, 'variants'>>;
}

export interface ChannelPreferencesInput {
  all?: { enabled?: boolean; readOnly?: boolean };
  channels?: Partial<Record<string, { enabled?: boolean }>>;
}

/** Novu's `{ user, workflow }` preferences, or one `{ all, channels }` object directly. */
export interface PreferencesInput extends ChannelPreferencesInput {
  user?: ChannelPreferencesInput | null;
  workflow?: ChannelPreferencesInput | null;
}

/** Builds the stored steps; `existing` steps keep their `_id` when matched by `_id` or stepId. Throws ValidationError. */
export function buildSteps(inputs: StepInput[], existing: WorkflowStep[] = []): WorkflowStep[] {
  const problems: string[] = [];
  // A step sent with its `_id` and no stepId keeps its stepId: renaming a step must not change its slug.
  const kept = inputs.map((input) => (input._id !== undefined ? existing.find((step) => step._id === input._id) : undefined));
  const explicit = inputs.map((input, index) => input.stepId ?? kept[index]?.stepId);
  const named = explicit.filter((id): id is string => id !== undefined);
  for (const [index, stepId] of named.entries()) {
    if (named.indexOf(stepId) !== index) problems.push(`steps: duplicate stepId "${stepId}"`);
  }
  const usedStepIds = new Set(named);

  const steps = inputs.map((input, index) => {
    const stepId = explicit[index] ?? uniqueSlug(slugify(input.name) || input.type, usedStepIds);
    usedStepIds.add(stepId);
    const previous = kept[index] ?? (input._id === undefined ? existing.find((step) => step.stepId === stepId) : undefined);
    const step = buildStep(input, stepId, previous?._id, `steps[${index}]`, problems);
    const variants = (input.variants ?? []).map((variant, variantIndex) =>
      buildStep(variant, stepId, undefined, `steps[${index}].variants[${variantIndex}]`, problems),
    );
    return variants.length ? { ...step, variants } : step;
  });
  if (problems.length) throw new ValidationError(problems);
  return steps;
}

function buildStep(input: Omit<StepInput, 'variants'>, stepId: string, keptId: string | undefined, path: string, problems: string[]): WorkflowStep {
  const controls = input.controlValues ?? {};
  problems.push(...metadataProblems(input.type, controls, `${path}.controlValues`));
  problems.push(...liquidProblems(controls, `${path}.controlValues`));
  return {
    _id: keptId ?? newId(),
    stepId,
    name: input.name,
    type: input.type,
    active: input.active ?? true,
    shouldStopOnFail: input.shouldStopOnFail ?? false,
    controls,
    filters: input.filters ?? [],
  };
}

/** Channels on/off from the request's preferences: a channel's own flag, else `all.enabled`, else on. */
export function preferenceSettingsFrom(preferences: PreferencesInput | undefined): {
  preferenceSettings: Partial<Record<DeliveryChannel, boolean>>;
  readOnly: boolean | undefined;
} {
  const chosen = preferences?.user ?? preferences?.workflow ?? preferences;
  const preferenceSettings = Object.fromEntries(
    DELIVERY_CHANNELS.map((channel) => [channel, chosen?.channels?.[channel]?.enabled ?? chosen?.all?.enabled ?? true]),
  ) as Record<DeliveryChannel, boolean>;
  return { preferenceSettings, readOnly: chosen?.all?.readOnly };
}

/** Throws ValidationError when the payload schema cannot be compiled. */
export function checkPayloadSchema(schema: Record<string, unknown> | null | undefined): void {
  const problem = payloadSchemaProblem(schema ?? undefined);
  if (problem) throw new ValidationError([`payloadSchema is not a valid JSON Schema: ${problem}`]);
}

export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function uniqueSlug(base: string, used: Set<string>): string {
  if (!used.has(base)) return base;
  let suffix = 2;
  while (used.has(`${base}-${suffix}`)) suffix += 1;
  return `${base}-${suffix}`;
}

// ---- control value rules ---------------------------------------------------------------------------

const METADATA_TYPES: Partial<Record<WorkflowStepType, readonly string[]>> = {
  delay: ['regular', 'scheduled', 'timed'],
  digest: ['regular', 'backoff', 'timed'],
  throttle: ['fixed', 'dynamic'],
};
const WEEK_DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const ORDINALS = ['1', '2', '3', '4', '5', 'last'];
const ORDINAL_VALUES = ['day', 'weekday', 'weekend', ...WEEK_DAYS];
const MONTHLY_TYPES = ['each', 'on'];

/** The spec's metadata fields of delay, digest and throttle controls: type, amount, unit, backoff, timed. */
function metadataProblems(type: WorkflowStepType, controls: Record<string, unknown>, path: string): string[] {
  const types = METADATA_TYPES[type];
  if (!types) return [];
  const problems: string[] = [];
  const check = (ok: boolean, message: string) => {
    if (!ok) problems.push(message);
  };
  const isPositiveInteger = (value: unknown) => Number.isInteger(value) && (value as number) >= 1;
  const oneOf = (field: string, allowed: readonly string[]) => {
    if (controls[field] !== undefined) {
      check(allowed.includes(controls[field] as string), `${path}.${field} must be one of the following values: ${allowed.join(', ')}`);
    }
  };
  const positive = (field: string) => {
    if (controls[field] !== undefined) check(isPositiveInteger(controls[field]), `${path}.${field} must be an integer >= 1`);
  };
  oneOf('type', types);
  positive('amount');
  oneOf('unit', TIME_UNITS);
  if (type === 'delay' && controls.type === 'scheduled') {
    check(typeof controls.delayPath === 'string' && controls.delayPath !== '', `${path}.delayPath is required for a scheduled delay`);
  }
  if (type === 'digest') {
    positive('backoffAmount');
    oneOf('backoffUnit', TIME_UNITS);
    if (controls.digestKey !== undefined) check(typeof controls.digestKey === 'string', `${path}.digestKey must be a string`);
    if (controls.cron !== undefined) check(typeof controls.cron === 'string' && controls.cron !== '', `${path}.cron must be a non-empty string`);
    if (controls.timed !== undefined) problems.push(...timedProblems(controls.timed, `${path}.timed`));
  }
  if (type === 'throttle') {
    positive('threshold');
    if (controls.throttleKey !== undefined) check(typeof controls.throttleKey === 'string', `${path}.throttleKey must be a string`);
  }
  return problems;
}

function timedProblems(timed: unknown, path: string): string[] {
  if (timed === null || typeof timed !== 'object' || Array.isArray(timed)) return [`${path} must be an object`];
  const config = timed as Record<string, unknown>;
  const problems: string[] = [];
  const listOf = (field: string, allowed: readonly string[]) => {
    const value = config[field];
    if (value !== undefined && !(Array.isArray(value) && value.every((item) => allowed.includes(String(item))))) {
      problems.push(`${path}.${field} must be an array of: ${allowed.join(', ')}`);
    }
  };
  const oneOf = (field: string, allowed: readonly string[]) => {
    if (config[field] !== undefined && !allowed.includes(String(config[field]))) {
      problems.push(`${path}.${field} must be one of the following values: ${allowed.join(', ')}`);
    }
  };
  listOf('weekDays', WEEK_DAYS);
  listOf('monthDays', Array.from({ length: 31 }, (_, day) => String(day + 1)));
  oneOf('ordinal', ORDINALS);
  oneOf('ordinalValue', ORDINAL_VALUES);
  oneOf('monthlyType', MONTHLY_TYPES);
  if (config.atTime !== undefined && !(typeof config.atTime === 'string' && /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/.test(config.atTime))) {
    problems.push(`${path}.atTime must be a time of day (HH:mm)`);
  }
  return problems;
}

// Parse-only: the same options as the renderer (domain/templates.ts), so an unknown filter fails here too.
const liquid = new Liquid({ strictFilters: true, templates: {}, parseLimit: 200_000 });

/** One message per string control (through nested objects and arrays) that is not valid Liquid. */
function liquidProblems(value: unknown, path: string): string[] {
  if (typeof value === 'string') {
    if (!value.includes('{{') && !value.includes('{%')) return [];
    try {
      liquid.parse(value);
      return [];
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      return [`${path} is not a valid Liquid template: ${reason}`];
    }
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => liquidProblems(item, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => liquidProblems(item, `${path}.${key}`));
  }
  return [];
}
