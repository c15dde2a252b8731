import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findChromium, leftTheMachine, notChromiumServices } from '../../browser/support/chromium';

describe('the browser tests\' Chromium', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'find-chromium-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fails with what to install when there is no Chromium, instead of skipping', () => {
    expect(() => findChromium({ PATH: dir })).toThrow(/Chromium not found.*apt-get install -y chromium.*CHROMIUM_PATH/);
    expect(() => findChromium({ PATH: dir, CHROMIUM_PATH: path.join(dir, 'missing') })).toThrow(/CHROMIUM_PATH=.*is not an executable/);
  });

  it('takes chromium or chromium-browser from PATH, or CHROMIUM_PATH', () => {
    const file = path.join(dir, 'chromium-browser');
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o755);
    expect(findChromium({ PATH: `/nonexistent${path.delimiter}${dir}` })).toBe(file);
    expect(findChromium({ PATH: '', CHROMIUM_PATH: file })).toBe(file);
  });

  it('counts as leaving the machine every URL but the server\'s origin, its WebSocket and the page\'s own data', () => {
    const seen = (url: string) => ({ url, tab: 1, via: 'cdp' as const, headers: {} });
    const requests = ['http://127.0.0.1:4000/graphql', 'ws://127.0.0.1:4000/graphql', 'data:font/woff2;base64,AA', 'blob:http://127.0.0.1:4000/x', 'about:blank',
      'http://127.0.0.1:4001/graphql', 'https://fonts.googleapis.com/css', 'http://localhost:4000/graphql', 'not a url'].map(seen);
    expect(leftTheMachine(requests, 'http://127.0.0.1:4000')).toEqual(['http://127.0.0.1:4001/graphql', 'https://fonts.googleapis.com/css', 'http://localhost:4000/graphql', 'not a url']);
    expect(notChromiumServices(['CONNECT accounts.google.com:443', 'POST http://update.googleapis.com/service/update2/json', 'CONNECT fonts.googleapis.com:443', 'GET http://cdn.example.org/x.js']))
      .toEqual(['CONNECT fonts.googleapis.com:443', 'GET http://cdn.example.org/x.js']);
  });
});
