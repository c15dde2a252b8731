import type { LookupAddress } from 'node:dns';
import { networkInterfaces } from 'node:os';
import { defaultEgressPolicy, EgressDenied, isInternalAddress, parseEgressPolicy } from '../../../src/llm/egress';

/** A resolver answering from a table, as DNS would for names the test owns. */
function table(entries: Record<string, string[]>) {
  return async (name: string): Promise<LookupAddress[]> => {
    const addresses = entries[name];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

describe('egress policy (ENDPOINT_ALLOW)', () => {
  const dns = table({
    'gpu-1.example.org': ['203.0.114.10'],
    'evil.tunnels.example.net': ['169.254.169.254'],
    'mixed.tunnels.example.net': ['127.0.0.1', '198.51.101.5'],
    'inside.corp': ['10.1.2.3'],
    'v6.corp': ['fd00::5'],
  });

  it('matches hostnames exactly, *.suffix below the suffix only, case and trailing dot ignored', async () => {
    const policy = parseEgressPolicy('gpu-1.example.org,*.tunnels.example.net', dns);
    expect(await policy.allowsHost('GPU-1.example.org.')).toBe(true);
    expect(await policy.allowsHost('gpu-2.example.org')).toBe(false);
    expect(await policy.allowsHost('a.tunnels.example.net')).toBe(true);
    expect(await policy.allowsHost('a.b.tunnels.example.net')).toBe(true);
    expect(await policy.allowsHost('tunnels.example.net')).toBe(false);
    expect(await policy.allowsHost('eviltunnels.example.net')).toBe(false);
    expect(await policy.allowsHost('10.1.2.3')).toBe(false);
  });

  it('matches IPv4 and IPv6 addresses and CIDR ranges, IPv4-mapped IPv6 included', async () => {
    const policy = parseEgressPolicy('10.0.0.0/8,192.0.2.7,fd00::/8,[2001:db8::1]', dns);
    expect(await policy.allowsHost('10.200.0.1')).toBe(true);
    expect(await policy.allowsHost('11.0.0.1')).toBe(false);
    expect(await policy.allowsHost('192.0.2.7')).toBe(true);
    expect(await policy.allowsHost('192.0.2.8')).toBe(false);
    expect(await policy.allowsHost('[fd12::1]')).toBe(true);
    expect(await policy.allowsHost('[fe80::1]')).toBe(false);
    expect(await policy.allowsHost('[2001:db8::1]')).toBe(true);
    expect(policy.allowsConnection('x', '::ffff:10.0.0.9')).toBe(true);
    // A name is allowed when it resolves into a listed range.
    expect(await policy.allowsHost('inside.corp')).toBe(true);
    expect(await policy.allowsHost('v6.corp')).toBe(true);
    expect(await policy.allowsHost('gpu-1.example.org')).toBe(false);
    expect(await policy.allowsHost('unknown.corp')).toBe(false);
  });

  it('lets a listed name land on public addresses only: DNS rebinding to an internal address is refused', async () => {
    const policy = parseEgressPolicy('*.tunnels.example.net,gpu-1.example.org', dns);
    await expect(policy.resolve('gpu-1.example.org')).resolves.toEqual([{ address: '203.0.114.10', family: 4 }]);
    await expect(policy.resolve('evil.tunnels.example.net')).rejects.toBeInstanceOf(EgressDenied);
    // Of a name with an internal and a public address, only the public one is offered.
    await expect(policy.resolve('mixed.tunnels.example.net')).resolves.toEqual([{ address: '198.51.101.5', family: 4 }]);
    await expect(policy.resolve('127.0.0.1')).rejects.toBeInstanceOf(EgressDenied);
    expect(policy.allowsConnection('gpu-1.example.org', '10.0.0.1')).toBe(false);
    // Listing the address allows it, whatever the name.
    const withAddress = parseEgressPolicy('*.tunnels.example.net,169.254.169.254', dns);
    await expect(withAddress.resolve('evil.tunnels.example.net')).resolves.toHaveLength(1);
  });

  it('knows the internal ranges', () => {
    for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect([address, isInternalAddress(address)]).toEqual([address, true]);
    }
    for (const address of ['8.8.8.8', '203.0.114.10', '2a00:1450:4001::200e']) {
      expect([address, isInternalAddress(address)]).toEqual([address, false]);
    }
  });

  it('refuses entries that are neither names, wildcards, addresses nor ranges', () => {
    expect(() => parseEgressPolicy('ok.example.org,10.0.0.0/33')).toThrow('"10.0.0.0/33" is not a CIDR range');
    expect(() => parseEgressPolicy('fd00::/129')).toThrow('is not a CIDR range');
    expect(() => parseEgressPolicy('http://x.example.org')).toThrow('is not a hostname');
    expect(() => parseEgressPolicy('*.*.example.org')).toThrow('is not a hostname');
    expect(() => parseEgressPolicy(' , ')).toThrow('lists no host');
  });
});

describe('the default egress policy (ENDPOINT_ALLOW unset)', () => {
  const dns = table({
    'gpu.lab': ['192.168.7.20'],
    'localhost': ['127.0.0.1', '::1'],
    'rebind.example.net': ['169.254.169.254'],
    'aws6.example.net': ['fd00:ec2::254'],
    'mixed.example.net': ['203.0.114.10', '169.254.10.1'],
  });

  it('allows loopback, private and public addresses: GPU servers live there', async () => {
    const policy = defaultEgressPolicy(dns);
    for (const host of ['127.0.0.1', '[::1]', '10.1.2.3', '192.168.7.20', '[fd12::1]', '8.8.8.8', 'gpu.lab', 'localhost']) {
      expect([host, await policy.refusalOf(host, 8000)]).toEqual([host, null]);
    }
    // A name that does not resolve now is left to the probe; connections are checked again.
    expect(await policy.refusalOf('not-yet.lab', 8000)).toBeNull();
  });

  it('refuses link-local addresses and cloud metadata services, by address, by name and by what a name resolves to', async () => {
    const policy = defaultEgressPolicy(dns);
    expect(await policy.refusalOf('169.254.169.254', 80)).toBe('CLOUD_METADATA');
    expect(await policy.refusalOf('[fd00:ec2::254]', 80)).toBe('CLOUD_METADATA');
    expect(await policy.refusalOf('100.100.100.200', 80)).toBe('CLOUD_METADATA');
    expect(await policy.refusalOf('metadata.google.internal', 80)).toBe('CLOUD_METADATA');
    expect(await policy.refusalOf('METADATA.google.internal.', 80)).toBe('CLOUD_METADATA');
    expect(await policy.refusalOf('rebind.example.net', 8000)).toBe('CLOUD_METADATA');
    expect(await policy.refusalOf('aws6.example.net', 8000)).toBe('CLOUD_METADATA');
    expect(await policy.refusalOf('169.254.10.1', 8000)).toBe('LINK_LOCAL');
    expect(await policy.refusalOf('[fe80::1]', 8000)).toBe('LINK_LOCAL');
    expect(await policy.refusalOf('[::ffff:169.254.10.1]', 8000)).toBe('LINK_LOCAL');
    expect(await policy.refusalOf('[::ffff:a9fe:a9fe]', 8000)).toBe('CLOUD_METADATA');
    // A name with a link-local address among others is refused at registration...
    expect(await policy.refusalOf('mixed.example.net', 8000)).toBe('LINK_LOCAL');
    // ...and connections for it land on its other addresses only.
    await expect(policy.resolve('mixed.example.net', 8000)).resolves.toEqual([{ address: '203.0.114.10', family: 4 }]);
  });

  it("refuses this server's own ports on every address of this machine, and only there", async () => {
    const policy = defaultEgressPolicy(dns);
    expect(await policy.refusalOf('127.0.0.1', 4000)).toBeNull();
    policy.protectPort(4000);
    policy.protectPort(5433);
    for (const host of ['127.0.0.1', '127.1.2.3', '[::1]', '0.0.0.0', 'localhost', '[::ffff:127.0.0.1]']) {
      expect([host, await policy.refusalOf(host, 4000)]).toEqual([host, 'OWN_PORT']);
      expect([host, await policy.refusalOf(host, 5433)]).toEqual([host, 'OWN_PORT']);
      expect([host, await policy.refusalOf(host, 4001)]).toEqual([host, null]);
    }
    for (const [name, list] of Object.entries(networkInterfaces())) {
      for (const i of list ?? []) {
        const address = i.address.replace(/%.*$/, '');
        expect([name, address, policy.connectionRefusal(address, address, 4000)]).toEqual([name, address, 'OWN_PORT']);
      }
    }
    // Another machine's port 4000 is another server.
    expect(await policy.refusalOf('192.168.7.20', 4000)).toBeNull();
    expect(await policy.refusalOf('gpu.lab', 4000)).toBeNull();
  });

  it('checks at connect time what a name resolves to then (DNS rebinding)', async () => {
    let answer = ['192.168.7.20'];
    const policy = defaultEgressPolicy(async () => answer.map((address) => ({ address, family: 4 })));
    expect(await policy.refusalOf('flip.example.net', 8000)).toBeNull();
    answer = ['169.254.169.254'];
    await expect(policy.resolve('flip.example.net', 8000)).rejects.toMatchObject({ refusal: 'CLOUD_METADATA' });
    policy.protectPort(8000);
    answer = ['127.0.0.1'];
    await expect(policy.resolve('flip.example.net', 8000)).rejects.toMatchObject({ refusal: 'OWN_PORT' });
  });

  it('holds under ENDPOINT_ALLOW too: own ports always, link-local and metadata unless an address entry lists them', async () => {
    const policy = parseEgressPolicy('127.0.0.0/8, 169.254.169.254, *.example.net', dns);
    policy.protectPort(4000);
    expect(await policy.refusalOf('127.0.0.1', 8000)).toBeNull();
    expect(await policy.refusalOf('127.0.0.1', 4000)).toBe('OWN_PORT');
    expect(await policy.refusalOf('169.254.169.254', 80)).toBeNull();
    expect(await policy.refusalOf('169.254.10.1', 80)).toBe('LINK_LOCAL');
    expect(await policy.refusalOf('metadata.google.internal', 80)).toBe('CLOUD_METADATA');
    expect(await policy.refusalOf('192.168.7.20', 80)).toBe('NOT_ALLOWED');
  });
});
