/**
 * Endpoint API keys at rest: AES-256-GCM under a key derived from SECRET_KEY with scrypt.
 * Sealed form: `v1:<iv b64>:<tag b64>:<ciphertext b64>`; the version is bound as associated data
 * so a sealed value cannot be replayed under a future format.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

export type SecretBoxErrorCode = 'BAD_SECRET_KEY' | 'MALFORMED' | 'DECRYPT_FAILED';

export class SecretBoxError extends Error {
  constructor(
    readonly code: SecretBoxErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export interface SecretBox {
  encrypt(plaintext: string): string;
  /** throws SecretBoxError DECRYPT_FAILED on a wrong SECRET_KEY or any tampering */
  decrypt(sealed: string): string;
}

const VERSION = 'v1';
// Fixed salt: the derived key must be reproducible from SECRET_KEY alone; the per-value IV gives
// uniqueness. scrypt (N=2^14) slows brute force of a weak SECRET_KEY.
const SALT = Buffer.from('reportql/secret-box/v1', 'utf8');
const IV_BYTES = 12;
const TAG_BYTES = 16;
const MIN_SECRET_KEY_LENGTH = 16;

export function createSecretBox(secretKey: string): SecretBox {
  if (typeof secretKey !== 'string' || secretKey.length < MIN_SECRET_KEY_LENGTH) {
    throw new SecretBoxError('BAD_SECRET_KEY', `SECRET_KEY must be at least ${MIN_SECRET_KEY_LENGTH} characters`);
  }
  const key = scryptSync(secretKey, SALT, 32, { N: 16384, r: 8, p: 1 });
  const aad = Buffer.from(VERSION, 'utf8');

  return {
    encrypt(plaintext: string): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(aad);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, iv.toString('base64'), tag.toString('base64'), ciphertext.toString('base64')].join(':');
    },
    decrypt(sealed: string): string {
      const parts = typeof sealed === 'string' ? sealed.split(':') : [];
      if (parts.length !== 4 || parts[0] !== VERSION) {
        throw new SecretBoxError('MALFORMED', `sealed secret must look like ${VERSION}:<iv>:<tag>:<ciphertext>`);
      }
      const [, ivText, tagText, ctText] = parts as [string, string, string, string];
      const b64 = /^[A-Za-z0-9+/]*={0,2}$/;
      if (![ivText, tagText, ctText].every((p) => b64.test(p))) {
        throw new SecretBoxError('MALFORMED', 'sealed secret has a part that is not base64');
      }
      const iv = Buffer.from(ivText, 'base64');
      const tag = Buffer.from(tagText, 'base64');
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
        throw new SecretBoxError('MALFORMED', 'sealed secret has a wrong IV or tag length');
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(aad);
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(Buffer.from(ctText, 'base64')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError('DECRYPT_FAILED', 'secret cannot be decrypted: wrong SECRET_KEY or tampered value');
      }
    },
  };
}

export function isSealedSecret(value: string): boolean {
  return /^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]*$/.test(value);
}
