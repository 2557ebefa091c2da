import type { EmailMessage } from '../../src/providers/ports.js';

/** The email the HTTP email providers' tests send: two recipients, a cc, both bodies and a reply-to. */
export const invoiceEmail: EmailMessage = {
  to: ['ada@example.com', 'bob@example.com'],
  cc: ['cc@example.com'],
  subject: 'Invoice',
  html: '<p>Paid</p>',
  text: 'Paid',
  replyTo: 'billing@herald.test',
};

/** invoiceEmail with a PDF attachment. */
export const invoiceEmailWithAttachment: EmailMessage = {
  ...invoiceEmail,
  attachments: [{ filename: 'invoice.pdf', content: Buffer.from('%PDF').toString('base64'), mime: 'application/pdf' }],
};
