import fc from 'fast-check';
import { createSecretBox, isSealedSecret, SecretBoxError } from '../../../src/llm/secret-box';

const KEY = 'a-long-enough-secret-key-for-tests';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof SecretBoxError) return err.code;
    throw err;
  }
  return undefined;
}

describe('secret box', () => {
  const box = createSecretBox(KEY);

  it('round-trips any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (plain) => {
        const sealed = box.encrypt(plain);
        expect(isSealedSecret(sealed)).toBe(true);
        expect(box.decrypt(sealed)).toBe(plain);
      }),
      { numRuns: 50 },
    );
  });

  it('writes v1:<iv>:<tag>:<ciphertext> and never the plaintext', () => {
    const sealed = box.encrypt('sk-secret-value');
    expect(sealed).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain('sk-secret-value');
    expect(box.encrypt('sk-secret-value')).not.toBe(sealed);
  });

  it('decrypts with another box built from the same key', () => {
    expect(createSecretBox(KEY).decrypt(box.encrypt('x'))).toBe('x');
  });

  it('detects a wrong key', () => {
    const sealed = box.encrypt('sk-1');
    expect(codeOf(() => createSecretBox(`${KEY}!`).decrypt(sealed))).toBe('DECRYPT_FAILED');
  });

  it('detects tampering with ciphertext, tag or IV', () => {
    const sealed = box.encrypt('sk-abcdefgh');
    const [v, iv, tag, ct] = sealed.split(':') as [string, string, string, string];
    const flip = (b64: string): string => {
      const buf = Buffer.from(b64, 'base64');
      buf[0] = (buf[0] ?? 0) ^ 1;
      return buf.toString('base64');
    };
    expect(codeOf(() => box.decrypt([v, iv, tag, flip(ct)].join(':')))).toBe('DECRYPT_FAILED');
    expect(codeOf(() => box.decrypt([v, iv, flip(tag), ct].join(':')))).toBe('DECRYPT_FAILED');
    expect(codeOf(() => box.decrypt([v, flip(iv), tag, ct].join(':')))).toBe('DECRYPT_FAILED');
  });

  it('rejects malformed values and unknown versions', () => {
    expect(codeOf(() => box.decrypt('plain-text-key'))).toBe('MALFORMED');
    expect(codeOf(() => box.decrypt(box.encrypt('x').replace(/^v1/, 'v2')))).toBe('MALFORMED');
    expect(codeOf(() => box.decrypt('v1:!!:??:**'))).toBe('MALFORMED');
    expect(codeOf(() => box.decrypt('v1:AAAA:AAAA:AAAA'))).toBe('MALFORMED');
  });

  it('refuses a short or empty SECRET_KEY', () => {
    expect(codeOf(() => createSecretBox(''))).toBe('BAD_SECRET_KEY');
    expect(codeOf(() => createSecretBox('short'))).toBe('BAD_SECRET_KEY');
  });
});
