import { describe, expect, it } from 'vitest';
import { overviewOutcomeOfReport } from '../../src/domain/overview.js';

describe('overviewOutcomeOfReport', () => {
  it('counts a message delivered once, however many delivered, opened or clicked reports follow', () => {
    expect(overviewOutcomeOfReport(undefined, 'delivered')).toBe('delivered');
    for (const previous of ['delivered', 'opened', 'clicked']) expect(overviewOutcomeOfReport(previous, 'delivered')).toBeUndefined();
    expect(overviewOutcomeOfReport('bounced', 'delivered')).toBe('delivered');
  });

  it('counts a bounce once, and nothing for other reports', () => {
    expect(overviewOutcomeOfReport(undefined, 'bounced')).toBe('bounced');
    expect(overviewOutcomeOfReport('delivered', 'bounced')).toBe('bounced');
    expect(overviewOutcomeOfReport('bounced', 'bounced')).toBeUndefined();
    for (const reported of ['opened', 'clicked', 'complained', 'failed']) expect(overviewOutcomeOfReport(undefined, reported)).toBeUndefined();
  });
});
