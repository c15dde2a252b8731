/**
 * The egress policy: where the server may connect for an endpoint. Two layers:
 *
 * - Always, whatever ENDPOINT_ALLOW says: no connection to this server's own ports (its HTTP
 *   port and its database's port) on an address of this machine, and, unless an ENDPOINT_ALLOW
 *   address or CIDR entry lists them, none to link-local addresses (169.254.0.0/16, fe80::/10)
 *   or cloud metadata services (169.254.169.254, fd00:ec2::254, metadata.google.internal and
 *   names resolving to those). No GPU server lives there, and connecting there lets anyone who
 *   may register an endpoint probe the machine and its cloud credentials. Loopback and private
 *   addresses stay allowed: that is where GPU servers live.
 * - ENDPOINT_ALLOW, when set, for deployments whose editors are not trusted to choose where
 *   the server connects. Entries are hostnames (`gpu-1.example.org`), suffix wildcards
 *   (`*.example.org`: any name below it, not the name itself), IP addresses and CIDR ranges,
 *   IPv4 and IPv6. Names say where an endpoint may point; addresses say where a connection may
 *   land: an address listed by an IP or CIDR entry is allowed; a name allowed by a name entry
 *   may land on public addresses only, so a listed name (or a wildcard a stranger can create
 *   names under) that resolves to a loopback, private or link-local address is refused unless
 *   that address is listed too.
 *
 * Every connection is checked after DNS resolution, at connect time (DNS rebinding: a name may
 * resolve elsewhere than it did at registration).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

export type LookupAll = (hostname: string) => Promise<LookupAddress[]>;

/** Why a destination is refused. */
export type EgressRefusal = 'OWN_PORT' | 'CLOUD_METADATA' | 'LINK_LOCAL' | 'NOT_ALLOWED';

/** What each refusal means, in words that name no address. */
export const EGRESS_REFUSALS: Readonly<Record<EgressRefusal, string>> = {
  OWN_PORT: "the address is this server's own HTTP or database port",
  CLOUD_METADATA: 'the address is a cloud metadata service',
  LINK_LOCAL: 'the address is link-local (169.254.0.0/16, fe80::/10)',
  NOT_ALLOWED: 'the address is outside the egress policy (ENDPOINT_ALLOW)',
};

export class EgressDenied extends Error {
  readonly code = 'EGRESS_DENIED';
  constructor(readonly refusal: EgressRefusal = 'NOT_ALLOWED') {
    super(EGRESS_REFUSALS[refusal]);
    this.name = 'EgressDenied';
  }
}

const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');

/** Cloud metadata services: AWS, Azure, GCP, Oracle (169.254.169.254), AWS over IPv6, Alibaba. */
const METADATA = new BlockList();
METADATA.addAddress('169.254.169.254', 'ipv4');
METADATA.addAddress('fd00:ec2::254', 'ipv6');
METADATA.addAddress('100.100.100.200', 'ipv4');

/** Names of metadata services that resolve only inside their cloud (and to the addresses above there). */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog']);

/** Addresses a listening socket of this machine answers on besides its interfaces' own. */
const THIS_MACHINE = new BlockList();
THIS_MACHINE.addSubnet('127.0.0.0', 8, 'ipv4');
THIS_MACHINE.addSubnet('0.0.0.0', 8, 'ipv4');
THIS_MACHINE.addAddress('::1', 'ipv6');
THIS_MACHINE.addAddress('::', 'ipv6');

/** Whether `address` reaches this machine: loopback, the unspecified address, or an interface's address. */
export function isThisMachine(address: string): boolean {
  const kind = family(address);
  if (kind === null) return false;
  if (THIS_MACHINE.check(address, kind)) return true;
  const own = new BlockList();
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) own.addAddress(i.address.replace(/%.*$/, ''), i.family === 'IPv6' ? 'ipv6' : 'ipv4');
  }
  return own.check(address, kind);
}

/** Addresses that are not on the public internet: loopback, private, link-local, CGNAT, multicast, reserved. */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv6');
}

function family(address: string): 'ipv4' | 'ipv6' | null {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : null;
}

/** `[::1]` (a URL's hostname) → `::1`; names lower-cased without a trailing dot. */
export function normaliseHost(host: string): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.$/, '');
}

