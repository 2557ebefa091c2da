// Which statements sent outside a transaction are PostgreSQL commits that wait for a WAL flush (the bound of its
// write rate, which bench:scaling's model projects from): writes, and WITH statements only when one of their parts
// writes. A read-only WITH (the list pages' CTEs) commits nothing to flush.

const WRITE = /^\s*(insert|update|delete|merge)\b/i;
const WRITE_IN_WITH = /\b(insert\s+into|update\s+(only\s+)?("[^"]+"|[\w.]+)(\s+(as\s+)?\w+)?\s+set|delete\s+from|merge\s+into)\b/i;

/** Whether `text`, sent outside a transaction, autocommits a write. */
export function autocommitsWrite(text) {
  if (WRITE.test(text)) return true;
  return /^\s*with\b/i.test(text) && WRITE_IN_WITH.test(text);
}
