import { isLoopback } from '../../../src/http/metrics';

describe('who may read /metrics without a token', () => {
  it('is a client on a loopback address, IPv4, IPv6 or IPv4-mapped', () => {
    for (const address of ['127.0.0.1', '127.0.0.53', '::1', '::ffff:127.0.0.1']) expect(isLoopback(address)).toBe(true);
  });
  it('is no other client', () => {
    for (const address of [undefined, '', '10.0.0.5', '192.168.1.20', '::ffff:10.0.0.5', 'fe80::1', '1127.0.0.1', '::']) expect(isLoopback(address)).toBe(false);
  });
});