export function isInternalAddress(address: string): boolean {
  const kind = family(address);
  return kind === null ? true : INTERNAL.check(address, kind);
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

function isHostname(name: string): boolean {
  return name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

export interface EgressPolicy {
  /** The ENDPOINT_ALLOW entries as configured, for messages and logs; empty when it is unset. */
  readonly entries: readonly string[];
  /**
   * Why a URL's host and port may not be registered, or null. A name is resolved, and refused
   * when any of its addresses is (a name that does not resolve is left to the probe).
   */
  refusalOf(host: string, port: number): Promise<EgressRefusal | null>;
  /** Whether a URL's host may be registered (see {@link refusalOf}). */
  allowsHost(host: string, port?: number): Promise<boolean>;
  /** Whether a connection for `host` (and `port`) may land on `address` (after DNS resolution). */
  allowsConnection(host: string, address: string, port?: number): boolean;
  /** Why a connection for `host` (and `port`) may not land on `address`, or null. */
  connectionRefusal(host: string, address: string, port?: number): EgressRefusal | null;
  /** Resolves `host` to the addresses a connection to `port` may use; throws EgressDenied when none. */
  resolve(host: string, port?: number): Promise<LookupAddress[]>;
  /** Adds a port of this server (HTTP, its database on this machine) that no endpoint may point at here. */
  protectPort(port: number): void;
}

const systemLookup: LookupAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/** The port a URL connects to: its own, else its scheme's. */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** The ENDPOINT_ALLOW part of a policy: which names and addresses are listed. */
interface AllowList {
  entries: readonly string[];
  /** Whether an IP or CIDR entry lists the address. */
  addressListed(address: string): boolean;
  /** Whether the name is listed (a hostname or a wildcard entry). */
  nameListed(name: string): boolean;
  /** Whether any IP or CIDR entry exists (a name resolving into one is allowed). */
  anyAddress: boolean;
}

/** The policy over `allow` (null: ENDPOINT_ALLOW unset, every host but the refused ones). */
function createPolicy(allow: AllowList | null, lookup: LookupAll): EgressPolicy {
  const ownPorts = new Set<number>();
  const listed = (address: string): boolean => allow !== null && allow.addressListed(address);

  const connectionRefusal = (host: string, address: string, port: number | undefined): EgressRefusal | null => {
    const kind = family(address);
    if (kind === null) return 'NOT_ALLOWED';
    if (port !== undefined && ownPorts.has(port) && isThisMachine(address)) return 'OWN_PORT';
    if (listed(address)) return null;
    if (METADATA.check(address, kind)) return 'CLOUD_METADATA';
    if (LINK_LOCAL.check(address, kind)) return 'LINK_LOCAL';
    if (allow === null) return null;
    const name = normaliseHost(host);
    return family(name) === null && allow.nameListed(name) && !isInternalAddress(address) ? null : 'NOT_ALLOWED';
  };

  const policy: EgressPolicy = {
    entries: allow?.entries ?? [],
    connectionRefusal,
    allowsConnection(host, address, port) {
      return connectionRefusal(host, address, port) === null;
    },
    async refusalOf(host, port) {
      const name = normaliseHost(host);
      if (family(name) !== null) return connectionRefusal(name, name, port);
      if (METADATA_NAMES.has(name)) return 'CLOUD_METADATA';
      let found: LookupAddress[];
      try {
        found = await lookup(name);
      } catch {
        // Unresolvable now: allowed by a name entry or without ENDPOINT_ALLOW; connections are checked again.
        return allow === null || allow.nameListed(name) ? null : 'NOT_ALLOWED';
      }
      for (const a of found) {
        const refusal = connectionRefusal(name, a.address, port);
        // A listed name may resolve to internal addresses here; connections land on its public ones only.
        if (refusal === 'NOT_ALLOWED' && allow !== null && allow.nameListed(name)) continue;
        if (refusal !== null && refusal !== 'NOT_ALLOWED') return refusal;
      }
      if (allow === null || allow.nameListed(name)) return null;
      return allow.anyAddress && found.some((a) => listed(a.address)) ? null : 'NOT_ALLOWED';
    },
    async allowsHost(host, port) {
      return (await policy.refusalOf(host, port ?? 0)) === null;
    },
    async resolve(host, port) {
      const name = normaliseHost(host);
      if (family(name) === null && METADATA_NAMES.has(name)) throw new EgressDenied('CLOUD_METADATA');
      const found = family(name) !== null ? [{ address: name, family: isIP(name) }] : await lookup(name);
      const refusals = found.map((a) => connectionRefusal(name, a.address, port));
      const allowed = found.filter((_a, i) => refusals[i] === null);
      if (allowed.length === 0) throw new EgressDenied(refusals.find((r) => r !== null && r !== 'NOT_ALLOWED') ?? 'NOT_ALLOWED');
      return allowed;
    },
    protectPort(port) {
      if (Number.isInteger(port) && port > 0) ownPorts.add(port);
    },
  };
  return policy;
}

/** The policy without ENDPOINT_ALLOW: any host, except this server's own ports, link-local addresses and metadata services. */
export function defaultEgressPolicy(lookup: LookupAll = systemLookup): EgressPolicy {
  return createPolicy(null, lookup);
}

/**
 * Parses ENDPOINT_ALLOW (comma-separated; blanks ignored) into a policy.
 * @throws Error naming every entry that is neither a hostname, a `*.suffix`, an address nor a CIDR range.
 */
export function parseEgressPolicy(spec: string, lookup: LookupAll = systemLookup): EgressPolicy {
  const names = new Set<string>();
  const suffixes: string[] = [];
  const addresses = new BlockList();
  let anyAddress = false;
  const problems: string[] = [];
  const entries = spec
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  for (const entry of entries) {
    const lower = normaliseHost(entry);
    const slash = lower.indexOf('/');
    if (slash >= 0) {
      const net = normaliseHost(lower.slice(0, slash));
      const bits = lower.slice(slash + 1);
      const kind = family(net);
      const max = kind === 'ipv4' ? 32 : 128;
      if (kind === null || !/^\d{1,3}$/.test(bits) || Number(bits) > max) {
        problems.push(kind === null ? `"${entry}" is not a hostname, *.suffix, IP address or CIDR range` : `"${entry}" is not a CIDR range`);
        continue;
      }
      addresses.addSubnet(net, Number(bits), kind);
      anyAddress = true;
    } else if (family(lower) !== null) {
      addresses.addAddress(lower, family(lower)!);
      anyAddress = true;
    } else if (lower.startsWith('*.') && isHostname(lower.slice(2))) {
      suffixes.push(lower.slice(1));
    } else if (isHostname(lower)) {
      names.add(lower);
    } else {
      problems.push(`"${entry}" is not a hostname, *.suffix, IP address or CIDR range`);
    }
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
  if (entries.length === 0) throw new Error('lists no host');

  return createPolicy(
    {
      entries,
      anyAddress,
      addressListed(address) {
        const kind = family(address);
        return kind !== null && addresses.check(address, kind);
      },
      nameListed: (host) => names.has(host) || suffixes.some((suffix) => host.endsWith(suffix)),
    },
    lookup,
  );
}
