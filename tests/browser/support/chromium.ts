/**
 * Headless Chromium for the browser tests: the machine's own Chromium (Debian's package; no
 * browser is downloaded), driven over the DevTools protocol with playwright-core, with every
 * request it makes recorded twice: over CDP (pages and their workers) and by an egress trap, a
 * local proxy that every request to a host other than loopback would reach (the browser
 * process's own traffic included).
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** The flags Chromium needs here, running as root with no display and no network. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

const NAMES = ['chromium', 'chromium-browser'];

/**
 * The Chromium to drive: CHROMIUM_PATH if set, else `chromium` or `chromium-browser` on PATH.
 * Throws (the test fails, it does not skip) when there is none.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const given = env.CHROMIUM_PATH;
  if (given) {
    if (executable(given)) return given;
    throw new Error(`CHROMIUM_PATH=${given} is not an executable file. Point it at Chromium, or unset it to use chromium from PATH.`);
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const name of NAMES) {
      const file = path.join(dir, name);
      if (executable(file)) return file;
    }
  }
  throw new Error(
    `Chromium not found: none of ${NAMES.join(', ')} is on PATH. The browser tests drive the machine's Chromium and download none: ` +
      'install it (Debian: apt-get install -y chromium) or set CHROMIUM_PATH to its executable.',
  );
}

/** One request the browser made, as the DevTools protocol reported it. */
export interface SeenRequest {
  url: string;
  /** The tab (1, 2, … in the order opened) whose CDP session saw it; 0: playwright's context-wide events. */
  tab: number;
  /** Where it was seen: a page's own CDP session, playwright's request events, or a WebSocket. */
  via: 'cdp' | 'request' | 'websocket';
  headers: Record<string, string>;
}

/** A local proxy that answers 403 to everything and remembers what was asked of it. */
export interface EgressTrap {
  url: string;
  /** Every request that would have left the machine: "METHOD target". */
  attempts: string[];
  close(): Promise<void>;
}

export async function startEgressTrap(): Promise<EgressTrap> {
  const attempts: string[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    attempts.push(`${req.method} ${req.url}`);
    res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end('no network in the browser tests');
  });
  server.on('connect', (req, socket: Socket) => {
    attempts.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface Browser {
  context: BrowserContext;
  /** Every request of every page and worker, in the order seen. */
  requests: SeenRequest[];
  /** WebSocket frames of the pages (payloads as text), in the order seen. */
  frames: { tab: number; sent: boolean; payload: string }[];
  trap: EgressTrap;
  userDataDir: string;
  /** A new tab, its requests recorded from its first one. */
  newTab(): Promise<Page>;
  close(): Promise<void>;
}

/** Launches headless Chromium with a fresh profile, its traffic recorded and trapped. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = findChromium();
  const trap = await startEgressTrap();
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), 'reportql-chromium-'));
  const requests: SeenRequest[] = [];
  const frames: Browser['frames'] = [];
  let tabs = 0;
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      chromiumSandbox: false,
      // Loopback bypasses the proxy (Chromium's implicit rule); every other host reaches the trap.
      // (Playwright's own proxy option would send loopback through the proxy too.)
      args: [...CHROMIUM_FLAGS, `--proxy-server=${trap.url}`],
      viewport: { width: 1280, height: 800 },
      timeout: 30_000,
    });
  } catch (error) {
    await trap.close();
    rmSync(userDataDir, { recursive: true, force: true });
    throw error;
  }
  context.on('request', (request) => {
    requests.push({ url: request.url(), tab: 0, via: 'request', headers: request.headers() });
  });

  const text = (payload: string | Buffer): string => (typeof payload === 'string' ? payload : payload.toString('utf8'));
  const watch = async (page: Page): Promise<void> => {
    const tab = ++tabs;
    page.on('websocket', (socket) => {
      requests.push({ url: socket.url(), tab, via: 'websocket', headers: {} });
      socket.on('framesent', (frame) => frames.push({ tab, sent: true, payload: text(frame.payload) }));
      socket.on('framereceived', (frame) => frames.push({ tab, sent: false, payload: text(frame.payload) }));
    });
    const cdp = await context.newCDPSession(page);
    cdp.on('Network.requestWillBeSent', (event) => requests.push({ url: event.request.url, tab, via: 'cdp', headers: event.request.headers as Record<string, string> }));
    cdp.on('Network.webSocketCreated', (event) => requests.push({ url: event.url, tab, via: 'cdp', headers: {} }));
    await cdp.send('Network.enable');
  };
  const watched = new WeakMap<Page, Promise<void>>();
  const watchOnce = (page: Page): Promise<void> => {
    let done = watched.get(page);
    if (!done) watched.set(page, (done = watch(page)));
    return done;
  };
  // Tabs the pages open themselves (window.open, target=_blank) are watched too.
  context.on('page', (page) => void watchOnce(page));
  for (const page of context.pages()) await watchOnce(page);

  return {
    context,
    requests,
    frames,
    trap,
    userDataDir,
    async newTab() {
      const page = await context.newPage();
      await watchOnce(page);
      return page;
    },
    async close() {
      await context.close().catch(() => undefined);
      await trap.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** URLs that stay on this machine: the server's origin (HTTP and its WebSocket) or the page's own data. */
export function leftTheMachine(requests: readonly SeenRequest[], serverOrigin: string): string[] {
  const origin = new URL(serverOrigin);
  const local = new Set([origin.origin, `${origin.protocol === 'https:' ? 'wss:' : 'ws:'}//${origin.host}`]);
  return [
    ...new Set(
      requests
        .map((r) => r.url)
        .filter((url) => {
          if (/^(data|blob|about):/.test(url)) return false;
          try {
            const u = new URL(url);
            return !local.has(`${u.protocol}//${u.host}`);
          } catch {
            return true;
          }
        }),
    ),
  ];
}

/**
 * Hosts of Chromium's own background services (sign-in, component and on-demand updates,
 * autofill, safe browsing), which the browser process calls whatever the flags; a page never
 * loads from them (content hosts such as fonts.googleapis.com are not in the list).
 */
const CHROMIUM_SERVICE_HOSTS = new Set([
  'accounts.google.com',
  'android.clients.google.com',
  'clients2.google.com',
  'clientservices.googleapis.com',
  'content-autofill.googleapis.com',
  'edgedl.me.gvt1.com',
  'optimizationguide-pa.googleapis.com',
  'redirector.gvt1.com',
  'safebrowsing.googleapis.com',
  'update.googleapis.com',
]);

/** The egress trap's attempts other than Chromium's own services (what a page or worker tried). */
export function notChromiumServices(attempts: readonly string[]): string[] {
  return attempts.filter((attempt) => {
    const target = attempt.slice(attempt.indexOf(' ') + 1);
    let host: string;
    try {
      host = /^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? new URL(target).hostname : target.replace(/:\d+$/, '');
    } catch {
      return true;
    }
    return !CHROMIUM_SERVICE_HOSTS.has(host.toLowerCase());
  });
}
