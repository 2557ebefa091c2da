import { ValidationError } from './errors.js';
import type { MarkAs } from './types.js';

/**
 * The legacy `{ read?, seen? }` as marks applied in order: read first, so an explicit `seen` wins over the seen
 * that `read: true` implies (`{ read: true, seen: false }` leaves the message read and unseen, as Novu stores it).
 */
export function marksOf(mark: { read?: boolean; seen?: boolean }): MarkAs[] {
  const marks: MarkAs[] = [];
  if (mark.read !== undefined) marks.push(mark.read ? 'read' : 'unread');
  if (mark.seen !== undefined) marks.push(mark.seen ? 'seen' : 'unseen');
  if (marks.length === 0) throw new ValidationError(['mark must contain seen or read']);
  return marks;
}
