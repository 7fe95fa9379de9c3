// What one client is, by its network address, for everything counted per client (the signup limit,
// a click's repeat window): an IPv4 address is itself, an IPv6 address its /56.
import ipaddr from 'ipaddr.js';

// IPv6 clients usually hold a whole /56 or /64: counting single addresses would let one client
// rotate through billions of them, so an IPv6 address counts as its /56.
const IPV6_SUBNET_BYTES = 7;

/** What a network address is counted as: an IPv4 address itself, an IPv6 address its /56. */
export function networkAddressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.parse(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const ipv6 = address as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().toString();
  const bytes = ipv6.toByteArray().map((byte, index) => (index < IPV6_SUBNET_BYTES ? byte : 0));
  return `${ipaddr.fromByteArray(bytes).toString()}/56`;
}
