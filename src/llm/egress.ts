/**
 * The egress policy (ENDPOINT_ALLOW): which hosts endpoints may point at, for deployments whose
 * editors are not trusted to choose where the server connects. Entries are hostnames
 * (`gpu-1.example.org`), suffix wildcards (`*.example.org`: any name below it, not the name
 * itself), IP addresses and CIDR ranges, IPv4 and IPv6.
 *
 * Names say where an endpoint may point; addresses say where a connection may land. Every
 * connection is checked after DNS resolution: an address listed by an IP or CIDR entry is
 * allowed; a name allowed by a name entry may land on public addresses only, so a listed name
 * (or a wildcard a stranger can create names under) that resolves to a loopback, private or
 * link-local address is refused unless that address is listed too (DNS rebinding).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

export type LookupAll = (hostname: string) => Promise<LookupAddress[]>;

export class EgressDenied extends Error {
  readonly code = 'EGRESS_DENIED';
  constructor() {
    super('the address is outside the egress policy (ENDPOINT_ALLOW)');
    this.name = 'EgressDenied';
  }
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
  /** The entries as configured, for messages and logs. */
  readonly entries: readonly string[];
  /** Whether a URL's host may be registered: a listed name, a listed address, or a name resolving to a listed address. */
  allowsHost(host: string): Promise<boolean>;
  /** Whether a connection for `host` may land on `address` (after DNS resolution). */
  allowsConnection(host: string, address: string): boolean;
  /** Resolves `host` to the addresses a connection may use; throws EgressDenied when none. */
  resolve(host: string): Promise<LookupAddress[]>;
}

const systemLookup: LookupAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/**
 * Parses ENDPOINT_ALLOW (comma-separated; blanks ignored).
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

  const addressListed = (address: string): boolean => {
    const kind = family(address);
    return kind !== null && addresses.check(address, kind);
  };
  const nameListed = (host: string): boolean => names.has(host) || suffixes.some((suffix) => host.endsWith(suffix));

  const policy: EgressPolicy = {
    entries,
    allowsConnection(host, address) {
      if (addressListed(address)) return true;
      const name = normaliseHost(host);
      return family(name) === null && nameListed(name) && !isInternalAddress(address);
    },
    async allowsHost(host) {
      const name = normaliseHost(host);
      if (family(name) !== null) return addressListed(name);
      if (nameListed(name)) return true;
      if (!anyAddress) return false;
      try {
        return (await lookup(name)).some((a) => addressListed(a.address));
      } catch {
        return false;
      }
    },
    async resolve(host) {
      const name = normaliseHost(host);
      const found = family(name) !== null ? [{ address: name, family: isIP(name) }] : await lookup(name);
      const allowed = found.filter((a) => policy.allowsConnection(name, a.address));
      if (allowed.length === 0) throw new EgressDenied();
      return allowed;
    },
  };
  return policy;
}
