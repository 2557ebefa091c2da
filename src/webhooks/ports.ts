/**
 * The outbound half of webhooks as use-cases see it: sending one signed request to a customer's endpoint. The
 * implementation (http-sender.ts) goes through the private-address guard of providers/outbound.ts.
 */
export interface WebhookRequest {
  url: string;
  /** Signature headers and the endpoint's own headers; content-type and user-agent are added. */
  headers: Record<string, string>;
  body: string;
}

export interface WebhookResponse {
  /** Absent when no HTTP answer came (timeout, connection error, refused target). */
  statusCode?: number;
  /** The answer's body as text (the caller truncates it for the log). */
  body: string;
  durationMs: number;
  /** Why there was no answer. */
  error?: string;
  /** The outbound guard refused the target: retrying will not help until the configuration changes. */
  refused?: boolean;
}

export interface WebhookSender {
  /** Why the guard would refuse this URL (private, loopback, link-local address...), or undefined when allowed. */
  refusal(url: string): Promise<string | undefined>;
  /** POSTs once; never throws for a failed delivery (it is reported in the response). */
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
