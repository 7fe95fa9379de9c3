// Checks on how the servers are set up, from what they recorded in the store while serving
// (server/store/server-notices.ts): the report runs as its own process and cannot see a server's
// configuration or logs, but it reads the same database.
import type { ServerNotice } from '../../server/store/server-notices.ts';
import type { CheckStatus } from '../../server/mail/digest/presend-checks.ts';

export interface SetupCheck {
  id: 'trust-proxy';
  title: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

const minute = (at: Date) => `${at.toISOString().replace('T', ' ').slice(0, 16)} UTC`;

export function setupChecks(notices: readonly ServerNotice[]): SetupCheck[] {
  const proxy = notices.find((notice) => notice.name === 'trust-proxy');
  return [
    proxy
      ? {
          id: 'trust-proxy',
          title: 'TRUST_PROXY',
          status: 'fail',
          detail: `${proxy.detail} (first seen ${minute(proxy.firstSeenAt)}, last ${minute(proxy.lastSeenAt)})`,
          fix: 'Set TRUST_PROXY to the number of reverse proxies in front of the server and restart it; the check passes once a server with the setting sees a proxied request.',
        }
      : {
          id: 'trust-proxy',
          title: 'TRUST_PROXY',
          status: 'pass',
          detail: 'No server has seen a request through a proxy while TRUST_PROXY was 0: readers are told apart by their own network addresses.',
        },
  ];
}
