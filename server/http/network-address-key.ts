// What one client is, by its network address, for everything counted per client (the signup limit,
// a click's repeat window): an IPv4 address is itself, an IPv6 address its /56. A cap that one
// client must not get around by rotating addresses (the /go/ click cap) counts a routed site's
// whole IPv6 /48 instead.
import ipaddr from 'ipaddr.js';

// IPv6 clients usually hold a whole /56 or /64: counting single addresses would let one client
// rotate through billions of them, so an IPv6 address counts as its /56.
const IPV6_SUBNET_BYTES = 7;
// A /48 is what one site is routed, so everything a single client can reach on its own.
const IPV6_SITE_BYTES = 6;

function keyAtPrefix(ip: string, ipv6PrefixBytes: number): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.parse(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const ipv6 = address as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().toString();
  const bytes = ipv6.toByteArray().map((byte, index) => (index < ipv6PrefixBytes ? byte : 0));
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6PrefixBytes * 8}`;
}

/** What a network address is counted as: an IPv4 address itself, an IPv6 address its /56. */
export function networkAddressKey(ip: string): string {
  return keyAtPrefix(ip, IPV6_SUBNET_BYTES);
}

/** The network a cap counts: an IPv4 address itself, an IPv6 address its routed /48. */
export function routedNetworkKey(ip: string): string {
  return keyAtPrefix(ip, IPV6_SITE_BYTES);
}
