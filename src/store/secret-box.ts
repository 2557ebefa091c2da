import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encrypts provider credentials at rest with AES-256-GCM. Stored form: `v1:<iv>:<tag>:<ciphertext>`,
 * base64 parts. The same master key also derives (HKDF) the session-token signing secret, so an
 * operator manages one secret.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('encryption key must be 32 bytes');
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'herald credentials v1', 32));
    this.sessionSecret = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'herald session tokens v1', 32));
  }

  /** HMAC secret for session tokens, derived from the master key. */
  readonly sessionSecret: Buffer;

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(':');
  }

  decrypt(stored: string): string {
    const [version, iv, tag, body] = stored.split(':');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unrecognised ciphertext format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }

  encryptJson(value: unknown): string {
    return this.encrypt(JSON.stringify(value));
  }

  decryptJson<T>(stored: string): T {
    return JSON.parse(this.decrypt(stored)) as T;
  }
}

/** Parses HERALD_ENCRYPTION_KEY: 64 hex characters or base64 of 32 bytes. */
export function parseMasterKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new Error('HERALD_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}
