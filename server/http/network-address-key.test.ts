// What a network address is counted as by the signup limit: an IPv6 client usually holds a whole
// /56 or /64, so its addresses share one count; an IPv4 client (also written IPv4-mapped) is itself.
import { describe, expect, it } from 'vitest';
import { networkAddressKey, routedNetworkKey } from './network-address-key.ts';

describe('networkAddressKey', () => {
  it('counts an IPv4 address as itself, however it is written', () => {
    expect(networkAddressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(networkAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(networkAddressKey('203.0.113.8')).not.toBe(networkAddressKey('203.0.113.7'));
  });

  it('counts every address of one IPv6 /56 as one, and another /56 apart', () => {
    const key = networkAddressKey('2001:db8:abcd:12ff:1:2:3:4');
    expect(key).toBe('2001:db8:abcd:1200::/56');
    expect(networkAddressKey('2001:db8:abcd:1200::9')).toBe(key);
    expect(networkAddressKey('2001:DB8:ABCD:12AB:ffff::1')).toBe(key);
    expect(networkAddressKey('2001:db8:abcd:1300::1')).not.toBe(key);
  });
});

describe('routedNetworkKey', () => {
  it('counts every /56 of one routed IPv6 /48 as one network, and an IPv4 address as itself', () => {
    const key = routedNetworkKey('2001:db8:abcd:12ff:1:2:3:4');
    expect(key).toBe('2001:db8:abcd::/48');
    expect(routedNetworkKey('2001:db8:abcd:ff00::1')).toBe(key);
    expect(routedNetworkKey('2001:db8:abce::1')).not.toBe(key);
    expect(routedNetworkKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });
});
