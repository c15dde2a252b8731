import { randomUUID } from 'node:crypto';
import { ChartUrlSigner, CHART_URL_TTL_SECONDS } from '../../../src/modules/chart/chart-url';

describe('signed chart URLs', () => {
  const signer = new ChartUrlSigner('a-secret-key-of-at-least-sixteen-characters');
  const keyId = randomUUID();
  const path = '/charts/use-cases/VXNlQ2FzZTox/heatmap.svg?datasetId=RGF0YXNldDox&resamples=0';
  const now = Date.UTC(2026, 0, 1);

  it('verifies its own URL until it expires, and names the key', () => {
    const { url, expiresAt } = signer.sign(keyId, path, now);
    expect(expiresAt.getTime()).toBe(now + CHART_URL_TTL_SECONDS * 1000);
    expect(signer.verify(url, now)).toBe(keyId);
    expect(signer.verify(url, now + CHART_URL_TTL_SECONDS * 1000 - 1)).toBe(keyId);
    expect(signer.verify(url, now + CHART_URL_TTL_SECONDS * 1000)).toBeNull();
  });

  it('refuses another path, another query, another key, another secret and a second token', () => {
    const { url } = signer.sign(keyId, path, now);
    const token = url.slice(url.indexOf('token='));
    expect(signer.verify(url.replace('heatmap', 'leaderboard'), now)).toBeNull();
    expect(signer.verify(url.replace('resamples=0', 'resamples=1'), now)).toBeNull();
    expect(signer.verify(`${path}&seed=1&${token}`, now)).toBeNull();
    expect(signer.verify(url.replace(keyId, randomUUID()), now)).toBeNull();
    expect(new ChartUrlSigner('another-secret-key-of-sixteen-chars').verify(url, now)).toBeNull();
    expect(signer.verify(`${url}&${token}`, now)).toBeNull();
    expect(signer.verify(path, now)).toBeNull();
    // The expiry is part of what is signed.
    const [, expiry] = /\.(\d+)\./.exec(url)!;
    expect(signer.verify(url.replace(`.${expiry}.`, `.${Number(expiry) + 3600}.`), now)).toBeNull();
  });

  it('signs chart image paths only', () => {
    for (const bad of ['/exports/runs/x/predictions.csv', '/charts/use-cases/x/heatmap.json', 'https://elsewhere.example/charts/use-cases/x/heatmap.svg', '/charts/use-cases/../x/heatmap.svg', '/charts/projects/x/ranking.svg#frag']) {
      expect(() => signer.sign(keyId, bad, now)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    }
    expect(signer.sign(keyId, '/charts/projects/UHJvamVjdDox/ranking.svg', now).url).toMatch(/^\/charts\/projects\/UHJvamVjdDox\/ranking\.svg\?token=/);
  });
});
