import { createHmac, timingSafeEqual } from 'node:crypto';
import { badInput } from '../../domain/errors';

/** How long a signed chart URL works. */
export const CHART_URL_TTL_SECONDS = 15 * 60;

/** The chart images a URL may be signed for: an SVG route under /charts with its query. */
const CHART_PATH = /^\/charts\/(use-cases|projects)\/[A-Za-z0-9_-]{1,200}\/[a-z-]{1,40}\.svg(\?[^#\s]{0,4000})?$/;
const TOKEN = /^([0-9a-f-]{36})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/** The path and query a signature covers: the query without `token`, in the order given. */
function canonical(pathname: string, params: URLSearchParams): string {
  const rest = new URLSearchParams([...params].filter(([name]) => name !== 'token'));
  const query = rest.toString();
  return query ? `${pathname}?${query}` : pathname;
}

/**
 * Signed chart URLs for an <img>, which cannot send an Authorization header: the URL carries
 * `token=<keyId>.<expiry>.<HMAC>` bound to that path and query. The route still checks the key
 * (not revoked) and its access to what the chart shows, as for a Bearer request. The HMAC key
 * comes from SECRET_KEY, so every server of a deployment accepts every other's URLs.
 */
export class ChartUrlSigner {
  private readonly key: Buffer;

  constructor(secretKey: string, private readonly ttlSeconds = CHART_URL_TTL_SECONDS) {
    this.key = createHmac('sha256', secretKey).update('reportql chart urls').digest();
  }

  private mac(keyId: string, expiry: number, path: string): string {
    return createHmac('sha256', this.key).update(`${keyId}\n${expiry}\n${path}`).digest('base64url');
  }

  /** `path` with a token for `keyId` appended; BAD_USER_INPUT unless it is a chart image path. */
  sign(keyId: string, path: string, nowMs = Date.now()): { url: string; expiresAt: Date } {
    if (!CHART_PATH.test(path)) throw badInput('path must be a chart image path: /charts/use-cases/{id}/{chart}.svg?… or /charts/projects/{id}/{chart}.svg?…', { field: 'path' });
    const parsed = new URL(path, 'http://localhost');
    const expiry = Math.floor(nowMs / 1000) + this.ttlSeconds;
    const signed = canonical(parsed.pathname, parsed.searchParams);
    const token = `${keyId}.${expiry}.${this.mac(keyId, expiry, signed)}`;
    return { url: `${signed}${signed.includes('?') ? '&' : '?'}token=${token}`, expiresAt: new Date(expiry * 1000) };
  }

  /** The key id a request's token was signed for, or null when the token is malformed, expired or for another URL. */
  verify(originalUrl: string, nowMs = Date.now()): string | null {
    const parsed = new URL(originalUrl, 'http://localhost');
    const tokens = parsed.searchParams.getAll('token');
    if (tokens.length !== 1) return null;
    const match = TOKEN.exec(tokens[0]!);
    if (!match) return null;
    const [, keyId, expiryText, mac] = match as unknown as [string, string, string, string];
    const expiry = Number(expiryText);
    if (expiry * 1000 <= nowMs) return null;
    const expected = Buffer.from(this.mac(keyId, expiry, canonical(parsed.pathname, parsed.searchParams)));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given) ? keyId : null;
  }
}
